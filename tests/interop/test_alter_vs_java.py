"""``icectl alter`` against Iceberg Java 1.10.2 (the oracle): every kind of schema, partition,
sort order and property change, made by icectl on one table and by Java's own UpdateSchema,
UpdatePartitionSpec, ReplaceSortOrder and UpdateProperties on an identical copy, gives the same
schemas, specs, sort orders and properties, ids included (tests/interop/alter_pairs.py); what Java
refuses, icectl refuses with exit code 2 and writes nothing."""
from __future__ import annotations

import pytest

from alter_pairs import java_type, make_pair, transaction

pytestmark = [pytest.mark.interop, pytest.mark.spark]

WIDE = ("id bigint NOT NULL, name string, qty int, price decimal(10,2), score float, ts timestamp, d date, "
        "info struct<city: string, zip: int>, points array<struct<x: double, y: double>>, "
        "attrs map<string, struct<v: int>>, tags array<string>")


@pytest.fixture
def pair(spark, oracle_warehouse, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)

    def make(columns: str = WIDE, **kw):
        return make_pair(spark, str(oracle_warehouse), columns, **kw)

    return make


def E(jvm):
    return jvm.org.apache.iceberg.expressions.Expressions


def lit(jvm, value):
    if isinstance(value, str) and value.startswith("decimal:"):
        value = jvm.java.math.BigDecimal(value[len("decimal:"):])
    return jvm.org.apache.iceberg.expressions.Literal.of(value)


# -- schema ------------------------------------------------------------------------------------------------

def test_add_columns_anywhere_with_nested_types(pair):
    p = pair()

    def java(t, jvm):
        u = t.updateSchema()
        u.addColumn(None, "note", java_type(jvm, "string"), "free text", None)
        u.addColumn(None, "s", java_type(jvm, "struct<a: int, b: list<string>, c: map<string, struct<x: int>>>"),
                    None, None)
        u.moveFirst("s")
        u.addColumn("info", "country", java_type(jvm, "string"), None, None)
        u.moveAfter("info.country", "info.city")
        u.addColumn("points", "z", java_type(jvm, "double"), None, None)
        u.addColumn("attrs", "w", java_type(jvm, "string"), None, None)
        u.addColumn(None, "m", java_type(jvm, "map<string, list<int>>"), None, None)
        u.moveBefore("m", "qty")
        u.commit()

    doc = p.both(["--add-column", "note string comment 'free text'",
                  "--add-column", "s struct<a: int, b: list<string>, c: map<string, struct<x: int>>> first",
                  "--add-column", "info.country string after city", "--add-column", "points.z double",
                  "--add-column", "attrs.w string", "--add-column", "m map<string, list<int>> before qty"], java)
    assert doc["applied"] is True
    assert [u["action"] for u in doc["commits"][0]["updates"]] == ["add-schema", "set-current-schema"]
    assert doc["commits"][0]["updates"][1]["schema-id"] == -1
    assert {r["type"] for r in doc["commits"][0]["requirements"]} == {
        "assert-table-uuid", "assert-last-assigned-field-id", "assert-current-schema-id"}


def test_drop_rename_promote_nullability_and_doc(pair):
    p = pair()

    def java(t, jvm):
        u = t.updateSchema()
        u.deleteColumn("tags")
        u.renameColumn("qty", "quantity")
        u.renameColumn("info.zip", "postcode")
        u.updateColumn("qty", java_type(jvm, "long"))
        u.updateColumn("score", java_type(jvm, "double"))
        u.updateColumn("price", java_type(jvm, "decimal(12,2)"))
        u.makeColumnOptional("id")
        u.updateColumnDoc("name", "the name")
        u.commit()

    p.both(["--drop-column", "tags", "--rename-column", "qty=quantity", "--rename-column", "info.zip=postcode",
            "--set-type", "quantity=long", "--set-type", "score=double", "--set-type", "price=decimal(12, 2)",
            "--make-optional", "id", "--set-doc", "name=the name"], java)
    # the element of a list, nested fields: by their full names
    p.both(["--set-type", "points.element.x=double", "--make-optional", "points.element",
            "--drop-column", "info.city"],
           lambda t, jvm: t.updateSchema().deleteColumn("info.city").makeColumnOptional("points.element").commit())


