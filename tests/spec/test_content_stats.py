"""v4 typed ``content_stats`` (v4 walk-through: "Typed content_stats: five maps become one
struct"; icectl's id layout is documented in icectl/spec/content_stats.py): the v3 maps and
the typed struct translate both ways without loss, also through an Avro manifest."""
from __future__ import annotations

import io
import json
import math

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from strategies import ALL_PRIMITIVES, schemas, stats_maps, values

from icectl.formats import avro_schemas
from icectl.spec.content_stats import BLOCK, STATS_ID_BASE, column_block, from_maps, stats_columns, to_maps
from icectl.spec.conversions import to_bytes
from icectl.formats.manifest import (
    DataFile,
    EntryStatus,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    read_manifest,
    write_manifest,
)
from icectl.spec.partitioning import PartitionField, PartitionSpec
from icectl.spec.types import ListType, MapType, NestedField, PrimitiveType, Schema, StructType, primitive

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MAP_NAMES = ("value_counts", "null_value_counts", "nan_value_counts", "column_sizes", "lower_bounds", "upper_bounds",
             "tight_bounds")
TYPE_IDS = [str(t) for t in ALL_PRIMITIVES]


def _one_column(t: PrimitiveType) -> Schema:
    return Schema((NestedField(1, "id", primitive("long"), True), NestedField(2, "c", t)), 0)


def _from(schema: Schema, maps: dict) -> dict | None:
    kw = {k: maps[k] for k in MAP_NAMES}
    return from_maps(schema, **kw)


def _through_avro(schema: Schema, stats: dict | None, spec: PartitionSpec | None = None,
                  partition: tuple = ()) -> dict | None:
    spec = spec or PartitionSpec(0, ())
    df = DataFile("data/a.parquet", "parquet", partition, 1, 10, content_stats=stats)
    blob = write_manifest([ManifestEntry(EntryStatus.ADDED, 1, None, None, df)], format_version=4, spec=spec,
                          schema=schema, content=ManifestContent.DATA,
                          content_stats_schema=avro_schemas.content_stats_schema(schema))
    [e] = read_manifest(blob, ManifestFile("m.avro", len(blob), spec.spec_id, added_snapshot_id=1))
    return e.data_file.content_stats


@pytest.mark.slow  # ~30 s: every primitive type; test_maps_round_trip_random_schemas stays in the fast suite
@pytest.mark.parametrize("t", ALL_PRIMITIVES, ids=TYPE_IDS)
@SETTINGS
@given(data=st.data())
def test_maps_round_trip_every_primitive(t, data):
    schema = _one_column(t)
    maps = data.draw(stats_maps(schema))
    stats = _from(schema, maps)
    assert to_maps(schema, stats) == maps
    # "A missing map key in v3 is the same as a missing-or-null sub-struct in v4."
    if stats is not None:
        for name, col in stats.items():
            assert col, name
    assert (stats is None) == (not any(maps.values()))
    # And the same through an Avro manifest (typed bounds as Avro values of the column type).
    assert to_maps(schema, _through_avro(schema, stats)) == maps


@SETTINGS
@given(data=st.data())
def test_maps_round_trip_random_schemas(data):
    schema = data.draw(schemas(4, with_extras=False))
    maps = data.draw(stats_maps(schema))
    stats = _from(schema, maps)
    assert to_maps(schema, stats) == maps
    assert to_maps(schema, _through_avro(schema, stats)) == maps


@pytest.mark.parametrize("t", [t for t in ALL_PRIMITIVES if t.base not in ("variant", "unknown", "geometry",
                                                                               "geography")], ids=str)
@SETTINGS
@given(data=st.data())
def test_bounds_are_typed_values(t, data):
    """Bounds in the struct are values of the column type, not Appendix D bytes."""
    schema = _one_column(t)
    v = data.draw(values(t))
    stats = from_maps(schema, value_counts=None, null_value_counts=None, nan_value_counts=None,
                      lower_bounds={2: to_bytes(t, v)}, upper_bounds=None, column_sizes=None)
    lower = stats["f2"]["lower_bound"]
    if t.base in ("float", "double"):
        assert lower == v or (math.isnan(lower) and math.isnan(v))
        assert math.copysign(1, lower) == math.copysign(1, v)
    elif t.base == "uuid":
        assert lower == v.bytes  # Avro fixed[16]
    else:
        assert lower == v


