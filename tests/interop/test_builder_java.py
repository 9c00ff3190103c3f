"""icectl's metadata builder against Iceberg Java's TableMetadata.Builder: random valid sequences
of updates (tests/builder_sequences.py), sent as JSON to Java's MetadataUpdateParser and applied
to Java's TableMetadata.buildFrom(base), give the same metadata as icectl's builder (timestamps
aside: Java stamps with its own clock); Java's TableMetadataParser loads every metadata icectl's
builder writes; and updates Java refuses, icectl refuses."""
from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from builder_sequences import LOCATION, commit_snapshot, evolved_schema as _evolved_schema, new_table, snap, update_sequences
from icectl.spec.metadata import parse_table_metadata
from icectl.table.builder import InvalidUpdateError, StaleUpdateError, apply_updates
from icectl.table.updates import updates_json

pytestmark = [pytest.mark.interop, pytest.mark.spark]


def _normal(md):
    """Metadata without what each side stamps with its own clock."""
    return md.replace(last_updated_ms=0,
                      snapshot_log=tuple(e.__class__(0, e.snapshot_id) for e in md.snapshot_log),
                      metadata_log=tuple(e.__class__(0, e.metadata_file) for e in md.metadata_log))


def java_apply(jvm, base_json: str, base_location: str, updates: list[dict]) -> str:
    parser = jvm.org.apache.iceberg.TableMetadataParser
    base = parser.fromJson(base_location, base_json)
    builder = jvm.org.apache.iceberg.TableMetadata.buildFrom(base)
    for u in updates:
        jvm.org.apache.iceberg.MetadataUpdateParser.fromJson(json.dumps(u)).applyTo(builder)
    return parser.toJson(builder.build())


@settings(max_examples=40, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(data=st.data(), fv=st.sampled_from([1, 2, 3, 4]))
def test_same_metadata_as_java_builder(spark, data, fv):
    jvm = spark._jvm
    base, steps = data.draw(update_sequences(fv))
    md = base
    for i, ups in enumerate(steps):
        location = f"{LOCATION}/metadata/{i:05d}.metadata.json"
        ours = apply_updates(md, ups, previous_location=location, now_ms=md.last_updated_ms + 1)
        theirs = parse_table_metadata(java_apply(jvm, md.to_bytes().decode(), location,
                                                 updates_json(ups, md.format_version)))
        assert _normal(theirs) == _normal(ours), f"step {i}: {[u.action for u in ups]}"
        md = ours
    # Java reads the final metadata as icectl wrote it.
    back = parse_table_metadata(jvm.org.apache.iceberg.TableMetadataParser.toJson(
        jvm.org.apache.iceberg.TableMetadataParser.fromJson(md.to_bytes().decode())))
    assert _normal(back) == _normal(md.replace(metadata_log=back.metadata_log))


def _java_refuses(jvm, md, ups) -> str:
    """Java's message when its builder refuses (pyspark turns Java exceptions into its own)."""
    try:
        java_apply(jvm, md.to_bytes().decode(), f"{LOCATION}/metadata/x.metadata.json",
                   updates_json(ups, md.format_version))
    except Exception as e:  # noqa: BLE001 - Py4JJavaError or pyspark's captured exception types
        return str(e)
    raise AssertionError(f"Java accepted {[u.action for u in ups]}")


def test_refused_where_java_refuses(spark):
    from icectl.spec.metadata import SnapshotRef
    from icectl.spec.partitioning import PartitionField, PartitionSpec
    from icectl.table.updates import (AddSchema, AddSnapshot, AddSpec, RemovePartitionSpecs, RemoveSchemas,
                                      SetCurrentSchema, SetSnapshotRef, UpgradeFormatVersion)

    jvm = spark._jvm
    md = commit_snapshot(new_table(2), 11)
    v3 = commit_snapshot(new_table(3), 11, added_rows=7)
    cases = [
        (md, [AddSnapshot(snap(md, 12, seq=1))], StaleUpdateError, "older than last sequence number"),
        (md, [UpgradeFormatVersion(1)], InvalidUpdateError, "Cannot downgrade"),
        (md, [RemoveSchemas((0,))], InvalidUpdateError, "Cannot remove the current schema"),
        (md, [RemovePartitionSpecs((0,))], InvalidUpdateError, "Cannot remove the default partition spec"),
        (md, [SetCurrentSchema(7)], InvalidUpdateError, "unknown schema"),
        (md, [SetSnapshotRef("b", SnapshotRef(99, "branch"))], InvalidUpdateError, "unknown snapshot"),
        (md, [AddSnapshot(snap(md, 11))], InvalidUpdateError, "already exists"),
        (md, [AddSchema(_evolved_schema(md)), SetCurrentSchema(-1), AddSchema(md.schema), SetCurrentSchema(-1)],
         InvalidUpdateError, "no schema has been added"),
        (md, [AddSpec(PartitionSpec(0, (PartitionField(2, 1001, "n_day", "day"),)))], InvalidUpdateError,
         "Unsupported type: string"),
        (v3, [AddSnapshot(snap(v3, 12, first_row_id=3))], StaleUpdateError, "behind table next-row-id"),
    ]
    for base, ups, ours, java_message in cases:
        with pytest.raises(ours):
            apply_updates(base, ups)
        assert java_message in _java_refuses(jvm, base, ups), [u.action for u in ups]
