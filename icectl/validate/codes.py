"""The codes of ``validate``'s findings: each with its severity, the rule it breaks (a section of
the spec or of the v4 walk-through in ``shared/seeds``) and what it means. docs/reference/validation-codes.md
is generated from this table (``python -m tools.gendocs``). Errors break a rule a reader relies on; warnings break a
"should" or are suspicious but readable.
"""
from __future__ import annotations

from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"  # nothing is wrong for a reader; something optional is missing


E, W, N = Severity.ERROR, Severity.WARNING, Severity.NOTE

# code -> (severity, rule, meaning). Codes are stable: add new ones, never rename or reuse.
CODES: dict[str, tuple[Severity, str, str]] = {
    # -- table metadata ------------------------------------------------------------------------
    "META_UNREADABLE": (E, "Table Metadata", "the metadata file is missing or cannot be read"),
    "META_INVALID_JSON": (E, "Appendix C: JSON serialization", "the metadata file is not a JSON object"),
    "META_FORMAT_VERSION": (E, "Table Metadata Fields: format-version",
                            "format-version is missing, not an integer, or not 1 to 4"),
    "META_FIELD_MISSING": (E, "Table Metadata Fields / Snapshots (writer requirements); Appendix E",
                           "a field the format version requires is missing"),
    "META_FIELD_FORBIDDEN": (W, "Writer requirements; Appendix E",
                             "a field the format version says to omit is present"),
    "META_FIELD_TYPE": (E, "Appendix C: JSON serialization", "a field has the wrong JSON type"),
    "META_INVALID": (E, "Table Metadata", "the metadata cannot be read as table metadata (the message says why)"),
    "SCHEMA_ID_DUPLICATE": (E, "Schema Evolution", "two schemas share a schema-id"),
    "FIELD_ID_DUPLICATE": (E, "Nested Types", "a field id is used twice in one schema"),
    "FIELD_ID_RESERVED": (E, "Reserved Field IDs", "a schema uses a field id above 2147483447"),
    "LAST_COLUMN_ID": (E, "Table Metadata Fields: last-column-id", "a field id is above last-column-id"),
    "TYPE_NOT_IN_VERSION": (E, "Schemas and Data Types; Default values",
                            "a type or column default the table's format version does not have"),
    "SPEC_ID_DUPLICATE": (E, "Partition Evolution", "two partition specs share a spec-id"),
    "PARTITION_FIELD_ID_DUPLICATE": (E, "Partitioning",
                                     "a partition field id is used twice in a spec, or (v2+) for different "
                                     "fields in different specs"),
    "LAST_PARTITION_ID": (E, "Table Metadata Fields: last-partition-id",
                          "a partition field id is above last-partition-id"),
    "SOURCE_COLUMN_MISSING": (E, "Partitioning; Sorting",
                              "a partition or sort field's source column is in no schema"),
    "SORT_ORDER_ID_DUPLICATE": (E, "Sorting", "two sort orders share an order-id"),
    "SORT_ORDER_ZERO": (E, "Sorting", "order-id 0 is reserved for the unsorted order but has fields"),
    "CURRENT_ID_MISSING": (E, "Table Metadata Fields",
                           "current-schema-id, default-spec-id or default-sort-order-id names nothing"),
    "SNAPSHOT_ID_DUPLICATE": (E, "Snapshots", "two snapshots share a snapshot-id"),
    "SNAPSHOT_PARENT_CYCLE": (E, "Snapshots", "a snapshot is its own ancestor"),
    "SNAPSHOT_OPERATION": (W, "Snapshots: summary", "a snapshot's summary has no known operation"),
    "SEQUENCE_NUMBER_BACKWARDS": (E, "Sequence Numbers",
                                  "a snapshot's sequence-number is not above its parent's"),
    "SEQUENCE_NUMBER_ABOVE_LAST": (E, "Table Metadata Fields: last-sequence-number",
                                   "a snapshot's sequence-number is above last-sequence-number"),
    "SEQUENCE_NUMBER_DUPLICATE": (E, "Sequence Numbers", "two snapshots share a sequence-number"),
    "REF_MISSING_SNAPSHOT": (E, "Snapshot Reference", "a branch or tag points at a snapshot that does not exist"),
    "REF_INVALID": (E, "Snapshot Reference", "a ref whose type is not branch or tag, or a main that is a tag"),
    "CURRENT_SNAPSHOT_MISSING": (E, "Table Metadata Fields: current-snapshot-id",
                                 "current-snapshot-id names a snapshot that does not exist"),
    "CURRENT_SNAPSHOT_MISMATCH": (E, "Table Metadata Fields: current-snapshot-id",
                                  "current-snapshot-id is not the snapshot of the main branch"),
    "SNAPSHOT_LOG_ORDER": (E, "Table Metadata Fields: snapshot-log",
                           "snapshot-log timestamps go backwards, or past last-updated-ms"),
    "SNAPSHOT_LOG_UNKNOWN": (W, "Table Metadata Fields: snapshot-log",
                             "a snapshot-log entry names an expired snapshot but was kept"),
    "METADATA_LOG_ORDER": (E, "Table Metadata Fields: metadata-log",
                           "metadata-log timestamps go backwards, or past last-updated-ms"),
    "STATISTICS_UNKNOWN_SNAPSHOT": (W, "Table Statistics", "a statistics file belongs to no snapshot of the table"),
    "LINEAGE_NEXT_ROW_ID": (E, "Row Lineage: next-row-id",
                            "next-row-id is missing in a v3+ table, or a row id range reaches past it"),
    "LINEAGE_SNAPSHOT": (E, "Snapshot Row IDs",
                         "a snapshot's first-row-id and added-rows are incomplete, negative or overlap another's"),
    "LINEAGE_BEFORE_V3": (E, "Row Lineage; Appendix E", "row-lineage fields in a v1 or v2 table"),
    "LINEAGE_MANIFEST": (E, "First Row ID Assignment",
                         "a manifest's first_row_id is missing, on a delete manifest, or outside its snapshot's range"),
    "LINEAGE_ADDED_ROWS": (E, "Snapshot Row IDs",
                           "added-rows is not the rows of the manifests assigned row ids in the snapshot"),
    "LINEAGE_FILE": (E, "First Row ID Inheritance",
                     "a delete file with a first_row_id, or a data file's row ids past next-row-id"),
    "PATH_ESCAPES_LOCATION": (E, "v4 walk-through: Relative paths", "a relative path leads outside the table location"),
    "PATH_RELATIVE_BEFORE_V4": (E, "Manifests: file_path (full URI); v4 walk-through: Relative paths",
                                "a relative path in a v1 to v3 table"),
    "V4_FILESYSTEM_CATALOG": (E, "v4 walk-through: The file-system catalog is gone",
                              "a format version 4 table in a file-system catalog"),
    # -- manifest lists -----------------------------------------------------------------------
    "MANIFEST_LIST_UNREADABLE": (E, "Manifest Lists",
                                 "the manifest list is missing, truncated, not Avro or lacks required fields"),
    "MANIFEST_LIST_DUPLICATE": (E, "Manifest Lists", "a manifest is listed twice in one manifest list"),
    "MANIFEST_SPEC_UNKNOWN": (E, "Manifest Lists: partition_spec_id", "a manifest's partition spec is not in the table"),
    "MANIFEST_CONTENT_MISMATCH": (E, "Manifests; Manifest Lists: content",
                                  "manifest list content, manifest header content and entries disagree"),
    "MANIFEST_SEQUENCE": (E, "Manifest Lists: sequence_number, min_sequence_number",
                          "a manifest's sequence numbers disagree with its snapshot or its live entries"),
    "MANIFEST_COUNTS": (E, "Manifest Lists: added/existing/deleted files and rows counts",
                        "file or row counts per status differ from the manifest's entries"),
    "MANIFEST_LENGTH": (E, "Manifest Lists: manifest_length", "manifest_length is not the manifest's size"),
    "PARTITION_SUMMARY": (E, "Manifest Lists: field_summary",
                          "a partition summary does not bound its live values (or has the wrong shape)"),
    # -- manifests --------------------------------------------------------------------------------
    "MANIFEST_UNREADABLE": (E, "Manifests", "the manifest is missing, truncated, not Avro or has the wrong schema"),
    "MANIFEST_HEADER": (E, "Manifests: key-value metadata",
                        "required key-value metadata missing, a format-version above the table's, "
                        "or a partition-spec-id that is not the list's"),
    "MANIFEST_PARTITION_TUPLE": (E, "Manifests: partition",
                                 "the partition struct does not match the manifest's partition spec"),
    "ENTRY_STATUS": (E, "Manifest Entry Fields: status", "an entry status that is not 0, 1 or 2"),
    "ENTRY_INHERITANCE": (E, "Manifest Entry Fields; Sequence Number Inheritance",
                          "snapshot id or sequence numbers that break inheritance"),
    "ENTRY_VALUES": (E, "Manifests: data_file", "a negative record_count or file_size_in_bytes"),
    "FILE_FORMAT_UNKNOWN": (W, "Manifests: file_format", "a file format other than avro, orc, parquet, puffin"),
    "DUPLICATE_LIVE_FILE": (E, "Scan Planning",
                            "a live file is listed more than once in one snapshot (every reader reads it twice)"),
    "DUPLICATE_FILE_CONFLICT": (E, "Scan Planning; Sequence Numbers; Manifests: data_file",
                                "a data file's live entries in one snapshot disagree on its data sequence number, "
                                "partition, record_count or file_size_in_bytes"),
    "DELETE_FILE_IN_V1": (E, "Delete Formats", "a delete file or delete manifest in a v1 table"),
    "EQUALITY_IDS": (E, "Equality Delete Files; Manifests: equality_ids",
                     "equality deletes without valid equality_ids (or equality_ids on another file: warning)"),
    "DV_BEFORE_V3": (E, "Deletion Vectors (v3)", "a deletion vector in a v1 or v2 table"),
    "DV_FIELDS": (E, "Deletion Vectors",
                  "a deletion vector without referenced_data_file, content_offset or content_size_in_bytes, "
                  "or with a range outside its file"),
    "DV_DUPLICATE": (E, "Deletion Vectors", "more than one deletion vector for one data file in a snapshot"),
    "DV_REFERENCED_FILE_NOT_LIVE": (E, "Deletion Vectors", "a deletion vector's data file is not live in the snapshot"),
    "REFERENCED_FILE_NOT_LIVE": (W, "Manifests: referenced_data_file",
                                 "a position delete file's referenced data file is not live in the snapshot"),
    "V3_NEW_POSITION_DELETE_FILE": (E, "Deletion Vectors (v3: position delete files deprecated)",
                                    "a v3 manifest adds a position delete file instead of a deletion vector"),
    "V3_EQUALITY_DELETE": (W, "Row Lineage (equality deletes break lineage)",
                           "a v3 manifest adds an equality delete file"),
    "BOUND_TYPE": (E, "Appendix D: Single-value serialization; Manifests: lower_bounds/upper_bounds",
                   "a lower or upper bound is not a value of its column's type (or is NaN)"),
    "BOUND_ORDER": (E, "Manifests: lower_bounds/upper_bounds", "a lower bound is above its upper bound"),
    "BOUND_UNKNOWN_FIELD": (W, "Manifests: lower_bounds/upper_bounds", "a bound for a field id in no schema"),
    # -- --deep: the files --------------------------------------------------------------------------
    "FILE_MISSING": (E, "Table Metadata Fields: snapshots (valid snapshots)", "a referenced file does not exist"),
    "FILE_SIZE_MISMATCH": (E, "Manifests: file_size_in_bytes", "a file's size is not the recorded size"),
    "FILE_UNREADABLE": (E, "Appendix A: Format-specific Requirements", "a data or delete file's footer cannot be read"),
    "RECORD_COUNT_MISMATCH": (E, "Manifests: record_count", "a file holds another number of rows than record_count"),
    # --deep: a Parquet data file's manifest metrics against its footer (ParquetUtil.footerMetrics)
    "BOUND_HIDES_ROWS": (E, "Manifests: lower_bounds/upper_bounds; Scan Planning",
                         "a lower bound above the column's minimum in the file's footer, or an upper bound below "
                         "its maximum: filtered scans skip rows of the file"),
    "BOUND_LOOSE": (W, "Manifests: lower_bounds/upper_bounds",
                    "a bound below the footer's minimum or above its maximum (safe, but filters prune less) "
                    "that is not a truncation of it"),
    "METRIC_VALUE_COUNT": (E, "Manifests: value_counts",
                           "a column's value count is not the footer's (count and null filters read it)"),
    "METRIC_NULL_COUNT": (E, "Manifests: null_value_counts",
                          "a column's null count is not the footer's (is null / not null filters read it)"),
    "METRIC_NAN_COUNT": (E, "Manifests: nan_value_counts",
                         "a column's NaN count is above the non-null values its footer counts"),
    "METRIC_COLUMN_SIZE": (W, "Manifests: column_sizes", "a column's size is not the footer's"),
    "METRIC_MISSING": (N, "Manifests: value_counts, null_value_counts, lower_bounds, upper_bounds",
                       "a metric the table's metrics mode asks for and the footer proves is not in the entry"),
    "PUFFIN_INVALID": (E, "Puffin: File structure", "a Puffin file's footer is invalid"),
    "DV_BLOB_MISMATCH": (E, "Deletion Vectors; Puffin: deletion-vector-v1",
                         "a deletion vector's offset and length are not a deletion-vector-v1 blob for its data file"),
    "DV_CORRUPT": (E, "Puffin: deletion-vector-v1", "a deletion vector fails its length, magic, CRC or bitmap check"),
    "DV_CARDINALITY": (E, "Deletion Vectors: record_count",
                       "a deletion vector's cardinality is not its record_count"),
    "SUMMARY_TOTALS": (W, "Snapshots: summary", "a snapshot summary total differs from its manifests"),
    # -- view metadata (the view spec, format/view-spec.md) ----------------------------------------
    "VIEW_UNREADABLE": (E, "View Metadata", "the view metadata file is missing or cannot be read"),
    "VIEW_INVALID_JSON": (E, "View Metadata", "the view metadata file is not a JSON object"),
    "VIEW_FORMAT_VERSION": (E, "View Metadata: format-version", "format-version is missing, not an integer, or not 1"),
    "VIEW_FIELD_MISSING": (E, "View Metadata; Versions; Version log",
                           "a required field of the view, of a version or of a version-log entry is missing"),
    "VIEW_FIELD_TYPE": (E, "View Metadata; Versions; Version log", "a view field has the wrong JSON type"),
    "VIEW_UUID": (W, "View Metadata: view-uuid", "view-uuid is not a UUID"),
    "VIEW_SCHEMA_INVALID": (E, "View Metadata: schemas", "a schema of the view cannot be read"),
    "VIEW_SCHEMA_ID_DUPLICATE": (E, "View Metadata: schemas", "two schemas of the view share a schema-id"),
    "VIEW_VERSION_ID_DUPLICATE": (E, "Versions: version-id", "two versions share a version-id"),
    "VIEW_CURRENT_VERSION_MISSING": (E, "View Metadata: current-version-id",
                                     "current-version-id names no version in versions"),
    "VIEW_VERSION_SCHEMA_MISSING": (E, "Versions: schema-id", "a version's schema-id names no schema in schemas"),
    "VIEW_REPRESENTATION_INVALID": (E, "Representations; SQL representation",
                                    "a representation without a type, or a sql one without its sql or dialect"),
    "VIEW_REPRESENTATION_UNKNOWN": (W, "Representations", "a representation whose type is not sql"),
    "VIEW_DIALECT_DUPLICATE": (E, "SQL representation",
                               "a version has two SQL representations of one dialect (compared case-insensitively)"),
    "VIEW_VERSION_LOG_UNKNOWN": (W, "Version log", "a version-log entry names a version not in versions"),
    "VIEW_VERSION_LOG_ORDER": (W, "Version log", "version-log timestamps go backwards"),
    "VIEW_VERSION_LOG_CURRENT": (W, "Version log",
                                 "the last version-log entry is not the current version (or the log is empty)"),
    "VIEW_PROPERTY": (W, "View Metadata: properties",
                      "version.history.num-entries is not a positive integer (Java refuses the next commit)"),
}

