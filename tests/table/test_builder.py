"""The metadata builder, updates and requirements: each update's rules as Iceberg Java's
TableMetadata.Builder enforces them, ids reused or assigned as Java assigns them, the snapshot and
metadata logs, the requirements derived from updates (Java's UpdateRequirements), JSON round
trips, and random valid update sequences that always give valid metadata."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from icectl.errors import CommitConflictError, UsageError
from icectl.spec.metadata import Snapshot, SnapshotRef, StatisticsFile, parse_table_metadata
from icectl.spec.partitioning import PartitionField, PartitionSpec, SortField, SortOrder
from icectl.spec.types import NestedField, Schema, primitive
from icectl.table.builder import InvalidUpdateError, MetadataBuilder, StaleUpdateError, apply_updates
from icectl.table.requirements import (
    AssertCreate,
    AssertCurrentSchemaId,
    AssertDefaultSortOrderId,
    AssertDefaultSpecId,
    AssertLastAssignedFieldId,
    AssertLastAssignedPartitionId,
    AssertRefSnapshotId,
    AssertTableUUID,
    RequirementFailed,
    requirement_from_json,
    requirements_for,
)
from icectl.table.updates import (
    AddSchema,
    AddSnapshot,
    AddSortOrder,
    AddSpec,
    AssignUUID,
    RemovePartitionSpecs,
    RemoveProperties,
    RemoveSchemas,
    RemoveSnapshotRef,
    RemoveSnapshots,
    RemoveStatistics,
    SetCurrentSchema,
    SetDefaultSortOrder,
    SetDefaultSpec,
    SetLocation,
    SetProperties,
    SetSnapshotRef,
    SetStatistics,
    UpgradeFormatVersion,
    updates_json,
)

from helpers import update_from_json
from builder_sequences import (LOCATION, NOW, commit_snapshot, evolved_schema as _evolved_schema, new_table, snap,
                               update_sequences)  # tests/ is on sys.path (tests/conftest.py)

# -- creating --------------------------------------------------------------------------------------

@pytest.mark.parametrize("fv", [1, 2, 3, 4])
def test_create_as_java_assigns(fv):
    md = new_table(fv, sort_by="id desc")
    assert md.format_version == fv and md.location == LOCATION and md.table_uuid
    assert md.current_schema_id == 0 and md.last_column_id == 3
    assert md.default_spec_id == 0 and [f.field_id for f in md.spec.fields] == [1000]
    assert md.last_partition_id == 1000
    assert [o.order_id for o in md.sort_orders] == [1] and md.default_sort_order_id == 1
    assert md.next_row_id == (0 if fv >= 3 else None)
    assert md.snapshots == () and md.metadata_log == () and md.last_updated_ms == NOW


def test_create_unsorted_and_unpartitioned():
    md = new_table(partition_by=None)
    assert [o.order_id for o in md.sort_orders] == [0] and md.default_sort_order_id == 0
    assert md.spec.fields == () and md.last_partition_id == 999


def test_create_refuses_what_the_version_lacks():
    with pytest.raises(InvalidUpdateError, match="types of format version 3"):
        new_table(2, schema="id:long, t:timestamp_ns", partition_by=None)
    with pytest.raises(UsageError, match="format version must be 1 to 4"):
        new_table(5)


# -- format version ---------------------------------------------------------------------------------

def test_upgrade_and_no_downgrade():
    md = new_table(2)
    up = apply_updates(md, [UpgradeFormatVersion(3)], now_ms=NOW + 1)
    assert up.format_version == 3 and up.next_row_id == 0
    assert apply_updates(up, [UpgradeFormatVersion(3)]) is up  # no change: the base itself
    with pytest.raises(InvalidUpdateError, match="cannot downgrade a v3 table to v2"):
        apply_updates(up, [UpgradeFormatVersion(2)])
    with pytest.raises(InvalidUpdateError, match="unsupported format version 5"):
        apply_updates(up, [UpgradeFormatVersion(5)])


# -- schemas, specs, orders: ids as Java assigns them ------------------------------------------------

def test_add_schema_assigns_the_next_id_and_reuses_an_identical_one():
    md = new_table()
    s1 = _evolved_schema(md)
    md1 = apply_updates(md, [AddSchema(s1), SetCurrentSchema(-1)])
    assert [s.schema_id for s in md1.schemas] == [0, 1] and md1.current_schema_id == 1 and md1.last_column_id == 4
    # The same schema again: no new schema, no change at all.
    assert apply_updates(md1, [AddSchema(s1)]) is md1
    # As in Java, "the last added schema" is one this commit added: an existing one is not.
    with pytest.raises(InvalidUpdateError, match="no schema has been added"):
        apply_updates(md1, [AddSchema(s1), SetCurrentSchema(-1)])
    # A client's builder records what Java's does: back to the first schema by its id, not added.
    b = MetadataBuilder(md1).set_current_schema(md.schema)
    assert b.changes == [SetCurrentSchema(0)]
    md2 = b.build()
    assert [s.schema_id for s in md2.schemas] == [0, 1] and md2.current_schema_id == 0
    b = MetadataBuilder(md1).set_current_schema(_evolved_schema(md1, name="more"))
    assert [u.action for u in b.changes] == ["add-schema", "set-current-schema"] and b.changes[1].schema_id == -1


def test_schema_rules():
    md = new_table()
    with pytest.raises(InvalidUpdateError, match="unknown schema 9"):
        apply_updates(md, [SetCurrentSchema(9)])
    with pytest.raises(InvalidUpdateError, match="no schema has been added"):
        apply_updates(md, [SetCurrentSchema(-1)])
    with pytest.raises(InvalidUpdateError, match="cannot remove the current schema"):
        apply_updates(md, [RemoveSchemas((0,))])
    # Dropping the column the default spec reads is refused (Java: checkCompatibility in build()).
    dropped = Schema(tuple(f for f in md.schema.fields if f.name != "ts"), schema_id=1)
    with pytest.raises(InvalidUpdateError, match="source column 3"):
        apply_updates(md, [AddSchema(dropped), SetCurrentSchema(-1)])
    v3_only = Schema(md.schema.fields + (NestedField(4, "v", primitive("variant")),))
    with pytest.raises(InvalidUpdateError, match="types of format version 3"):
        apply_updates(md, [AddSchema(v3_only)])


def test_add_spec_reuses_compatible_and_checks_sources():
    md = new_table(partition_by="day(ts)")
    bucket = PartitionSpec(0, (PartitionField(1, 1001, "id_bucket", "bucket[16]"),))
    md1 = apply_updates(md, [AddSpec(bucket), SetDefaultSpec(-1)])
    assert [s.spec_id for s in md1.partition_specs] == [0, 1] and md1.default_spec_id == 1
    assert md1.last_partition_id == 1001
    # A spec with the same fields (ids aside) is the existing one.
    same = PartitionSpec(7, (PartitionField(1, 1001, "id_bucket", "bucket[16]"),))
    assert apply_updates(md1, [AddSpec(same)]) is md1
    assert MetadataBuilder(md1).set_default_spec(same).changes == []
    bad = PartitionSpec(0, (PartitionField(2, 1002, "name_day", "day"),))
    with pytest.raises(InvalidUpdateError, match="invalid source type string for transform day"):
        apply_updates(md1, [AddSpec(bad)])
    missing = PartitionSpec(0, (PartitionField(99, 1002, "x", "identity"),))
    with pytest.raises(InvalidUpdateError, match="source column 99"):
        apply_updates(md1, [AddSpec(missing)])
    with pytest.raises(InvalidUpdateError, match="cannot remove the default partition spec"):
        apply_updates(md1, [RemovePartitionSpecs((1,))])
    assert [s.spec_id for s in apply_updates(md1, [RemovePartitionSpecs((0,))]).partition_specs] == [1]


def test_v1_specs_need_sequential_ids():
    md = new_table(1, partition_by="day(ts)")
    gap = PartitionSpec(0, (PartitionField(3, 1000, "ts_day", "day"), PartitionField(1, 1005, "id", "identity")))
    with pytest.raises(InvalidUpdateError, match="sequential field ids"):
        apply_updates(md, [AddSpec(gap)])


def test_sort_orders():
    md = new_table()
    order = SortOrder(5, (SortField(1, "identity", "desc", "nulls-last"),))
    md1 = apply_updates(md, [AddSortOrder(order), SetDefaultSortOrder(-1)])
    assert [o.order_id for o in md1.sort_orders] == [0, 1] and md1.default_sort_order_id == 1
    assert apply_updates(md1, [AddSortOrder(order)]) is md1
    assert MetadataBuilder(md1).set_default_sort_order(order).changes == []
    assert apply_updates(md1, [SetDefaultSortOrder(0)]).default_sort_order_id == 0
    bad = SortOrder(1, (SortField(2, "bucket[4]", "asc", "nulls-first"), SortField(9, "identity", "asc", "nulls-first")))
    with pytest.raises(InvalidUpdateError, match="source column 9"):
        apply_updates(md1, [AddSortOrder(bad)])


# -- snapshots and refs -------------------------------------------------------------------------------

def test_add_snapshot_sets_sequence_numbers_logs_and_timestamps():
    md = commit_snapshot(new_table(), 11)
    assert md.current_snapshot_id == 11 and md.last_sequence_number == 1
    assert md.refs["main"].snapshot_id == 11
    assert [(e.timestamp_ms, e.snapshot_id) for e in md.snapshot_log] == [(NOW + 11, 11)]
    assert md.last_updated_ms == NOW + 11  # the snapshot's time (Java: lastUpdatedMillis)
    assert [e.metadata_file for e in md.metadata_log] == [f"{LOCATION}/metadata/11.metadata.json"]
    md = commit_snapshot(md, 12)
    assert md.last_sequence_number == 2 and [e.snapshot_id for e in md.snapshot_log] == [11, 12]


def test_add_snapshot_refusals():
    md = commit_snapshot(new_table(), 11)
    with pytest.raises(InvalidUpdateError, match="snapshot 11 already exists"):
        apply_updates(md, [AddSnapshot(snap(md, 11))])
    with pytest.raises(StaleUpdateError, match="sequence number 1 is not above"):
        apply_updates(md, [AddSnapshot(snap(md, 12, seq=1))])
    assert issubclass(StaleUpdateError, CommitConflictError)  # a retry re-plans it
    with pytest.raises(InvalidUpdateError, match="relative paths need format version 4"):
        apply_updates(md, [AddSnapshot(snap(md, 12, path="metadata/snap-12.avro"))])
    with pytest.raises(InvalidUpdateError, match="unknown snapshot 99"):
        apply_updates(md, [SetSnapshotRef("main", SnapshotRef(99, "branch"))])
    with pytest.raises(InvalidUpdateError, match="main must be a branch"):
        apply_updates(md, [SetSnapshotRef("main", SnapshotRef(11, "tag"))])


def test_v3_row_lineage_and_v4_paths():
    md = commit_snapshot(new_table(3), 11, added_rows=7)
    assert md.next_row_id == 7
    with pytest.raises(StaleUpdateError, match="first-row-id 3 is behind the table's next-row-id 7"):
        apply_updates(md, [AddSnapshot(snap(md, 12, first_row_id=3))])
    with pytest.raises(InvalidUpdateError, match="needs first-row-id"):
        apply_updates(md, [AddSnapshot(snap(md, 12, first_row_id=None))])
    v4 = commit_snapshot(new_table(4), 11, path="metadata/snap-11.avro")
    assert v4.snapshot_by_id(11).manifest_list == "metadata/snap-11.avro"
    with pytest.raises(InvalidUpdateError, match="leaves the table location"):
        apply_updates(v4, [AddSnapshot(snap(v4, 12, path="../other/snap.avro"))])


def test_refs_and_current_snapshot():
    md = commit_snapshot(commit_snapshot(new_table(), 11), 12)
    md = apply_updates(md, [SetSnapshotRef("t1", SnapshotRef(11, "tag", max_ref_age_ms=5)),
                            SetSnapshotRef("b1", SnapshotRef(11, "branch", min_snapshots_to_keep=2))], now_ms=NOW + 100)
    assert md.refs["t1"].ref_type == "tag" and md.refs["b1"].min_snapshots_to_keep == 2
    assert md.last_updated_ms == NOW + 100 and len(md.snapshot_log) == 2  # only main writes the log
    back = apply_updates(md, [SetSnapshotRef("main", SnapshotRef(11, "branch"))], now_ms=NOW + 200)
    assert back.current_snapshot_id == 11
    assert [(e.timestamp_ms, e.snapshot_id) for e in back.snapshot_log][-1] == (NOW + 200, 11)
    dropped = apply_updates(back, [RemoveSnapshotRef("main")])
    assert dropped.current_snapshot_id is None and "main" not in dropped.refs


def test_remove_snapshots_drops_refs_statistics_and_history_before_them():
    md = commit_snapshot(commit_snapshot(commit_snapshot(new_table(), 11), 12), 13)
    md = apply_updates(md, [SetStatistics(StatisticsFile(12, f"{LOCATION}/metadata/12.stats", 10)),
                            SetSnapshotRef("old", SnapshotRef(12, "tag"))])
    after = apply_updates(md, [RemoveSnapshots((12,))], now_ms=NOW + 300)
    assert [s.snapshot_id for s in after.snapshots] == [11, 13]
    assert "old" not in after.refs and after.statistics == ()
    # History before the removed snapshot's log entry goes: [11, 12, 13] -> [13].
    assert [e.snapshot_id for e in after.snapshot_log] == [13]
    assert apply_updates(after, [RemoveStatistics(12)]) is after


def test_intermediate_snapshots_leave_the_log():
    md = commit_snapshot(new_table(), 11)
    s12, s13 = snap(md, 12), None
    md2 = MetadataBuilder(md, now_ms=NOW + 50).apply([AddSnapshot(s12), SetSnapshotRef("main", SnapshotRef(12, "branch"))])
    s13 = Snapshot(13, NOW + 60, 12, 3, f"{LOCATION}/metadata/snap-13.avro", summary={"operation": "append"})
    md2.apply([AddSnapshot(s13), SetSnapshotRef("main", SnapshotRef(13, "branch"))])
    out = md2.build(previous_location="x")
    assert [e.snapshot_id for e in out.snapshot_log] == [11, 13]


def test_metadata_log_is_trimmed_to_previous_versions_max():
    md = new_table(properties={"write.metadata.previous-versions-max": "2"})
    for i in range(4):
        md = apply_updates(md, [SetProperties({"k": str(i)})], previous_location=f"m{i}", now_ms=NOW + i)
    assert [e.metadata_file for e in md.metadata_log] == ["m2", "m3"]
    md = apply_updates(md, [SetProperties({"write.metadata.previous-versions-max": "0"})], previous_location="m4")
    assert [e.metadata_file for e in md.metadata_log] == ["m4"]  # at least one, as Java keeps


def test_properties_and_location():
    md = new_table(properties={"a": "1", "b": "2"})
    md1 = apply_updates(md, [SetProperties({"a": "9"}), RemoveProperties(("b", "nope"))])
    assert md1.properties == {"a": "9"}
    assert apply_updates(md1, [SetProperties({})]) is md1
    assert apply_updates(md1, [SetLocation("s3://other/t/")]).location == "s3://other/t"
    assert apply_updates(md1, [AssignUUID(md1.table_uuid)]) is md1


# -- requirements ------------------------------------------------------------------------------------------

def test_requirements_for_updates_as_java_derives_them():
    md = commit_snapshot(new_table(), 11)
    md = apply_updates(md, [SetSnapshotRef("b1", SnapshotRef(11, "branch"))])
    s12 = snap(md, 12)
    reqs = requirements_for(md, [AddSnapshot(s12), SetSnapshotRef("main", SnapshotRef(12, "branch")),
                                 SetSnapshotRef("new", SnapshotRef(12, "tag")), AddSchema(_evolved_schema(md)),
                                 AddSchema(_evolved_schema(md, name="x")), SetCurrentSchema(-1),
                                 AddSpec(md.spec), SetDefaultSpec(-1), SetDefaultSortOrder(0)])
    assert reqs == [AssertTableUUID(md.table_uuid), AssertRefSnapshotId("main", 11), AssertRefSnapshotId("new", None),
                    AssertLastAssignedFieldId(3), AssertCurrentSchemaId(0), AssertLastAssignedPartitionId(1000),
                    AssertDefaultSpecId(0), AssertDefaultSortOrderId(0)]
    # Removing schemas or specs requires that no branch but main moved.
    assert requirements_for(md, [RemoveSchemas((5,))]) == [
        AssertTableUUID(md.table_uuid), AssertCurrentSchemaId(0), AssertRefSnapshotId("b1", 11)]
    assert requirements_for(None, []) == [AssertCreate()]


def test_requirements_fail_as_conflicts():
    md = commit_snapshot(new_table(), 11)
    AssertRefSnapshotId("main", 11).validate(md)
    for req, msg in [(AssertRefSnapshotId("main", 10), "branch main has changed: it points at 11, not 10"),
                     (AssertRefSnapshotId("main", None), "branch main was created concurrently"),
                     (AssertRefSnapshotId("b9", 3), "branch or tag b9 is missing"),
                     (AssertTableUUID("00000000-0000-0000-0000-000000000000"), "UUID"),
                     (AssertLastAssignedFieldId(2), "last assigned field id changed: it is 3, not 2"),
                     (AssertCurrentSchemaId(4), "current schema id changed"),
                     (AssertLastAssignedPartitionId(1), "last assigned partition id changed"),
                     (AssertDefaultSpecId(3), "default partition spec id changed"),
                     (AssertDefaultSortOrderId(3), "default sort order id changed"),
                     (AssertCreate(), "already exists")]:
        with pytest.raises(RequirementFailed, match=msg) as e:
            req.validate(md)
        assert e.value.exit_code == 5
        assert requirement_from_json(json.loads(json.dumps(req.to_json()))) == req
    with pytest.raises(RequirementFailed, match="does not exist"):
        AssertTableUUID("x").validate(None)


# -- JSON -------------------------------------------------------------------------------------------------

def test_update_json_shapes():
    md = commit_snapshot(new_table(3), 11)
    ups = [AssignUUID("u"), UpgradeFormatVersion(3), SetCurrentSchema(-1), SetDefaultSpec(0),
           SetDefaultSortOrder(-1), SetSnapshotRef("b", SnapshotRef(11, "branch", 2, 3, 4)), RemoveSnapshots((1, 2)),
           RemoveSnapshotRef("b"), SetLocation("s3://x"), SetProperties({"a": "b"}), RemoveProperties(("a",)),
           AddSnapshot(md.snapshots[0]), AddSchema(md.schema, 3)]
    got = updates_json(ups, 3)
    assert got[:11] == [
        {"action": "assign-uuid", "uuid": "u"}, {"action": "upgrade-format-version", "format-version": 3},
        {"action": "set-current-schema", "schema-id": -1}, {"action": "set-default-spec", "spec-id": 0},
        {"action": "set-default-sort-order", "sort-order-id": -1},
        {"action": "set-snapshot-ref", "ref-name": "b", "snapshot-id": 11, "type": "branch",
         "min-snapshots-to-keep": 2, "max-snapshot-age-ms": 3, "max-ref-age-ms": 4},
        {"action": "remove-snapshots", "snapshot-ids": [1, 2]}, {"action": "remove-snapshot-ref", "ref-name": "b"},
        {"action": "set-location", "location": "s3://x"}, {"action": "set-properties", "updates": {"a": "b"}},
        {"action": "remove-properties", "removals": ["a"]}]
    assert got[11]["snapshot"]["first-row-id"] == 0 and got[12]["last-column-id"] == 3
    for u, j in zip(ups, got):
        assert update_from_json(json.loads(json.dumps(j))) == u


# -- random sequences -------------------------------------------------------------------------------------

@settings(max_examples=int(__import__("os").environ.get("ICECTL_BUILDER_EXAMPLES", "60")), deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data(), fv=st.sampled_from([1, 2, 3, 4]))
def test_random_update_sequences_give_valid_metadata(data, fv):
    """Every random valid sequence applies; the result round-trips through JSON, its updates
    round-trip through their JSON, and icectl's validator finds nothing wrong with it."""
    from icectl.validate.findings import Collector
    from icectl.validate.metadata import check_metadata

    base, steps = data.draw(update_sequences(fv))
    md = base
    for i, ups in enumerate(steps):
        for u, j in zip(ups, updates_json(ups, md.format_version)):
            assert update_from_json(json.loads(json.dumps(j))) == u
        reqs = requirements_for(md, ups)
        for r in reqs:
            r.validate(md)
        md = apply_updates(md, ups, previous_location=f"{LOCATION}/metadata/{i:05d}.metadata.json",
                           now_ms=md.last_updated_ms + 1)
    text = md.to_bytes()
    assert parse_table_metadata(text) == md
    out = Collector()
    check_metadata(text, "m.json", out)
    assert [f for f in out.findings if f.severity.value == "error"] == []


def test_every_update_type_has_its_handler():
    """The builder dispatches through an explicit table from update type to handler: every
    ``TableUpdate`` the REST spec defines is in it, each with the handler named for its action."""
    import icectl.table.updates as updates_module

    kinds = {c for c in vars(updates_module).values()
             if isinstance(c, type) and issubclass(c, updates_module.TableUpdate) and c is not updates_module.TableUpdate}
    handlers = MetadataBuilder(None)._handlers()
    assert set(handlers) == kinds
    assert all(h.__name__ == "_" + k.action.replace("-", "_") for k, h in handlers.items())


def test_an_update_type_without_a_handler_is_refused():
    from dataclasses import dataclass
    from typing import ClassVar

    from icectl.table.updates import TableUpdate

    @dataclass(frozen=True)
    class Unknown(TableUpdate):
        action: ClassVar[str] = "set-something-new"

    with pytest.raises(InvalidUpdateError, match="set-something-new"):
        MetadataBuilder(None).apply([Unknown()])
