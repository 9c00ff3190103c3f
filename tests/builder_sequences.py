"""Random valid sequences of table updates, for the builder's property tests (and the Java
differential test): a created table, then commits that each are valid against the metadata the
commits before them produce (snapshots on main and on branches, tags, schema evolution, specs,
sort orders, properties, statistics, snapshot removal, format upgrades).

``update_sequences(fv)`` draws ``(base_metadata, [updates_of_commit_1, updates_of_commit_2, ...])``.
Schemas have Java-compatible defaults only (no v3 defaults, so Iceberg Java 1.10 parses them all).
"""
from __future__ import annotations

from hypothesis import strategies as st

from icectl.expr.partition import partition_spec
from icectl.expr.sort import sort_order
from icectl.ops.evolve.create import create_updates, load_schema_argument
from icectl.spec.metadata import Snapshot, SnapshotRef, StatisticsFile
from icectl.spec.partitioning import PartitionField, PartitionSpec, SortField, SortOrder
from icectl.spec.transforms import parse_transform
from icectl.spec.types import NestedField, PrimitiveType, Schema, primitive, walk_fields
from icectl.table.builder import MetadataBuilder, apply_updates
from icectl.table.updates import (
    AddSnapshot,
    RemoveProperties,
    RemoveSnapshotRef,
    RemoveSnapshots,
    RemoveStatistics,
    SetProperties,
    SetSnapshotRef,
    SetStatistics,
    UpgradeFormatVersion,
)

LOCATION = "s3://bucket/wh/db/t"
BASE_TIME = 1_700_000_000_000
TYPES = ["int", "long", "string", "date", "timestamptz", "double", "boolean", "decimal(9,2)"]
TRANSFORMS = ["identity", "bucket[8]", "truncate[4]", "day", "month", "year"]


NOW = 1_700_000_000_000


def new_table(fv: int = 2, *, schema="id:long!, name:string, ts:timestamptz", partition_by="day(ts)",
              sort_by=None, properties=None):
    s = load_schema_argument(schema)
    ups = create_updates(schema=s, spec=partition_spec(partition_by, s), sort_order=sort_order(sort_by, s),
                         location=LOCATION, properties=properties or {}, format_version=fv)
    return apply_updates(None, ups, now_ms=NOW)


def snap(md, sid, *, parent="head", seq=None, ts=None, first_row_id="next", added_rows=10, path=None):
    parent_id = md.current_snapshot_id if parent == "head" else parent
    return Snapshot(snapshot_id=sid, timestamp_ms=ts or NOW + sid, parent_snapshot_id=parent_id,
                    sequence_number=(md.last_sequence_number + 1 if md.format_version >= 2 else 0) if seq is None else seq,
                    manifest_list=path or f"{LOCATION}/metadata/snap-{sid}.avro", summary={"operation": "append"},
                    schema_id=md.current_schema_id,
                    first_row_id=(md.next_row_id if first_row_id == "next" else first_row_id) if md.format_version >= 3 else None,
                    added_rows=added_rows if md.format_version >= 3 else None)


def commit_snapshot(md, sid, branch="main", **kw):
    s = snap(md, sid, **kw)
    return apply_updates(md, [AddSnapshot(s), SetSnapshotRef(branch, SnapshotRef(sid, "branch"))],
                         previous_location=f"{LOCATION}/metadata/{sid}.metadata.json", now_ms=NOW + sid)


def evolved_schema(md, *, name="note"):
    cur = md.schema
    return Schema(cur.fields + (NestedField(md.last_column_id + 1, name, primitive("string")),), schema_id=cur.schema_id)


def _columns(schema: Schema) -> list[NestedField]:
    return [f for _, f in walk_fields(schema.fields) if isinstance(f.field_type, PrimitiveType)]


