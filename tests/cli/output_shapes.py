"""The documented JSON shapes of every command's output, and a checker: shared by
``test_json_contract.py`` and the Spark tests that see the results only a Spark job produces
(``compact``'s result)."""
from __future__ import annotations

from typing import Any

# -- value kinds -------------------------------------------------------------------------------------------

class Opt:
    """A value of ``spec``, or null."""

    def __init__(self, spec: Any):
        self.spec = spec


class Map:
    """An object with any keys, each value of ``spec``."""

    def __init__(self, spec: Any):
        self.spec = spec


ANY = object()  # any JSON value (a partition value in the spec's single-value JSON form)
SPEC_JSON = dict  # a schema, partition spec or sort order in the spec's JSON form (Appendix C)
NUMBER = (int, float)

# What a mutating command sends (or would send): the REST spec's TableRequirement and TableUpdate
# objects. A snapshot that only the commit writes is null before it.
COMMIT = {"requirements": [dict], "updates": [dict]}
REF = {"name": str, "type": str, "snapshot_id": int, "min_snapshots_to_keep": Opt(int),
       "max_snapshot_age_ms": Opt(int), "max_ref_age_ms": Opt(int)}
CREATED = {"name": str, "location": str, "metadata_location": Opt(str), "format_version": int,
           "table_uuid": Opt(str), "schema": SPEC_JSON, "partition_spec": SPEC_JSON, "sort_order": SPEC_JSON,
           "properties": Map(str), "dry_run": bool, "applied": bool, "commits": [COMMIT]}
LISTING = {"catalog": str, "namespaces": [str], "tables": [str], "views": [str]}
REPRESENTATION = {"type": str, "dialect": Opt(str), "sql": Opt(str)}
VIEW_DESCRIBE = {"name": str, "kind": str, "catalog": str, "view_uuid": str, "format_version": int, "location": str,
                 "metadata_location": str, "current_version_id": int, "default_catalog": Opt(str),
                 "default_namespace": [str], "sql": [REPRESENTATION], "schema": Opt(SPEC_JSON),
                 "properties": Map(str),
                 "versions": [{"version_id": int, "timestamp_ms": int, "schema_id": int, "current": bool,
                               "default_catalog": Opt(str), "default_namespace": [str], "summary": Map(str),
                               "representations": [REPRESENTATION]}],
                 "version_log": [{"timestamp_ms": int, "version_id": int}]}
VIEW_DROP = {"view": str, "kind": str, "catalog": str, "location": str, "metadata_location": str, "dry_run": bool,
             "applied": bool, "commits": [COMMIT]}
CATALOGS = {"config_file": Opt(str), "resolved": Opt(str),
            "catalogs": [{"name": str, "type": str, "uri": Opt(str), "warehouse": Opt(str), "source": str,
                          "resolved": bool, "properties": Map(str)}]}
CURRENT_SNAPSHOT = {"snapshot_id": int, "parent_snapshot_id": Opt(int), "sequence_number": int, "timestamp_ms": int,
                    "committed_at": str, "operation": str, "schema_id": Opt(int), "manifest_list": str,
                    "summary": Map(str), "first_row_id": Opt(int), "added_rows": Opt(int)}
TOTALS = {"data_files": int, "delete_files": int, "position_delete_files": int, "equality_delete_files": int,
          "deletion_vectors": int, "records": int, "position_delete_records": int, "equality_delete_records": int,
          "data_bytes": Opt(int), "delete_bytes": int}
