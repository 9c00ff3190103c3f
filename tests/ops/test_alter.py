"""``icectl.ops.evolve.alter`` on real tables in a file-system catalog, without Java: the ids it assigns
(the same rules the interop tests check against Iceberg Java), v3's type promotions and defaults
(which Iceberg Java 1.10 does not have), the properties that follow a schema change, the commit
(one commit; planned again after a concurrent change) and refusals that write nothing."""
from __future__ import annotations

import json

import pytest

from icectl.catalog import CatalogConfig, build_catalog
from icectl.errors import UnsupportedError, UsageError
from icectl.ops.evolve.alter import AlterRequest, commit_alter, plan_alter
from helpers import create_table
from icectl.spec.evolution import _java_string_hash, index_by_name, java_hash_set_order


@pytest.fixture
def catalog(tmp_path):
    return build_catalog(CatalogConfig("default", {"type": "hadoop", "warehouse": str(tmp_path / "wh")}))


def table(catalog, schema: str, *, name: str = "t", partition_by: str | None = None, sort_by: str | None = None,
          version: int = 2, properties: list[str] | None = None):
    return create_table(catalog, ("db", name), schema_text=schema, partition_by=partition_by, sort_by=sort_by,
                        format_version=version, properties=properties)


def alter(t, **kw):
    """Plan and commit; the table after."""
    return commit_alter(plan_alter(t, AlterRequest(**kw))).table


def fields(md) -> dict[str, int]:
    return index_by_name(md.schema.as_struct)


# -- ids ---------------------------------------------------------------------------------------------------

def test_new_ids_from_last_column_id_fields_before_their_children(catalog):
    t = table(catalog, "id:long!, info:struct<city:string>")  # ids 1, 2, 3
    t = alter(t, add_columns=["s struct<a: int, b: list<struct<x: int, y: int>>, c: map<string, int>>",
                              "info.zip int", "n long"])
    f = fields(t.metadata)
    assert [f[n] for n in ("s", "s.a", "s.b", "s.c", "s.b.element", "s.b.element.x", "s.b.element.y",
                           "s.c.key", "s.c.value", "info.zip", "n")] == [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14]
    assert t.metadata.last_column_id == 14 and t.metadata.current_schema_id == 1
    # dropped and added again: a new id; the old one is never reused
    t = alter(t, drop_columns=["n"], add_columns=["n string"])
    assert fields(t.metadata)["n"] == 15 and t.metadata.last_column_id == 15


def test_positions_moves_and_nested_names(catalog):
    t = table(catalog, "a:int, b:int, c:int, s:struct<x:int, y:int>")
    t = alter(t, add_columns=["d int first", "s.z int before x"], move_columns=["a after c", "s.y first"])
    md = t.metadata
    assert [f.name for f in md.schema.fields] == ["d", "b", "c", "a", "s"]
    assert [f.name for f in md.schema.fields[-1].field_type.fields] == ["y", "z", "x"]
    t = alter(t, add_columns=["e int"], after="b")
    assert [f.name for f in t.metadata.schema.fields] == ["d", "b", "e", "c", "a", "s"]


def test_identical_schema_spec_and_order_are_reused(catalog):
    t = table(catalog, "id:long!, name:string, ts:timestamptz", partition_by="day(ts)", sort_by="id")
    t = alter(t, rename_columns=["name=label"], add_partition_fields=["bucket(8, id)"], sort_by="label desc")
    assert (t.metadata.current_schema_id, t.metadata.default_spec_id, t.metadata.default_sort_order_id) == (1, 1, 2)
    plan = plan_alter(t, AlterRequest(rename_columns=["label=name"], drop_partition_fields=["id_bucket_8"],
                                      sort_by="id"))
    assert [u.to_json() for u in plan.updates] == [{"action": "set-current-schema", "schema-id": 0},
                                                   {"action": "set-default-spec", "spec-id": 0},
                                                   {"action": "set-default-sort-order", "sort-order-id": 1}]
    t = commit_alter(plan).table
    assert (len(t.metadata.schemas), len(t.metadata.partition_specs), len(t.metadata.sort_orders)) == (2, 2, 2)