@st.composite
def _initial(draw, fv: int):
    n = draw(st.integers(2, 5))
    fields = tuple(NestedField(i + 1, f"c{i + 1}", primitive(draw(st.sampled_from(TYPES))),
                               required=draw(st.booleans())) for i in range(n))
    schema = Schema(fields, 0)
    spec = draw(_spec(schema, 1000))
    order = draw(_order(schema, 1)) if draw(st.booleans()) else SortOrder(0, ())
    props = {"owner": draw(st.sampled_from(["a", "b"]))} if draw(st.booleans()) else {}
    ups = create_updates(schema=schema, spec=spec, sort_order=order, location=LOCATION, properties=props,
                         format_version=fv)
    return apply_updates(None, ups, now_ms=BASE_TIME)


@st.composite
def _spec(draw, schema: Schema, first_id: int, spec_id: int = 0):
    options = [(f, t) for f in _columns(schema) for t in TRANSFORMS if parse_transform(t).can_transform(f.field_type)]
    chosen = draw(st.lists(st.sampled_from(options), max_size=3, unique_by=lambda o: (o[0].field_id, o[1])))
    return PartitionSpec(spec_id, tuple(PartitionField(f.field_id, first_id + i, f"{f.name}_{t.split('[')[0]}_{first_id + i}", t)
                                        for i, (f, t) in enumerate(chosen)))


@st.composite
def _order(draw, schema: Schema, order_id: int):
    options = [(f, t) for f in _columns(schema) for t in ("identity", "bucket[4]", "day")
               if parse_transform(t).can_transform(f.field_type)]
    chosen = draw(st.lists(st.sampled_from(options), min_size=1, max_size=2))
    return SortOrder(order_id, tuple(SortField(f.field_id, t, draw(st.sampled_from(["asc", "desc"])),
                                               draw(st.sampled_from(["nulls-first", "nulls-last"])))
                                     for f, t in chosen))


def _snapshot(md, sid: int, parent: int | None, ts: int) -> Snapshot:
    v = md.format_version
    return Snapshot(snapshot_id=sid, timestamp_ms=ts, parent_snapshot_id=parent,
                    sequence_number=md.last_sequence_number + 1 if v >= 2 else 0,
                    manifest_list=f"{LOCATION}/metadata/snap-{sid}.avro",
                    summary={"operation": "append", "added-data-files": "1"}, schema_id=md.current_schema_id,
                    first_row_id=(md.next_row_id or 0) if v >= 3 else None, added_rows=5 if v >= 3 else None)