DESCRIBE = {"name": str, "table_uuid": str, "location": str, "metadata_location": str, "format_version": int,
            "last_updated_ms": int, "last_sequence_number": int, "last_column_id": int, "next_row_id": Opt(int),
            "current_schema_id": int, "schema": SPEC_JSON, "schemas": [SPEC_JSON], "default_spec_id": int,
            "partition_specs": [SPEC_JSON], "default_sort_order_id": int, "sort_orders": [SPEC_JSON],
            "properties": Map(str), "refs": [REF], "current_snapshot": Opt(CURRENT_SNAPSHOT), "totals": TOTALS,
            "snapshots": int, "snapshot_log_size": int, "metadata_log_size": int,
            "statistics": [{"snapshot_id": int, "statistics_path": str, "file_size_in_bytes": int,
                            "file_footer_size_in_bytes": Opt(int),
                            "blobs": [{"type": str, "snapshot_id": Opt(int), "sequence_number": Opt(int),
                                       "fields": [int], "columns": [Opt(str)], "properties": Map(str)}]}],
            "partition_statistics": [{"snapshot_id": int, "statistics_path": str, "file_size_in_bytes": int}]}
SNAPSHOT = {"snapshot_id": int, "parent_snapshot_id": Opt(int), "timestamp_ms": int, "committed_at": str,
            "operation": Opt(str), "sequence_number": int, "schema_id": Opt(int), "added_data_files": Opt(int),
            "removed_data_files": Opt(int), "added_delete_files": Opt(int), "removed_delete_files": Opt(int),
            "added_records": Opt(int), "removed_records": Opt(int), "refs": [str], "is_current": bool,
            "in_main": bool, "manifest_list": Opt(str), "summary": Map(str), "first_row_id": Opt(int),
            "added_rows": Opt(int)}
RUN: dict[str, Any] = {}
TREE_SNAPSHOT = {"snapshot_id": int, "parent_snapshot_id": Opt(int), "sequence_number": int, "operation": Opt(str),
                 "committed_at": str, "branches": [str], "tags": [str], "forks": [RUN]}
RUN["snapshots"] = [TREE_SNAPSHOT]
TREE = {"roots": [RUN]}
FILE = {"content": str, "file_path": str, "file_format": str, "spec_id": int, "partition": Map(ANY),
        "record_count": int, "file_size_in_bytes": int, "data_sequence_number": Opt(int),
        "file_sequence_number": Opt(int), "snapshot_id": Opt(int), "status": str, "first_row_id": Opt(int),
        "referenced_data_file": Opt(str), "content_offset": Opt(int), "content_size_in_bytes": Opt(int),
        "equality_ids": Opt([int])}
VALIDATE = {"table": str, "metadata_location": Opt(str), "format_version": Opt(int), "deep": bool,
            "all_snapshots": bool, "ok": bool, "errors": int, "warnings": int,
            "checked": {"snapshots": int, "manifest_lists": int, "manifests": int, "entries": int, "files": int},
            "seconds": NUMBER, "findings": [{"severity": str, "code": str, "rule": str, "message": str,
                                             "file": Opt(str), "snapshot_id": Opt(int), "manifest": Opt(str),
                                             "entry": Opt(int), "fix": Opt(str)}]}
RECOVERY = {"table": str, "metadata_location": str, "broken": Opt(str), "table_uuid": Opt(str),
            "restore_from": Opt(str), "restore_from_version": int, "restore_from_timestamp_ms": Opt(int),
            "current_snapshot_id_after": Opt(int), "refs_after": Map(int), "schema_id_after": Opt(int),
            "checked_files": int, "missing_files": [{"path": str, "kind": str, "snapshot_id": int}],
            "candidates": [{"location": str, "version": int, "found_in": str, "table_uuid": Opt(str),
                            "problem": Opt(str)}],
            "dry_run": bool, "applied": bool, "new_metadata_location": Opt(str)}
FAILED_DELETE = {"path": str, "error": str}
SKIPPED_FOR_SAFETY = {"path": str, "reason": str}  # a file the path guard (icectl.io.safety) refused
EXPIRE = {"table": str, "dry_run": bool, "applied": bool, "expired_snapshot_ids": [int],
          "retained_snapshot_ids": [int], "removed_refs": [str], "removed_schema_ids": [int],
          "removed_spec_ids": [int], "metadata_location": Opt(str),
          "deleted_files": [{"path": str, "kind": str, "size": Opt(int)}], "failed_deletes": [FAILED_DELETE],
          "skipped_outside_location": [str], "skipped_for_safety": [SKIPPED_FOR_SAFETY],
          "counts": {"deleted_data_files_count": int, "deleted_position_delete_files_count": int,
                     "deleted_equality_delete_files_count": int, "deleted_manifest_files_count": int,
                     "deleted_manifest_lists_count": int, "deleted_statistics_files_count": int},
          "bytes": Map(int), "explain": Opt([{"snapshot_id": int, "reasons": [str]}]), "older_than_ms": Opt(int),
          "older_than": str, "commits": [COMMIT]}