def test_moves(pair):
    p = pair()
    p.both(["--move-column", "ts first", "--move-column", "name after price", "--move-column", "info.zip before city",
            "--move-column", "points.y first"],
           lambda t, jvm: t.updateSchema().moveFirst("ts").moveAfter("name", "price")
           .moveBefore("info.zip", "info.city").moveFirst("points.y").commit())


def test_drop_and_add_a_column_again_gets_a_new_id(pair):
    p = pair()
    p.both(["--drop-column", "qty", "--add-column", "qty string"],
           lambda t, jvm: t.updateSchema().deleteColumn("qty").addColumn("qty", java_type(jvm, "string")).commit())


def test_an_identical_schema_is_reused(pair):
    p = pair()
    p.both(["--rename-column", "name=label"], lambda t, jvm: t.updateSchema().renameColumn("name", "label").commit())
    doc = p.both(["--rename-column", "label=name"],
                 lambda t, jvm: t.updateSchema().renameColumn("label", "name").commit())
    assert p.metadata(p.ice).current_schema_id == 0
    assert doc["commits"][0]["updates"] == [{"action": "set-current-schema", "schema-id": 0}]


def test_identifier_fields_in_java_hash_order(pair):
    cols = ", ".join(f"c{i} int NOT NULL" for i in range(1, 21)) + ", f double NOT NULL, o int"
    p = pair(cols)
    p.both(["--set-identifier-fields", "c17, c3, c2"],
           lambda t, jvm: t.updateSchema().setIdentifierFields(["c17", "c3", "c2"]).commit())
    assert p.metadata(p.ice).schema.identifier_field_ids == (17, 2, 3)  # java.util.HashSet's order
    p.both(["--rename-column", "c17=k"], lambda t, jvm: t.updateSchema().renameColumn("c17", "k").commit())
    p.refused(["--drop-column", "c3"], "identifier field",
              lambda t, jvm: t.updateSchema().deleteColumn("c3").commit(), "Cannot delete identifier field")
    p.refused(["--set-identifier-fields", "f"], "float and double are not allowed",
              lambda t, jvm: t.updateSchema().setIdentifierFields(["f"]).commit(), "must not be float or double")
    p.refused(["--set-identifier-fields", "o"], "optional",
              lambda t, jvm: t.updateSchema().setIdentifierFields(["o"]).commit(), "not a required field")
    p.both(["--drop-column", "c3", "--set-identifier-fields", "k"],
           lambda t, jvm: t.updateSchema().deleteColumn("c3").setIdentifierFields(["k"]).commit())


def test_v3_defaults(pair):
    p = pair(version=3)

    def java(t, jvm):
        u = t.updateSchema()
        u.addColumn(None, "n", java_type(jvm, "int"), None, lit(jvm, 5))
        u.addRequiredColumn(None, "r", java_type(jvm, "string"), None, lit(jvm, "x"))
        u.addColumn(None, "d2", java_type(jvm, "date"), None, lit(jvm, "2024-01-02"))
        u.addColumn(None, "amount", java_type(jvm, "decimal(9, 2)"), None, lit(jvm, "decimal:1.50"))
        u.commit()

    p.both(["--add-column", "n int default 5", "--add-column", "r string not null default 'x'",
            "--add-column", "d2 date default '2024-01-02'", "--add-column", "amount decimal(9,2) default 1.50"], java)
    p.both(["--set-default", "n=7", "--drop-default", "d2", "--set-type", "n=long"],
           lambda t, jvm: t.updateSchema().updateColumnDefault("n", lit(jvm, 7))
           .updateColumnDefault("d2", None).updateColumn("n", java_type(jvm, "long")).commit())
    # required: only a column added in the same change, with a default
    p.both(["--add-column", "q int default 1", "--make-required", "q"],
           lambda t, jvm: t.updateSchema().addColumn(None, "q", java_type(jvm, "int"), None, lit(jvm, 1))
           .requireColumn("q").commit())
    schema = p.metadata(p.ice).schema
    n = schema.field_by_name("n")
    assert (n.initial_default, n.write_default) == (5, 7)
    p.refused(["--make-required", "n"], "rows already written may hold nulls",
              lambda t, jvm: t.updateSchema().requireColumn("n").commit(), "optional -> required")