# code -> the command that fixes what the finding says ({table}: the table's name), for the codes
# a command can fix; every other code has no fix (null in JSON). A dry run first: each command
# shows its plan and changes nothing without --yes.
RESTORE_FIX = "icectl restore {table} --dry-run"  # the current metadata file is broken: the newest good one
REPAIR_FIX = "icectl repair {table} --dry-run"  # lost or unreadable files: removed or rebuilt
METRICS_FIX = "icectl repair {table} --metrics --dry-run"  # entries whose metrics are not the footer's
DUPLICATES_FIX = "icectl repair {table} --duplicates --dry-run"  # a file live twice: one entry kept
FIXES: dict[str, str] = {
    "META_UNREADABLE": RESTORE_FIX,
    "META_INVALID_JSON": RESTORE_FIX,
    "META_FORMAT_VERSION": RESTORE_FIX,
    "META_FIELD_MISSING": RESTORE_FIX,
    "META_FIELD_TYPE": RESTORE_FIX,
    "META_INVALID": RESTORE_FIX,
    "MANIFEST_UNREADABLE": REPAIR_FIX,
    "FILE_MISSING": REPAIR_FIX,
    "FILE_SIZE_MISMATCH": REPAIR_FIX,
    "FILE_UNREADABLE": REPAIR_FIX,
    "PUFFIN_INVALID": REPAIR_FIX,
    "DV_BLOB_MISMATCH": REPAIR_FIX,
    "DV_CORRUPT": REPAIR_FIX,
    "RECORD_COUNT_MISMATCH": METRICS_FIX,
    "BOUND_HIDES_ROWS": METRICS_FIX,
    "BOUND_LOOSE": METRICS_FIX,
    "METRIC_VALUE_COUNT": METRICS_FIX,
    "METRIC_NULL_COUNT": METRICS_FIX,
    "METRIC_NAN_COUNT": METRICS_FIX,
    "METRIC_COLUMN_SIZE": METRICS_FIX,
    "METRIC_MISSING": METRICS_FIX,
    "DUPLICATE_LIVE_FILE": DUPLICATES_FIX,
    "DUPLICATE_FILE_CONFLICT": DUPLICATES_FIX,
}


def fix_command(code: str, table: str) -> str | None:
    """The command that fixes a finding of ``code`` in ``table`` (None when no command does)."""
    template = FIXES.get(code)
    return template.format(table=table) if template is not None else None


# The codes of view metadata (``validate NS.VIEW`` and a view metadata file).
VIEW_CODES = tuple(c for c in CODES if c.startswith("VIEW_"))
