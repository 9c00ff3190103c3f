"""Identical pairs of tables for the differential tests of ``icectl alter`` against Iceberg Java:
both are created by Spark (Iceberg Java 1.10.2) with the same DDL in the Hadoop catalog ``hc``;
icectl changes one, Java's own API (``UpdateSchema``, ``UpdatePartitionSpec``,
``ReplaceSortOrder``, ``UpdateProperties``, in one ``Transaction`` when there are several) changes
the other, and their schemas, specs, sort orders, ids and properties must be the same.
"""
from __future__ import annotations

import io
import itertools
import json
from dataclasses import dataclass
from typing import Any, Callable

from icectl.cli.context import Env
from icectl.cli.main import run

_counter = itertools.count(1)


def java_type(jvm, text: str):
    """The Java ``Type`` of a compact type (``long``, ``struct<a: int>``) through Java's SchemaParser."""
    from icectl.expr.schema import parse_type

    t = parse_type(text, "test").to_json()
    schema = {"type": "struct", "fields": [{"id": 0, "name": "x", "required": False, "type": t}]}
    return jvm.org.apache.iceberg.SchemaParser.fromJson(json.dumps(schema)).findType(0)


def normalized(md) -> dict[str, Any]:
    """What must match: every schema, spec and sort order with its ids, the current and last ids,
    the properties (defaults compared as values: Java and icectl may spell a timestamp
    differently; a name mapping compared with its names as sets)."""
    from icectl.spec.conversions import from_json
    from icectl.spec.evolution import index_by_id

    def schema_json(s) -> dict:
        d = s.to_json()
        fields = index_by_id(s.as_struct)

        def fix(obj: Any) -> Any:
            if isinstance(obj, dict):
                out = {k: fix(v) for k, v in obj.items()}
                if "id" in obj and ("initial-default" in obj or "write-default" in obj):
                    t = fields[obj["id"]].field_type
                    for k in ("initial-default", "write-default"):
                        if k in obj:
                            out[k] = repr(from_json(t, obj[k]))
                return out
            if isinstance(obj, list):
                return [fix(x) for x in obj]
            return obj

        return fix(d)

    def mapping(text: str) -> Any:
        def norm(x: Any) -> Any:
            if isinstance(x, list):
                return sorted((norm(i) for i in x), key=json.dumps)
            if isinstance(x, dict):
                return {k: (sorted(v) if k == "names" else norm(v)) for k, v in x.items()}
            return x

        return norm(json.loads(text))

    props = {k: (mapping(v) if k == "schema.name-mapping.default" else v) for k, v in md.properties.items()}
    return {
        "schemas": [schema_json(s) for s in md.schemas], "current-schema-id": md.current_schema_id,
        "last-column-id": md.last_column_id,
        "specs": [s.to_json(md.format_version) for s in md.partition_specs], "default-spec-id": md.default_spec_id,
        "last-partition-id": md.last_partition_id,
        "sort-orders": [o.to_json() for o in md.sort_orders], "default-sort-order-id": md.default_sort_order_id,
        "properties": props, "format-version": md.format_version,
    }


@dataclass
class Pair:
    spark: Any
    warehouse: str
    ice: str  # db.NAME changed by icectl
    java: str  # db.NAME changed by Iceberg Java

    @property
    def jvm(self):
        return self.spark._jvm

    def jtable(self, name: str | None = None):
        from java_tables import java_table

        return java_table(self.spark, f"hc.{name or self.java}")

    def metadata(self, name: str):
        from icectl.catalog import build_catalog, resolve_catalog_config
        from icectl.table.loaded import load_table

        catalog = build_catalog(resolve_catalog_config(None, warehouse=self.warehouse))
        return load_table(catalog, tuple(name.split("."))).metadata

    def icectl(self, *args: str, expect: int = 0) -> tuple[dict | None, str]:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        code = run(["--warehouse", self.warehouse, "-o", "json", *args], env)
        err = env.stderr.getvalue()
        assert code == expect, f"icectl {' '.join(args)} exited {code}: {err}"
        out = env.stdout.getvalue()
        return (json.loads(out) if out.strip() else None), err

    def alter(self, *args: str) -> dict:
        doc, _ = self.icectl("alter", self.ice, *args, "--yes")
        return doc  # type: ignore[return-value]

    def both(self, args: list[str], java: Callable[[Any, Any], None]) -> dict:
        """icectl ``alter`` with ``args`` on one table, ``java(table, jvm)`` on the other; they
        must agree. Returns icectl's JSON document."""
        doc = self.alter(*args)
        java(self.jtable(), self.jvm)
        self.assert_same()
        return doc

    def setup(self, java: Callable[[Any, Any], None]) -> None:
        """The same change made by Java on both tables (a history to start from)."""
        for name in (self.ice, self.java):
            java(self.jtable(name), self.jvm)
        self.assert_same()

    def assert_same(self) -> None:
        ours, theirs = normalized(self.metadata(self.ice)), normalized(self.metadata(self.java))
        for key in ours:
            assert ours[key] == theirs[key], f"{key} differs:\nicectl: {ours[key]}\njava:   {theirs[key]}"

    def refused(self, args: list[str], message: str, java: Callable[[Any, Any], None] | None = None,
                java_message: str | None = None) -> str:
        """icectl refuses with exit code 2 and ``message`` and writes nothing; Java refuses too."""
        before = self.metadata(self.ice)
        _, err = self.icectl("alter", self.ice, *args, "--yes", expect=2)
        error = json.loads(err)["error"]
        assert message in error["message"], error
        assert "\n" not in error["message"]
        assert self.metadata(self.ice) == before
        if java is not None:
            try:
                java(self.jtable(), self.jvm)
            except Exception as e:  # noqa: BLE001 - py4j or pyspark's converted exception
                if java_message is not None:
                    assert java_message in str(e), str(e)[:2000]
            else:
                raise AssertionError(f"Java accepted what icectl refuses: {args}")
        return error["message"]


def make_pair(spark, warehouse: str, columns: str, *, partitioned_by: str | None = None, version: int = 2,
              properties: dict[str, str] | None = None) -> Pair:
    n = next(_counter)
    names = (f"db.alt{n}_ice", f"db.alt{n}_java")
    props = {"format-version": str(version), **(properties or {})}
    tbl = ", ".join(f"'{k}'='{v}'" for k, v in props.items())
    for name in names:
        spark.sql(f"CREATE TABLE hc.{name} ({columns}) USING iceberg "
                  + (f"PARTITIONED BY ({partitioned_by}) " if partitioned_by else "") + f"TBLPROPERTIES ({tbl})")
    pair = Pair(spark, warehouse, *names)
    pair.assert_same()
    return pair


def transaction(*steps: Callable[[Any, Any], Any]) -> Callable[[Any, Any], None]:
    """Java: the steps (each gets a transaction and the jvm, and commits its own update) as one
    transaction, one commit."""
    def run_all(table, jvm) -> None:
        tx = table.newTransaction()
        for s in steps:
            s(tx, jvm)
        tx.commitTransaction()

    return run_all