@st.composite
def _step(draw, md, counter: list[int]):
    """One commit's updates, valid against ``md``."""
    counter[0] += 1
    ts = md.last_updated_ms + 1000
    sid = 10_000 + counter[0]
    branches = [n for n, r in md.refs.items() if r.is_branch]
    kind = draw(st.sampled_from(["append", "append", "branch-append", "tag", "branch", "drop-ref", "schema",
                                 "spec", "order", "props", "stats", "expire", "upgrade", "rollback"]))
    if kind == "append" or (kind == "branch-append" and not [b for b in branches if b != "main"]):
        return [AddSnapshot(_snapshot(md, sid, md.current_snapshot_id, ts)), SetSnapshotRef("main", SnapshotRef(
            sid, "branch", *((r.min_snapshots_to_keep, r.max_snapshot_age_ms, r.max_ref_age_ms)
                             if (r := md.refs.get("main")) else ())))]
    if kind == "branch-append":
        b = draw(st.sampled_from(sorted(x for x in branches if x != "main")))
        return [AddSnapshot(_snapshot(md, sid, md.refs[b].snapshot_id, ts)),
                SetSnapshotRef(b, SnapshotRef(sid, "branch"))]
    if kind in ("tag", "branch") and md.snapshots:
        target = draw(st.sampled_from([s.snapshot_id for s in md.snapshots]))
        name = draw(st.sampled_from(["t1", "t2", "b1", "b2", "audit"]))
        if name in md.refs:
            return [RemoveSnapshotRef(name)] if name != "main" else []
        ref = SnapshotRef(target, "tag", max_ref_age_ms=draw(st.none() | st.integers(1, 10**9))) if kind == "tag" else \
            SnapshotRef(target, "branch", draw(st.none() | st.integers(1, 20)), draw(st.none() | st.integers(1, 10**9)))
        return [SetSnapshotRef(name, ref)]
    if kind == "drop-ref" and [n for n in md.refs if n != "main"]:
        return [RemoveSnapshotRef(draw(st.sampled_from(sorted(n for n in md.refs if n != "main"))))]
    if kind == "rollback" and md.current_snapshot_id is not None:
        ancestors = [s.snapshot_id for s in md.ancestors_of(md.current_snapshot_id)]
        return [SetSnapshotRef("main", SnapshotRef(draw(st.sampled_from(ancestors)), "branch"))]
    if kind == "schema":
        cur = md.schema
        if draw(st.booleans()) or len(cur.fields) < 2:
            new = Schema(cur.fields + (NestedField(md.last_column_id + 1, f"c{md.last_column_id + 1}",
                                                   primitive(draw(st.sampled_from(TYPES)))),), cur.schema_id)
        else:  # drop a column nothing partitions or sorts by
            used = {f.source_id for s in md.partition_specs for f in s.fields} | \
                   {f.source_id for o in md.sort_orders for f in o.fields}
            keep = tuple(f for f in cur.fields if f.field_id in used or f is cur.fields[0])
            new = Schema(keep if keep else cur.fields[:1], cur.schema_id)
        # What a client's builder records (add-schema only when new), as Java's SchemaUpdate sends.
        return MetadataBuilder(md).set_current_schema(new).changes
    if kind == "spec":
        if md.format_version == 1:
            # v1 (spec: "Partition Evolution", v1 rules as Java follows them): fields are only
            # added at the end of the previous spec, so ids stay sequential from 1000 and a field
            # id never names two different fields.
            more = draw(_spec(md.schema, 1000 + len(md.spec.fields)))
            spec = PartitionSpec(0, md.spec.fields + more.fields)
        else:
            spec = draw(_spec(md.schema, md.last_partition_id + 1))
        return MetadataBuilder(md).set_default_spec(spec).changes
    if kind == "order":
        order = SortOrder(0, ()) if draw(st.booleans()) else draw(_order(md.schema, 1))
        return MetadataBuilder(md).set_default_sort_order(order).changes
    if kind == "props":
        if md.properties and draw(st.booleans()):
            return [RemoveProperties((draw(st.sampled_from(sorted(md.properties))),))]
        return [SetProperties({draw(st.sampled_from(["k1", "k2", "commit.retry.num-retries"])): str(draw(st.integers(1, 9)))})]
    if kind == "stats" and md.snapshots:
        target = draw(st.sampled_from([s.snapshot_id for s in md.snapshots]))
        if any(s.snapshot_id == target for s in md.statistics) and draw(st.booleans()):
            return [RemoveStatistics(target)]
        return [SetStatistics(StatisticsFile(target, f"{LOCATION}/metadata/{target}-stats.puffin", 1234,
                                             {"file-footer-size-in-bytes": 100, "blob-metadata": []}))]
    if kind == "expire" and len(md.snapshots) > 1:
        heads = {r.snapshot_id for r in md.refs.values()}
        removable = [s.snapshot_id for s in md.snapshots if s.snapshot_id not in heads]
        if removable:
            return [RemoveSnapshots(tuple(draw(st.lists(st.sampled_from(removable), min_size=1, unique=True))))]
    if kind == "upgrade" and md.format_version < 3:
        return [UpgradeFormatVersion(md.format_version + 1)]
    return [SetProperties({"touched": str(counter[0])})]


@st.composite
def update_sequences(draw, fv: int, *, max_steps: int = 12):
    base = draw(_initial(fv))
    md = base
    steps = []
    counter = [0]
    for _ in range(draw(st.integers(1, max_steps))):
        ups = draw(_step(md, counter))
        if not ups:
            continue
        md = apply_updates(md, ups, previous_location=f"{LOCATION}/metadata/{len(steps):05d}.metadata.json",
                           now_ms=md.last_updated_ms + 1)
        steps.append(ups)
    return base, steps