ORPHANS = {"table": str, "location": str, "dry_run": bool, "applied": bool, "older_than_ms": int,
           "listed_files": int, "too_new": int, "orphan_files": [str], "orphan_bytes": int, "deleted_files": [str],
           "failed_deletes": [FAILED_DELETE], "prefix_mismatches": [{"listed": str, "reachable": str}],
           "skipped_for_safety": [SKIPPED_FOR_SAFETY], "commits": [COMMIT]}
QUARANTINED_FILE = {"original": str, "quarantine": str, "size": int, "mtime_ms": Opt(int), "moved_at_ms": int,
                    "run_id": str}
QUARANTINE = {"table": str, "action": str, "quarantine": str, "run_id": Opt(str), "dry_run": bool, "applied": bool,
              "older_than_ms": Opt(int), "listed_files": Opt(int), "too_new": Opt(int), "files": [QUARANTINED_FILE],
              "bytes": int, "not_restored": [{"path": str, "reason": str}], "failed": [FAILED_DELETE],
              "skipped_for_safety": [SKIPPED_FOR_SAFETY], "commits": [COMMIT]}
REF_CHANGE = {"table": str, "action": str, "dry_run": bool, "applied": bool, "metadata_location": Opt(str),
              "refs_before": Map(int), "refs_after": Map(Opt(int)), "current_snapshot_id": Opt(int),
              "impact": Opt({"branch": str, "from_snapshot_id": Opt(int), "to_snapshot_id": int,
                             "leaving_history": [int], "joining_history": [int], "data_files_added": int,
                             "data_files_removed": int, "records_added": int, "records_removed": int}),
              "commits": [COMMIT]}
COMPACT_PLAN = {"table": str, "branch": str, "starting_snapshot_id": Opt(int), "target_file_size": int,
                "min_file_size": int, "max_file_size": int, "live_data_files": int, "input_files": int,
                "input_bytes": int, "groups": [{"group_id": int, "partition": str, "files": int, "bytes": int,
                                                "records": int, "delete_files": int, "expected_output_files": int}],
                "spark_submit": Opt([str]), "dry_run": bool, "applied": bool, "commits": [COMMIT]}
COMPACT_RESULT = {"table": str, "dry_run": bool, "applied": bool, "committed": [str], "rewritten_data_files": int,
                  "added_data_files": int, "removed_delete_files": int, "rewritten_bytes": int, "added_bytes": int,
                  "failed_groups": [{"group_id": int, "error": str}], "log_file": Opt(str), "commits": [COMMIT]}
REWRITE_DELETES = {"table": str, "branch": str, "format_version": int, "dangling_delete_files": [str],
                   "position_delete_files_to_merge": int, "partitions_to_merge": int,
                   "position_delete_files_to_convert": int, "deletion_vectors_to_merge": int,
                   "equality_delete_files": int,
                   "equality_rewrite": Opt({"data_files": int, "groups": int, "bytes": int}),
                   "dry_run": bool, "applied": bool,
                   "result": Opt({"committed": [str],
                                  "equality_rewrite": Opt({"rewritten_data_files": int, "removed_delete_files": int}),
                                  "dangling_removed": int, "merged_inputs": int, "merged_outputs": int,
                                  "converted_to_dvs": int, "deletion_vectors_written": int}),
                   "commits": [COMMIT]}