def test_spatial_bounds_are_points():
    g = primitive("geometry")
    schema = _one_column(g)
    stats = from_maps(schema, value_counts=None, null_value_counts=None, nan_value_counts=None,
                      lower_bounds={2: to_bytes(g, (1.0, 2.0))}, upper_bounds={2: to_bytes(g, (3.0, 4.0, 5.0, 6.0))},
                      column_sizes=None)
    assert stats["f2"]["lower_bound"] == {"x": 1.0, "y": 2.0, "z": None, "m": None}
    assert stats["f2"]["upper_bound"] == {"x": 3.0, "y": 4.0, "z": 5.0, "m": 6.0}
    maps = to_maps(schema, _through_avro(schema, stats))
    assert maps["lower_bounds"] == {2: to_bytes(g, (1.0, 2.0))}
    assert maps["upper_bounds"] == {2: to_bytes(g, (3.0, 4.0, 5.0, 6.0))}


def test_nothing_is_none():
    schema = _one_column(primitive("int"))
    assert from_maps(schema, value_counts=None, null_value_counts=None, nan_value_counts=None, lower_bounds=None,
                     upper_bounds=None, column_sizes=None) is None
    assert from_maps(schema, value_counts={}, null_value_counts={}, nan_value_counts={}, lower_bounds={},
                     upper_bounds={}, column_sizes={}) is None
    assert to_maps(schema, None) == {k: {} for k in MAP_NAMES}
    assert to_maps(schema, {"f2": None}) == {k: {} for k in MAP_NAMES}


def test_stats_for_columns_not_in_schema_are_ignored():
    schema = _one_column(primitive("int"))
    stats = from_maps(schema, value_counts={2: 5, 99: 7}, null_value_counts=None, nan_value_counts={2: 1},
                      lower_bounds={99: b"\x01"}, upper_bounds=None, column_sizes=None)
    assert stats == {"f2": {"value_count": 5}}  # no nan count for an int, nothing for id 99


# -- the Avro layout ---------------------------------------------------------------------------------

def _opt_type(f: dict):
    assert f["type"][0] == "null" and f.get("default", "missing") is None
    return f["type"][1]


@pytest.mark.parametrize("t", ALL_PRIMITIVES, ids=TYPE_IDS)
def test_avro_layout_per_type(t):
    schema = _one_column(t)
    record = avro_schemas.content_stats_schema(schema)
    assert record["type"] == "record" and record["name"] == "content_stats"
    cols = {f["name"]: f for f in record["fields"]}
    if t.base == "unknown":
        assert "f2" not in cols  # nothing to count for a column that holds no values
        return
    col = cols["f2"]
    b = STATS_ID_BASE + BLOCK * 2
    assert col["field-id"] == b == column_block(2)
    inner = _opt_type(col)
    assert inner["type"] == "record"
    ids = {f["name"]: f["field-id"] for f in inner["fields"]}
    expected = {"value_count": b + 1, "null_value_count": b + 2, "tight_bounds": b + 7, "column_size_in_bytes": b + 8}
    if t.base in ("float", "double"):
        expected["nan_value_count"] = b + 3
    if t.base in ("string", "binary"):
        expected["avg_value_size_in_bytes"] = b + 4
    if t.base not in ("variant",):
        expected["lower_bound"] = b + 5
        expected["upper_bound"] = b + 6
    assert ids == expected
    fields = {f["name"]: _opt_type(f) for f in inner["fields"]}
    assert fields["value_count"] == "long" and fields["tight_bounds"] == "boolean"
    if t.base in ("geometry", "geography"):
        lower = fields["lower_bound"]
        assert lower["type"] == "record"
        assert [f["name"] for f in lower["fields"]] == ["x", "y", "z", "m"]
        assert lower["fields"][0]["type"] == "double" and _opt_type(lower["fields"][2]) == "double"
        point_ids = [f["field-id"] for f in lower["fields"] + fields["upper_bound"]["fields"]]
        assert len(set(point_ids)) == 8 and all(b + 8 < i < b + BLOCK for i in point_ids)
    elif "lower_bound" in fields:
        from icectl.formats.avro_schemas import avro_type

        want = avro_type(t, {})
        got = fields["lower_bound"]
        assert got == want or (isinstance(want, dict) and got.get("type") == want["type"])