def test_defaults_and_required_columns_refused_before_v3(pair):
    p = pair()
    p.refused(["--add-column", "n int default 5"], "column defaults need format version 3",
              lambda t, jvm: t.updateSchema().addColumn(None, "n", java_type(jvm, "int"), None, lit(jvm, 5)).commit(),
              "not supported until v3")
    p.refused(["--add-column", "r string not null"], "without a default value",
              lambda t, jvm: t.updateSchema().addRequiredColumn("r", java_type(jvm, "string")).commit(),
              "cannot add required column without a default value")


def test_name_mapping_and_per_column_properties_follow_the_schema(pair):
    p = pair("id bigint NOT NULL, name string, qty int, info struct<city: string, zip: int>")

    def mapping(t, jvm):
        m = jvm.org.apache.iceberg.mapping.MappingUtil.create(t.schema())
        t.updateProperties().set("schema.name-mapping.default", jvm.org.apache.iceberg.mapping.NameMappingParser
                                 .toJson(m)).set("write.metadata.metrics.column.qty", "full") \
            .set("write.parquet.bloom-filter-enabled.column.name", "true").commit()

    p.setup(mapping)
    doc = p.both(["--rename-column", "qty=quantity", "--drop-column", "name", "--add-column", "note string",
                  "--add-column", "info.country string", "--rename-column", "info.city=town"],
                 lambda t, jvm: t.updateSchema().renameColumn("qty", "quantity").deleteColumn("name")
                 .addColumn("note", java_type(jvm, "string")).addColumn("info", "country", java_type(jvm, "string"))
                 .renameColumn("info.city", "town").commit())
    props = p.metadata(p.ice).properties
    assert props["write.metadata.metrics.column.quantity"] == "full"
    assert not any(k.endswith(".column.qty") or k.endswith(".column.name") for k in props)
    actions = [u["action"] for u in doc["commits"][0]["updates"]]
    assert actions == ["add-schema", "set-current-schema", "set-properties", "set-properties", "remove-properties"]


def test_refusals_match_java(pair):
    p = pair()
    p.refused(["--set-type", "qty=string"], "the spec allows only int to long",
              lambda t, jvm: t.updateSchema().updateColumn("qty", java_type(jvm, "string")).commit(),
              "Cannot change column type")
    p.refused(["--set-type", "price=decimal(12, 3)"], "scale cannot change",
              lambda t, jvm: t.updateSchema().updateColumn("price", java_type(jvm, "decimal(12,3)")).commit())
    p.refused(["--set-type", "price=decimal(9, 2)"], "precision can only be widened",
              lambda t, jvm: t.updateSchema().updateColumn("price", java_type(jvm, "decimal(9,2)")).commit())
    p.refused(["--make-required", "name"], "rows already written may hold nulls",
              lambda t, jvm: t.updateSchema().requireColumn("name").commit(), "optional -> required")
    p.refused(["--add-column", "name string"], "already exists",
              lambda t, jvm: t.updateSchema().addColumn("name", java_type(jvm, "string")).commit(), "already exists")
    p.refused(["--drop-column", "nope"], "there is no column 'nope'",
              lambda t, jvm: t.updateSchema().deleteColumn("nope").commit(), "Cannot delete missing column")
    p.refused(["--add-column", "qty.x int"], "not a struct",
              lambda t, jvm: t.updateSchema().addColumn("qty", "x", java_type(jvm, "int")).commit(),
              "Cannot add to non-struct column")
    p.refused(["--move-column", "info.zip after name"], "different structs",
              lambda t, jvm: t.updateSchema().moveAfter("info.zip", "name").commit(), "to a different struct")
    p.refused(["--drop-column", "attrs.key"], "cannot drop the keys of a map",
              lambda t, jvm: t.updateSchema().deleteColumn("attrs.key").commit(), "Cannot delete map keys")
    p.refused(["--drop-column", "name", "--rename-column", "name=n"], "dropped in the same change",
              lambda t, jvm: t.updateSchema().deleteColumn("name").renameColumn("name", "n").commit())


# -- partition specs -----------------------------------------------------------------------------------------