UPGRADE = {"plan": {"table": str, "metadata_location": str, "catalog": str, "from_version": int, "to_version": int,
                    "steps": [{"from_version": int, "to_version": int, "changes": [str], "allows": [str],
                               "forbids": [str]}],
                    "found": [str], "blockers": [{"code": str, "message": str, "hint": Opt(str)}],
                    "readers": [{"reader": str, "reads": bool, "note": str}]},
           "dry_run": bool, "applied": bool, "metadata_location": Opt(str), "commits": [COMMIT]}
REGISTER = {"plan": {"table": str, "catalog": str, "metadata_location": str, "format_version": int,
                     "location": Opt(str), "table_uuid": Opt(str), "snapshots": int, "current_snapshot_id": Opt(int)},
            "dry_run": bool, "applied": bool, "registered": bool, "commits": [COMMIT]}
TABLE_STATE = {"schema": SPEC_JSON, "partition_spec": SPEC_JSON, "sort_order": SPEC_JSON, "properties": Map(str)}
ALTER = {"table": str, "dry_run": bool, "applied": bool, "metadata_location": Opt(str), "changes": [str],
         "before": TABLE_STATE, "after": TABLE_STATE, "commits": [COMMIT]}
PROPERTIES = {"table": str, "properties": Map(str)}

DEMO = {"table": str, "location": str, "metadata_location": str, "format_version": int,
        "snapshots": [{"snapshot_id": int, "parent_snapshot_id": Opt(int), "operation": str, "timestamp_ms": int,
                       "committed_at": str, "branch": Opt(str), "refs": [str], "records": int, "description": str}],
        "data_files": int, "delete_files": int, "records": int,
        "refs": [{"name": str, "type": str, "snapshot_id": int, "records": int}], "staged_snapshot_id": int,
        "wap_id": str, "schema_ids": [int], "added_column": str, "orphan_files": [str], "orphan_age_days": Opt(int),
        "try_commands": [{"command": str, "why": str}], "commits": [COMMIT]}

DROP = {"table": str, "catalog": str, "location": str, "metadata_location": str, "purge": bool,
        "purged_by": Opt(str), "dry_run": bool, "applied": bool,
        "files": [{"path": str, "kind": str, "size": Opt(int)}], "counts": Map(int), "bytes": int, "deleted": int,
        "failed_deletes": [FAILED_DELETE], "still_present": Opt([str]), "kept_files": [str],
        "skipped_outside_location": [str], "skipped_for_safety": [SKIPPED_FOR_SAFETY], "commits": [COMMIT]}
RENAME = {"source": str, "destination": str, "catalog": str, "location": str, "metadata_location": str,
          "dry_run": bool, "applied": bool, "commits": [COMMIT]}
NAMESPACE_LIST = {"catalog": str, "parent": Opt(str), "namespaces": [str]}
NAMESPACE_CHANGE = {"action": str, "namespace": str, "catalog": str, "properties": Map(str), "dry_run": bool,
                    "applied": bool, "commits": [COMMIT]}
NAMESPACE_PROPERTIES = {"namespace": str, "catalog": str, "properties": Map(str), "updated": [str], "removed": [str],
                        "missing": [str], "dry_run": bool, "applied": bool, "commits": [COMMIT]}
REWRITE_MANIFESTS = {"table": str, "starting_snapshot_id": Opt(int), "spec_id": int, "target_size_bytes": int,
                     "groups": [{"content": str, "manifests": int, "bytes": int, "target_manifests": int,
                                 "rewrite": bool}],
                     "rewritten_manifests": [str], "added_manifests": [str], "kept_manifests": int, "entries": int,
                     "snapshot_id": Opt(int), "metadata_location": Opt(str), "dry_run": bool, "applied": bool,
                     "commits": [COMMIT]}
DIFF_SIDE = {"spec": str, "kind": str, "snapshot_id": Opt(int), "snapshot_timestamp_ms": Opt(int),
             "metadata_location": str}
CHANGE_COUNTS = {"data_files_added": int, "data_files_removed": int, "delete_files_added": int,
                 "delete_files_removed": int, "records_added": int, "records_removed": int,
                 "delete_records_added": int, "delete_records_removed": int, "bytes_added": int, "bytes_removed": int}