def test_partition_field_ids_v2_recycled_v1_void(catalog):
    t = table(catalog, "id:long!, ts:timestamptz", partition_by="day(ts)")
    t = alter(t, add_partition_fields=["bucket(4, id)"])
    t = alter(t, drop_partition_fields=["bucket(4, id)"])
    assert [f.field_id for f in t.metadata.spec.fields] == [1000]
    t = alter(t, add_partition_fields=["bucket(4, id)"])  # the same source and transform: its old id
    assert [(f.field_id, f.name) for f in t.metadata.spec.fields] == [(1000, "ts_day"), (1001, "id_bucket_4")]
    assert t.metadata.last_partition_id == 1001 and t.metadata.default_spec_id == 1
    t = alter(t, drop_partition_fields=["id_bucket_4"])
    t = alter(t, add_partition_fields=["bucket(4, id) AS shard"])  # named otherwise: a new field, as in Java
    assert [(f.field_id, f.name) for f in t.metadata.spec.fields] == [(1000, "ts_day"), (1002, "shard")]
    v1 = table(catalog, "id:long!, ts:timestamptz", name="v1", partition_by="day(ts)", version=1)
    v1 = alter(v1, drop_partition_fields=["ts_day"])
    v1 = alter(v1, add_partition_fields=["day(ts)"])
    assert [(f.field_id, f.name, f.transform) for f in v1.metadata.spec.fields] == [
        (1000, "ts_day_1000", "void"), (1001, "ts_day", "day")]


# -- v3 ----------------------------------------------------------------------------------------------------

def test_v3_promotions(catalog):
    t = table(catalog, "id:long!, d:date, u:unknown, p:date", partition_by="day(p)", version=3)
    t = alter(t, add_columns=["e date default '2024-01-02'"])
    t = alter(t, set_types=["d=timestamp", "u=string", "p=timestamp_ns", "e=timestamp"])
    s = t.metadata.schema
    assert [str(s.field_by_name(n).field_type) for n in ("d", "u", "p", "e")] == [
        "timestamp", "string", "timestamp_ns", "timestamp"]
    e = s.field_by_name("e")
    assert e.initial_default == e.write_default == "2024-01-02T00:00:00.000000"
    for bad, why in (("d=timestamptz", "the spec allows only"), ("id=int", "the spec allows only")):
        with pytest.raises(UsageError, match=why):
            plan_alter(t, AlterRequest(set_types=[bad]))


def test_v3_promotions_refused_before_v3_and_for_identity_or_bucket_sources(catalog):
    v2 = table(catalog, "id:long!, d:date", name="v2")
    with pytest.raises(UsageError, match="needs format version 3"):
        plan_alter(v2, AlterRequest(set_types=["d=timestamp"]))
    t = table(catalog, "id:long!, d:date, b:date", partition_by="d, bucket(4, b)", version=3)
    with pytest.raises(UsageError, match="identity partition field, whose values would change"):
        plan_alter(t, AlterRequest(set_types=["d=timestamp"]))
    with pytest.raises(UsageError, match=r"bucket\[4\] partition field"):
        plan_alter(t, AlterRequest(set_types=["b=timestamp"]))


def test_v3_defaults(catalog):
    t = table(catalog, "id:long!", version=3)
    t = alter(t, add_columns=["n int not null default 5", "ts timestamptz default '2024-01-01 10:00:00+00:00'",
                              "price decimal(9, 2) default 1.5", "flag boolean default true"])
    s = t.metadata.schema
    n = s.field_by_name("n")
    assert (n.required, n.initial_default, n.write_default) == (True, 5, 5)
    assert s.field_by_name("price").initial_default == "1.50"
    assert s.field_by_name("flag").write_default is True
    t = alter(t, set_defaults=["n=6"], drop_defaults=["flag"])
    n, flag = t.metadata.schema.field_by_name("n"), t.metadata.schema.field_by_name("flag")
    assert (n.initial_default, n.write_default) == (5, 6)
    assert flag.has_initial_default and not flag.has_write_default
    for kw, why in ((dict(add_columns=["x int default 'abc'"]), "invalid default for x"),
                    (dict(add_columns=["x struct<a: int> default 1"]), "default can only be null"),
                    (dict(set_defaults=["n=99999999999"]), "invalid default for n"),
                    (dict(add_columns=["x int not null"]), "without a default value"),
                    (dict(make_required=["price"]), "rows already written may hold nulls")):
        with pytest.raises(UsageError, match=why):
            plan_alter(t, AlterRequest(**kw))


# -- properties that follow the schema -------------------------------------------------------------------------

def test_name_mapping_gains_new_names_and_fields(catalog):
    mapping = [{"field-id": 1, "names": ["id"]}, {"field-id": 2, "names": ["qty", "quantity_old"]},
               {"field-id": 3, "names": ["info"], "fields": [{"field-id": 4, "names": ["city"]}]}]
    t = table(catalog, "id:long!, qty:int, info:struct<city:string>",
              properties=[f"schema.name-mapping.default={json.dumps(mapping)}",
                          "write.metadata.metrics.column.qty=full", "write.parquet.stats-enabled.column.id=false"])
    t = alter(t, rename_columns=["qty=quantity"], add_columns=["info.zip int", "tags list<string>"],
              drop_columns=["id"])
    got = json.loads(t.metadata.properties["schema.name-mapping.default"])
    assert got == [{"field-id": 1, "names": ["id"]}, {"field-id": 2, "names": ["qty", "quantity_old", "quantity"]},
                   {"field-id": 3, "names": ["info"], "fields": [{"field-id": 4, "names": ["city"]},
                                                                {"field-id": 5, "names": ["zip"]}]},
                   {"field-id": 6, "names": ["tags"], "fields": [{"field-id": 7, "names": ["element"]}]}]
    props = t.metadata.properties
    assert props["write.metadata.metrics.column.quantity"] == "full"
    assert "write.metadata.metrics.column.qty" not in props
    assert "write.parquet.stats-enabled.column.id" not in props