def test_partition_evolution_v2_reuses_field_ids_and_specs(pair):
    p = pair(partitioned_by="days(ts)")

    def spec(t):
        return t.updateSpec()

    p.both(["--add-partition-field", "bucket(16, id)", "--add-partition-field", "truncate(4, name) AS name_prefix",
            "--add-partition-field", "qty"],
           lambda t, jvm: spec(t).addField(E(jvm).bucket("id", 16)).addField("name_prefix", E(jvm).truncate("name", 4))
           .addField("qty").commit())
    p.both(["--drop-partition-field", "ts_day", "--rename-partition-field", "id_bucket_16=shard"],
           lambda t, jvm: spec(t).removeField("ts_day").renameField("id_bucket_16", "shard").commit())
    # the same source and transform again: the field id it had (1000), from an earlier spec
    p.both(["--add-partition-field", "day(ts)"], lambda t, jvm: spec(t).addField(E(jvm).day("ts")).commit())
    assert [f.field_id for f in p.metadata(p.ice).spec.fields] == [1001, 1002, 1003, 1000]
    p.both(["--add-partition-field", "year(d)", "--add-partition-field", "hour(ts) AS hr"],
           lambda t, jvm: spec(t).addField(E(jvm).year("d")).addField("hr", E(jvm).hour("ts")).commit())
    p.both(["--drop-partition-field", "d_year", "--drop-partition-field", "hr"],
           lambda t, jvm: spec(t).removeField("d_year").removeField("hr").commit())
    p.both(["--drop-partition-field", "bucket(16, id)"],
           lambda t, jvm: spec(t).removeField(E(jvm).bucket("id", 16)).commit())
    # back to day(ts) alone: spec 0 again
    p.both(["--drop-partition-field", "name_prefix", "--drop-partition-field", "qty"],
           lambda t, jvm: spec(t).removeField("name_prefix").removeField("qty").commit())
    assert p.metadata(p.ice).default_spec_id == 0
    # a dropped partition source column, with its partition field, in one alter
    p.both(["--drop-column", "ts", "--drop-partition-field", "ts_day"],
           transaction(lambda tx, jvm: tx.updateSpec().removeField("ts_day").commit(),
                       lambda tx, jvm: tx.updateSchema().deleteColumn("ts").commit()))


def test_partition_evolution_v1_keeps_void_fields(pair):
    p = pair(partitioned_by="days(ts), bucket(4, id)", version=1)
    p.both(["--drop-partition-field", "ts_day"], lambda t, jvm: t.updateSpec().removeField("ts_day").commit())
    assert [f.transform for f in p.metadata(p.ice).spec.fields] == ["void", "bucket[4]"]
    # a new field named as the void one: the void field is renamed ts_day_1000; v1 ids are new
    p.both(["--add-partition-field", "day(ts)"], lambda t, jvm: t.updateSpec().addField(E(jvm).day("ts")).commit())
    assert [(f.field_id, f.name) for f in p.metadata(p.ice).spec.fields] == [
        (1000, "ts_day_1000"), (1001, "id_bucket"), (1002, "ts_day")]
    p.both(["--rename-partition-field", "id_bucket=b", "--add-partition-field", "truncate(2, name)"],
           lambda t, jvm: t.updateSpec().renameField("id_bucket", "b").addField(E(jvm).truncate("name", 2)).commit())


def test_partition_refusals_match_java(pair):
    p = pair(partitioned_by="days(ts)")
    p.refused(["--add-partition-field", "day(d)", "--add-partition-field", "month(d)"], "one time transform",
              lambda t, jvm: t.updateSpec().addField(E(jvm).day("d")).addField(E(jvm).month("d")).commit(),
              "Cannot add redundant partition field")
    p.refused(["--add-partition-field", "bucket(4, id) AS name"], "is the name of another column",
              lambda t, jvm: t.updateSpec().addField("name", E(jvm).bucket("id", 4)).commit(),
              "Cannot create identity partition sourced from different field in schema")
    p.refused(["--add-partition-field", "day(ts)"], "already has it as ts_day",
              lambda t, jvm: t.updateSpec().addField(E(jvm).day("ts")).commit(), "Cannot add duplicate partition")
    p.refused(["--add-partition-field", "day(name)"], "does not apply to name of type string",
              lambda t, jvm: t.updateSpec().addField(E(jvm).day("name")).commit())
    p.refused(["--add-partition-field", "truncate(4, score)"], "does not apply to score of type float",
              lambda t, jvm: t.updateSpec().addField(E(jvm).truncate("score", 4)).commit())
    p.refused(["--drop-partition-field", "nope"], "no field 'nope'",
              lambda t, jvm: t.updateSpec().removeField("nope").commit(), "Cannot find partition field to remove")
    p.refused(["--drop-column", "ts"], "partition field ts_day of the current spec uses it",
              lambda t, jvm: t.updateSchema().deleteColumn("ts").commit(), "Cannot find source column")
    p.refused(["--add-partition-field", "info"], "not a primitive type",
              lambda t, jvm: t.updateSpec().addField("info").commit())
    # a column may share its name only with an identity partition field of itself, in any spec
    conflict = "Cannot create identity partition sourced from different field in schema"
    p.refused(["--add-column", "ts_day string"], "has the name of partition field ts_day",
              lambda t, jvm: t.updateSchema().addColumn("ts_day", java_type(jvm, "string")).commit(), conflict)
    p.refused(["--rename-column", "name=ts_day"], "has the name of partition field ts_day",
              lambda t, jvm: t.updateSchema().renameColumn("name", "ts_day").commit(), conflict)
    p.setup(lambda t, jvm: t.updateSpec().addField(E(jvm).bucket("id", 4)).commit())
    p.setup(lambda t, jvm: t.updateSpec().removeField("id_bucket_4").commit())
    p.refused(["--add-column", "id_bucket_4 int"], "of spec 1",
              lambda t, jvm: t.updateSchema().addColumn("id_bucket_4", java_type(jvm, "int")).commit(), conflict)