DIFF_FILE = {"content": str, "file_path": str, "file_format": str, "spec_id": int, "partition": Map(ANY),
             "record_count": int, "file_size_in_bytes": int, "data_sequence_number": Opt(int),
             "snapshot_id": Opt(int), "referenced_data_file": Opt(str), "content_offset": Opt(int),
             "content_size_in_bytes": Opt(int)}
VALUE_CHANGE = {"before": ANY, "after": ANY}
DIFF = {"table": str, "a": DIFF_SIDE, "b": DIFF_SIDE, "summary_only": bool, "totals": CHANGE_COUNTS,
        "partitions": Opt([{**CHANGE_COUNTS, "spec_id": int, "partition": Map(ANY)}]),
        "added_files": Opt([DIFF_FILE]), "removed_files": Opt([DIFF_FILE]), "format_version": Opt(VALUE_CHANGE),
        "schema": Opt({"from_schema_id": Opt(int), "to_schema_id": Opt(int),
                       "changes": [{"field_id": int, "name": str, "change": str, "before": ANY, "after": ANY}]}),
        "partition_spec": Opt(VALUE_CHANGE), "sort_order": Opt(VALUE_CHANGE),
        "properties": [{"key": str, "change": str, "before": Opt(str), "after": Opt(str)}],
        "location": Opt(VALUE_CHANGE),
        "refs": [{"name": str, "type": str, "change": str, "from_snapshot_id": Opt(int), "to_snapshot_id": Opt(int)}],
        "manifests": {"a": int, "b": int, "shared": int, "read": int}}
RESTORE = {"table": str, "metadata_location": str, "restore_from": str, "restore_from_version": int,
           "restore_from_timestamp_ms": int, "dry_run": bool, "applied": bool, "new_metadata_location": Opt(str),
           "current_snapshot_id_before": Opt(int), "current_snapshot_id_after": Opt(int), "refs_before": Map(int),
           "refs_after": Map(int), "changes": [str], "checked_files": int,
           "missing_files": [{"path": str, "kind": str, "snapshot_id": int}], "not_restored_snapshots": [int],
           "diff": Opt(DIFF), "commits": [COMMIT]}
METRICS = {"data_files": int, "data_bytes": int, "records": int, "target_file_size": int, "small_files": int,
           "small_file_ratio": NUMBER, "delete_files": int, "delete_records": int, "delete_file_ratio": NUMBER,
           "delete_record_ratio": NUMBER, "manifests": int, "data_manifests": int, "delete_manifests": int,
           "manifest_bytes": int, "manifest_target_size": int, "small_manifests": int, "snapshots": int,
           "expirable_snapshots": int, "oldest_snapshot_age_ms": Opt(int), "maintenance_age_ms": Opt(int),
           "max_snapshot_age_ms": int,
           "metadata_size": Opt(int), "metadata_log_entries": int, "previous_versions_max": int, "partitions": int,
           "partition_skew": Opt(NUMBER), "statistics_files": int, "statistics_snapshots_behind": Opt(int),
           "statistics_age_ms": Opt(int), "orphan_files": Opt(int), "orphan_bytes": Opt(int)}
HEALTH = {"tables": [{"table": str, "metadata_location": Opt(str), "format_version": Opt(int), "status": str,
                      "metrics": Opt(METRICS),
                      "findings": [{"check": str, "severity": str, "message": str, "step": Opt(str),
                                    "command": Opt(str)}],
                      "steps": [str], "error": Opt(str), "seconds": NUMBER, "rank": Opt(int), "score": Opt(NUMBER)}],
          "worst": str, "exit_code": int, "counts": Map(int), "catalog": Opt(str), "ranked": bool}