def _all_ids(obj) -> list[int]:
    out = []
    if isinstance(obj, dict):
        if "field-id" in obj:
            out.append(obj["field-id"])
        for v in obj.values():
            out.extend(_all_ids(v))
    elif isinstance(obj, list):
        for v in obj:
            out.extend(_all_ids(v))
    return out


@SETTINGS
@given(schema=schemas(4, with_extras=False))
def test_avro_layout_random_schema(schema):
    record = avro_schemas.content_stats_schema(schema)
    cols = stats_columns(schema)
    assert [f["name"] for f in record["fields"]] == [f"f{fid}" for fid, _ in cols]
    ids = _all_ids(record)
    assert len(ids) == len(set(ids)), "field ids must be unique"
    for f in record["fields"]:
        fid = int(f["name"][1:])
        block = column_block(fid)
        assert all(block <= i < block + BLOCK for i in _all_ids(f))
    # Every primitive field is covered, nested ones included, except unknown.
    from icectl.spec.types import walk_fields

    prims = [f.field_id for _, f in walk_fields(schema.fields)
             if isinstance(f.field_type, PrimitiveType) and f.field_type.base != "unknown"]
    assert [fid for fid, _ in cols] == prims
    fastavro.parse_schema(record)  # a valid Avro schema on its own


def test_nested_columns_get_stats():
    schema = Schema((
        NestedField(1, "s", StructType((NestedField(4, "a", primitive("int")),))),
        NestedField(2, "l", ListType(5, primitive("string"))),
        NestedField(3, "m", MapType(6, primitive("string"), 7, primitive("double"))),
    ))
    assert [fid for fid, _ in stats_columns(schema)] == [4, 5, 6, 7]


def test_stats_and_partition_share_named_types():
    """A v4 manifest whose partition struct and content_stats both hold a decimal, uuid and
    fixed of the same shape: the Avro named types must not clash."""
    import uuid
    from decimal import Decimal

    schema = Schema((NestedField(1, "d", primitive("decimal(9, 2)")), NestedField(2, "u", primitive("uuid")),
                     NestedField(3, "f", primitive("fixed[4]")), NestedField(4, "d2", primitive("decimal(9, 2)"))))
    spec = PartitionSpec(0, (PartitionField(1, 1000, "d", "identity"), PartitionField(2, 1001, "u", "identity"),
                             PartitionField(3, 1002, "f", "identity")))
    u = uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7")
    part = (Decimal("1.25"), u, b"abcd")
    lower = {1: to_bytes(primitive("decimal(9, 2)"), Decimal("1.25")), 2: u.bytes, 3: b"abcd",
             4: to_bytes(primitive("decimal(9, 2)"), Decimal("-3.10"))}
    stats = from_maps(schema, value_counts=None, null_value_counts=None, nan_value_counts=None,
                      lower_bounds=lower, upper_bounds=lower, column_sizes=None)
    df = DataFile("data/a.parquet", "parquet", part, 1, 10, content_stats=stats)
    blob = write_manifest([ManifestEntry(EntryStatus.ADDED, 1, None, None, df)], format_version=4, spec=spec,
                          schema=schema, content=ManifestContent.DATA,
                          content_stats_schema=avro_schemas.content_stats_schema(schema))
    json.loads(fastavro.reader(io.BytesIO(blob)).metadata["avro.schema"])
    from icectl.formats.manifest import partition_fields

    [e] = read_manifest(blob, ManifestFile("m.avro", len(blob), 0, added_snapshot_id=1),
                        partition_types=[t for _, _, t in partition_fields(spec, schema)])
    assert e.data_file.partition == part
    assert to_maps(schema, e.data_file.content_stats)["lower_bounds"] == lower