# -- sort orders and properties ---------------------------------------------------------------------------------

def test_sort_orders(pair):
    p = pair()

    def order(t, jvm):
        no = jvm.org.apache.iceberg.NullOrder
        t.replaceSortOrder().desc(E(jvm).ref("id"), no.NULLS_LAST).asc(E(jvm).bucket("name", 4), no.NULLS_FIRST) \
            .asc(E(jvm).truncate("name", 2), no.NULLS_LAST).commit()

    sort = ["--sort-by", "id desc nulls last, bucket(4, name), truncate(2, name) asc nulls last"]
    p.both(sort, order)
    p.both(["--unsorted"], lambda t, jvm: t.replaceSortOrder().commit())
    p.both(sort, order)  # the same order again: order 1, not a new one
    assert [o.order_id for o in p.metadata(p.ice).sort_orders] == [0, 1]
    p.refused(["--drop-column", "name"], "sort order uses it",
              lambda t, jvm: t.updateSchema().deleteColumn("name").commit(), "Cannot find source column for sort field")


def test_properties(pair):
    p = pair()
    p.both(["--set-property", "a=1", "--set-property", "b=2"],
           lambda t, jvm: t.updateProperties().set("a", "1").set("b", "2").commit())
    doc, _ = p.icectl("properties", p.ice, "set", "a=1", "c=3", "--yes")
    p.jtable().updateProperties().set("a", "1").set("c", "3").commit()
    assert doc["commits"][0]["updates"] == [{"action": "set-properties", "updates": {"c": "3"}}]
    p.icectl("properties", p.ice, "unset", "b", "--yes")
    p.jtable().updateProperties().remove("b").commit()
    p.assert_same()
    listing, _ = p.icectl("properties", p.ice)
    assert listing == {"table": p.ice, "properties": p.metadata(p.java).properties}
    p.refused(["--set-property", "format-version=3"], "format-version is reserved")
    p.refused(["--set-property", "write.metadata.metrics.column.nope=full"], "there is no column 'nope'",
              lambda t, jvm: t.updateProperties().set("write.metadata.metrics.column.nope", "full").commit(),
              "Invalid metrics config")


def test_the_issue_example_is_one_java_transaction(pair):
    p = pair(partitioned_by="days(ts)", properties={"k2": "old"})
    doc = p.both(["--add-column", "note string", "--rename-column", "qty=quantity", "--set-type", "quantity=long",
                  "--add-partition-field", "truncate(4, name)", "--set-property", "k=v", "--remove-property", "k2"],
                 transaction(lambda tx, jvm: tx.updateSchema().addColumn("note", java_type(jvm, "string"))
                             .renameColumn("qty", "quantity").updateColumn("qty", java_type(jvm, "long")).commit(),
                             lambda tx, jvm: tx.updateSpec().addField(E(jvm).truncate("name", 4)).commit(),
                             lambda tx, jvm: tx.updateProperties().set("k", "v").remove("k2").commit()))
    assert [u["action"] for u in doc["commits"][0]["updates"]] == [
        "add-schema", "set-current-schema", "add-spec", "set-default-spec", "set-properties", "remove-properties"]
    assert p.metadata(p.ice).spec.fields[-1].name == "name_trunc_4"