MAINTAIN = {"dry_run": bool, "applied": bool, "budget_seconds": Opt(NUMBER), "budget_exhausted": bool,
            "seconds": NUMBER,
            "tables": [{"table": str, "status": str, "health_before": Opt(str), "health_after": Opt(str),
                        "steps": [{"step": str, "command": Opt(str), "status": str, "reason": str, "seconds": NUMBER,
                                   "summary": Map(int), "error": Opt(str), "commits": [COMMIT]}],
                        "locked_by": Opt(str), "error": Opt(str), "seconds": NUMBER}],
            "failed": [str], "commits": [COMMIT], "left_for_next_run": [str], "not_maintained": [str],
            "catalog": Opt(str)}
# -o jsonl: a line per table (an element of "tables" above), as each is done, then this summary line.
HEALTH_SUMMARY = {"summary": bool, "command": str, "tables": int, "worst": str, "exit_code": int,
                  "counts": Map(int), "catalog": Opt(str)}
MAINTAIN_SUMMARY = {"summary": bool, "command": str, "dry_run": bool, "applied": bool,
                    "budget_seconds": Opt(NUMBER), "budget_exhausted": bool, "seconds": NUMBER, "tables": int,
                    "counts": Map(int), "failed": [str], "not_maintained": [str], "exit_code": int,
                    "catalog": Opt(str)}

PROBLEM = {"path": str, "kind": str, "problem": str, "records": Opt(int), "bytes": Opt(int)}
REF_REPAIR = {"ref": str, "ref_type": str, "snapshot_id": int, "operation": Opt(str), "problems": [PROBLEM],
              "removed_files": [{"path": str, "kind": str, "records": int, "bytes": int, "reason": str}],
              "rebuilt_manifests": [{"manifests": [str], "content": str, "spec_id": int, "recorded_files": Opt(int),
                                     "recorded_records": Opt(int), "recovered_files": int, "recovered_records": int,
                                     "lost_files": Opt(int), "lost_records": Opt(int), "sources": [str]}],
              "records_lost": int, "bytes_lost": int, "delete_records_dropped": int, "unrepairable": Opt(str),
              "new_snapshot_id": Opt(int),
              "manifest_list": Opt({"snapshot_id": int, "manifest_list": str, "parent_snapshot_id": Opt(int),
                                    "parent_list": str, "parent_manifests_kept": int, "parent_manifests_replaced": int,
                                    "snapshot_manifests": [str],
                                    "checks": [{"key": str, "recorded": int, "rebuilt": int}],
                                    "complete": bool, "unaccounted": [str], "may_be_missing": [str]})}
REPAIR = {"table": str, "all_refs": bool, "refs": [REF_REPAIR], "statistics": [PROBLEM], "records_lost": int,
          "bytes_lost": int, "unrepairable": [str], "metadata_location": Opt(str), "dry_run": bool, "applied": bool,
          "commits": [COMMIT], "metrics": [{"path": str, "manifest": str,
                                            "differences": [{"code": str, "message": str}]}],
          "metrics_files_checked": int, "metrics_snapshot_id": Opt(int),
          "duplicates": [{"path": str, "kind": str, "entries": [
              {"manifest": str, "position": int, "data_sequence_number": Opt(int), "spec_id": int, "partition": str,
               "record_count": int, "file_size_in_bytes": int, "kept": bool}],
              "conflicts": [str], "records_counted_twice": int, "unrepairable": Opt(str)}],
          "duplicates_entries_checked": int, "duplicates_snapshot_id": Opt(int), "kinds": [str]}
RELOCATION = {"source_metadata_location": str, "source_prefix": str, "target_prefix": str, "format_version": int,
              "metadata_location": str, "start_version": Opt(str), "end_version": str, "metadata_files": int,
              "manifest_lists": int, "manifests": int, "position_delete_files": int, "statistics_files": int,
              "copied_as_is": int, "copy_plan": Opt(str), "copy_plan_rows": int, "copy_bytes": Opt(int),
              "copied_files": int, "copied_bytes": int, "note": Opt(str), "dry_run": bool, "applied": bool,
              "commits": [COMMIT]}
NDV_COLUMN = {"name": str, "field_id": int, "type": str, "ndv": Opt(int), "estimate": Opt(NUMBER),
              "lower_bound": Opt(NUMBER), "upper_bound": Opt(NUMBER)}