# -- the commit --------------------------------------------------------------------------------------------

def test_one_commit_planned_again_after_a_concurrent_change(catalog):
    t = table(catalog, "id:long!, name:string")
    plan = plan_alter(t, AlterRequest(add_columns=["note string"], set_properties=["k=v"]))
    alter(t.refresh(), add_columns=["other int"])  # commits first: note's id moves from 3 to 4
    done = commit_alter(plan)
    assert done.attempts == 2
    md = done.table.metadata
    assert fields(md)["note"] == 4 and fields(md)["other"] == 3 and md.properties["k"] == "v"
    assert len(md.metadata_log) == 2  # create, the concurrent change, this one: one commit each


def test_a_concurrent_change_that_makes_it_invalid_is_refused(catalog):
    t = table(catalog, "id:long!, name:string")
    plan = plan_alter(t, AlterRequest(add_columns=["note string"]))
    alter(t.refresh(), add_columns=["note int"])
    with pytest.raises(UsageError, match="note: it already exists"):
        commit_alter(plan)


def test_refusals_write_nothing(catalog, tmp_path):
    import os

    t = table(catalog, "id:long!, name:string, ts:timestamptz", partition_by="day(ts)")

    def listing():
        return sorted(os.path.join(d, f) for d, _, fs in os.walk(tmp_path) for f in fs)

    before = listing()
    for kw, why in ((dict(drop_columns=["nope"]), "there is no column 'nope'"),
                    (dict(add_columns=["x nosuchtype"]), "unknown type"),
                    (dict(add_partition_fields=["day(name)"]), "day does not apply to name of type string"),
                    (dict(set_properties=["format-version=3"]), "format-version is reserved"),
                    (dict(set_properties=["current-snapshot-id=1"]), "reserved property"),
                    (dict(set_properties=["k=v"], remove_properties=["k"]), "set and remove the same"),
                    (dict(drop_columns=["ts"]), "partition field ts_day of the current spec uses it"),
                    (dict(add_partition_fields=["bucket(4, id, name)"]), "no multi-argument transform"),
                    (dict(sort_by="nope"), "there is no column 'nope'"),
                    (dict(), "nothing to change"),
                    (dict(add_columns=["a int", "b int"], first=True), "--first and --after place the one"),
                    (dict(rename_columns=["id"]), "must be OLD=NEW"),
                    (dict(rename_columns=["name=id"]), "two columns would be named id")):
        with pytest.raises(UsageError, match=why):
            plan_alter(t, AlterRequest(**kw))
    assert listing() == before


def test_a_table_opened_by_path_is_read_only(catalog):
    from icectl.catalog.path import PathCatalog
    from icectl.table.loaded import load_table

    t = table(catalog, "id:long!")
    pc = PathCatalog(t.metadata_location, t.io)
    with pytest.raises(UnsupportedError, match="read-only"):
        plan_alter(load_table(pc, pc.identifier()), AlterRequest(add_columns=["x int"]))


# -- Java's hash set order ----------------------------------------------------------------------------------

def test_java_hash_set_order():
    assert _java_string_hash("hello") == 99162322  # "hello".hashCode()
    assert _java_string_hash("\u00e9t\u00e9") == (0xE9 * 31 * 31 + 0x74 * 31 + 0xE9)
    assert java_hash_set_order([3, 2, 17]) == [17, 2, 3]  # buckets 1, 2, 3 of 16
    assert java_hash_set_order([33, 1]) == [33, 1]  # one bucket: insertion order
    assert java_hash_set_order(list(range(20, 0, -1))) == sorted(range(1, 21), key=lambda i: (i & 31, 0))


# -- expressions -------------------------------------------------------------------------------------------

def test_changes_inside_a_dropped_struct_are_refused_moves_are_not(catalog):
    t = table(catalog, "id:long!, info:struct<city:string, zip:int>")
    for kw in (dict(rename_columns=["info.city=town"]), dict(set_types=["info.zip=long"]),
               dict(set_docs=["info.zip=code"])):
        with pytest.raises(UsageError, match="info is dropped in the same change"):
            plan_alter(t, AlterRequest(drop_columns=["info"], **kw))
    t = alter(t, drop_columns=["info"], move_columns=["info.zip first"])  # as Java: nothing left to move
    assert [f.name for f in t.metadata.schema.fields] == ["id"]