COMPUTE_STATS = {"table": str, "snapshot_id": int, "sequence_number": int, "schema_id": Opt(int),
                 "columns": [NDV_COLUMN], "data_files": int, "delete_files": int, "data_bytes": int,
                 "statistics_path": str, "replaces": Opt(str), "rows": Opt(int), "statistics": Opt(dict),
                 "spark_command": Opt([str]), "metadata_location": Opt(str), "dry_run": bool, "applied": bool,
                 "commits": [COMMIT]}
PARTITION_STATS = {"table": str, "snapshot_id": int,
                   "partition_type": [{"field-id": int, "name": str, "type": str}], "manifests": int,
                   "partitions": [{"partition": Map(ANY), "spec_id": int, "data_record_count": int,
                                   "data_file_count": int, "total_data_file_size_in_bytes": int,
                                   "position_delete_record_count": int, "position_delete_file_count": int,
                                   "equality_delete_record_count": int, "equality_delete_file_count": int,
                                   "total_record_count": Opt(int), "last_updated_at": Opt(int),
                                   "last_updated_snapshot_id": Opt(int), "dv_count": int}],
                   "statistics_path": Opt(str), "existing": Opt(str), "statistics": Opt(dict),
                   "metadata_location": Opt(str), "dry_run": bool, "applied": bool, "commits": [COMMIT]}

MIGRATE = {"source": str, "target": str, "dry_run": bool, "applied": bool, "keep_source": bool,
           "namespaces_created": [str],
           "entries": [{"kind": str, "name": str, "action": str, "outcome": Opt(str),
                        "source_metadata_location": Opt(str), "target_metadata_location": Opt(str),
                        "detail": Opt(str), "exit_code": Opt(int)}],
           "counts": Map(int)}

# docs/reference/json-output.md (generated from the result types: tools/gendocs/json_shapes.py) names each
# shape by the command (and option) that prints it; test_json_contract.py checks the two agree.
SIZE_BIN = {"lower": int, "upper": Opt(int), "kind": str, "files": int, "bytes": int}
PROFILE = {"table": str, "metadata_location": Opt(str), "format_version": int, "snapshot_id": Opt(int),
           "file_sizes": {"target_file_size": int, "min_file_size": int, "max_file_size": int, "data_files": int,
                          "data_bytes": int, "small_files": int, "large_files": int, "median_file_size": Opt(int),
                          "bins": [SIZE_BIN]},
           "days": [{"day": str, "snapshots": int, "operations": Map(int), "added_data_files": int,
                     "added_delete_files": int, "added_records": int, "removed_records": int, "added_bytes": int}],
           "partitions": [{"spec_id": int, "partition": str, "data_files": int, "data_bytes": int, "records": int,
                           "delete_files": int, "delete_records": int, "delete_bytes": int}],
           "partition_skew": Opt(NUMBER),
           "timeline": [{"snapshot_id": int, "parent_snapshot_id": Opt(int), "timestamp_ms": int, "committed_at": str,
                         "operation": Opt(str), "sequence_number": int, "added_records": Opt(int),
                         "removed_records": Opt(int), "total_records": Opt(int), "refs": [str], "branches": [str]}],
           "refs": [{"name": str, "type": str, "snapshot_id": int}]}
PROFILE_RESULT = {"table": str, "charts": [str], "profile": PROFILE}
# report --html: the page written, its charts, the profile they draw and validate's report on the page.
REPORT = {"table": str, "html": str, "charts": [str], "profile": PROFILE, "validation": VALIDATE}

# list --all: one entry per table, then per view (an array with -o json, an object a line with -o jsonl);
# kind is "table" or "view" (a table's current version fields are null, a view's snapshot fields);
# every value but kind, name and namespace is null when the metadata could not be read, and error says why.
INVENTORY_ENTRY = {"kind": str, "name": str, "namespace": str, "format_version": Opt(int), "location": Opt(str),
                   "current_snapshot_id": Opt(int), "current_snapshot_timestamp_ms": Opt(int),
                   "metadata_location": Opt(str), "last_updated_ms": Opt(int),
                   "error": Opt({"kind": str, "type": str, "message": str, "exit_code": int}),
                   "current_version_id": Opt(int), "current_version_timestamp_ms": Opt(int)}

# Shapes documented on a page of docs/ rather than in README.md: name -> (shape, page).
DOCS_SHAPES: dict[str, Any] = {"list --all": ([INVENTORY_ENTRY], "docs/inventory.md")}

SHAPES: dict[str, Any] = {
    "create": CREATED, "list": LISTING, "catalogs": CATALOGS, "describe": DESCRIBE, "snapshots": [SNAPSHOT], "snapshots --tree": TREE,
    "files": [FILE], "refs": [REF], "validate": VALIDATE, "expire": EXPIRE, "remove-orphans": ORPHANS,
    "remove-orphans --quarantine, --restore-quarantine, --purge-quarantine": QUARANTINE,
    "rollback, cherry-pick, branch, tag": REF_CHANGE, "compact (plan)": COMPACT_PLAN,
    "compact (result)": COMPACT_RESULT, "rewrite-deletes": REWRITE_DELETES, "upgrade-format": UPGRADE,
    "register": REGISTER, "demo": DEMO, "alter, properties set, properties unset": ALTER, "properties": PROPERTIES,
    "drop": DROP, "rename": RENAME, "namespace list": NAMESPACE_LIST,
    "namespace create, namespace drop": NAMESPACE_CHANGE, "namespace properties": NAMESPACE_PROPERTIES,
    "rewrite-manifests": REWRITE_MANIFESTS, "diff": DIFF, "restore": RESTORE,
    "restore (broken current metadata)": RECOVERY, "repair": REPAIR,
    "rewrite-table-path": RELOCATION, "compute-stats": COMPUTE_STATS, "compute-partition-stats": PARTITION_STATS,
    "rewrite-manifests": REWRITE_MANIFESTS, "diff": DIFF, "restore": RESTORE, "health": HEALTH,
    "maintain": MAINTAIN, "compute-stats": COMPUTE_STATS, "compute-partition-stats": PARTITION_STATS,
    "health -o jsonl (last line)": HEALTH_SUMMARY, "maintain -o jsonl (last line)": MAINTAIN_SUMMARY,
    "migrate": MIGRATE, "profile": PROFILE_RESULT, "report": REPORT,
    "describe (a view)": VIEW_DESCRIBE, "drop (a view)": VIEW_DROP,
}


def check_shape(value: Any, spec: Any, where: str = "$") -> None:
    """Raise AssertionError naming the first place where ``value`` is not of ``spec``."""
    if spec is ANY:
        return
    if isinstance(spec, Opt):
        if value is not None:
            check_shape(value, spec.spec, where)
        return
    if isinstance(spec, Map):
        assert isinstance(value, dict), f"{where}: expected an object, got {value!r}"
        for k, v in value.items():
            check_shape(v, spec.spec, f"{where}.{k}")
        return
    if isinstance(spec, dict) and spec is not SPEC_JSON:
        assert isinstance(value, dict), f"{where}: expected an object, got {value!r}"
        assert set(value) == set(spec), (f"{where}: keys differ: extra {sorted(set(value) - set(spec))}, "
                                         f"missing {sorted(set(spec) - set(value))}")
        for k, s in spec.items():
            check_shape(value[k], s, f"{where}.{k}")
        return
    if isinstance(spec, list):
        assert isinstance(value, list), f"{where}: expected a list, got {value!r}"
        for i, v in enumerate(value):
            check_shape(v, spec[0], f"{where}[{i}]")
        return
    types = spec if isinstance(spec, tuple) else (spec,)
    assert isinstance(value, types) and not (isinstance(value, bool) and bool not in types), \
        f"{where}: expected {' or '.join(t.__name__ for t in types)}, got {value!r}"
