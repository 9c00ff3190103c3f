"""``repair`` rebuilds a lost manifest list (issue 25 item 2) on tables Iceberg Java 1.10.2 wrote
(Spark as a client of the real REST server): v2 with position deletes and v3 with deletion vectors,
row lineage and merged manifests. The server's ``iceberg_tables`` rows are also a SQL catalog
(``jc``): icectl repairs through the SQL catalog and over REST in one test, and Spark reads the
result through the server."""
from __future__ import annotations

import json
import os

import yaml

from icectl.table.loaded import load_table


def _configure(rest_env) -> None:
    """Catalogs ``rc`` (the REST server) and ``jc`` (its SQLite file, as a SQL catalog)."""
    server = rest_env.server
    rest_env.config_path.write_text(yaml.safe_dump({"default-catalog": "rc", "catalog": {
        "rc": {"type": "rest", "uri": server.url, "rest.client.retry-backoff-ms": "10"},
        "jc": {"type": "sql", "uri": f"sqlite:///{server.sqlite}", "warehouse": str(server.warehouse)}}}))


def _icectl(rest_env, catalog: str, *args: str) -> tuple[int, dict, str]:
    code, out, err = rest_env.cli("-c", catalog, "-o", "json", *args)
    return code, json.loads(out) if out.strip() else {}, err


def _rows(spark, table: str, lineage: bool = False, version: int | None = None) -> list:
    extra = ", _row_id, _last_updated_sequence_number" if lineage else ""
    at = f" VERSION AS OF {version}" if version is not None else ""
    return spark.sql(f"SELECT id, cat, qty{extra} FROM rc.{table}{at} ORDER BY id")


def _lose_head_list(rest_env, table: str, *, also_own_manifest: str | None = None) -> int:
    """Delete the head's manifest list (and, with ``also_own_manifest`` ``data``/``deletes``, the
    head's own manifest of that content); the head's snapshot id."""
    t = load_table(rest_env.catalog(), tuple(table.split(".")))
    head = t.metadata.current_snapshot
    if also_own_manifest:
        [m] = [m for m in t.manifests(head) if m.added_snapshot_id == head.snapshot_id
               and (m.content == 1) == (also_own_manifest == "deletes")]
        os.unlink(m.manifest_path)
    os.unlink(t.resolve(head.manifest_list))
    return head.snapshot_id


def _validate_clean(rest_env, catalog: str, table: str) -> None:
    code, doc, err = _icectl(rest_env, catalog, "validate", table, "--deep")
    assert code == 0, [f for f in doc.get("findings", []) if f["severity"] == "error"] or err


def test_lost_manifest_list_rebuilt_on_sql_and_rest_java_reads_the_rows(rest_env, spark_rest):
    _configure(rest_env)
    ns = rest_env.namespace
    spark_rest.sql(f"CREATE NAMESPACE rc.{ns}")
    v2, v3 = f"{ns}.pos", f"{ns}.dv"
    for table, version, extra in ((v2, 2, ""), (v3, 3, ", 'commit.manifest.min-count-to-merge'='2'")):
        spark_rest.sql(f"CREATE TABLE rc.{table} (id bigint, cat string, qty int) USING iceberg PARTITIONED BY (cat) "
                       f"TBLPROPERTIES ('format-version'='{version}', 'write.delete.mode'='merge-on-read'{extra})")
        for i in range(3):
            rows = ", ".join(f"({i * 10 + k}, '{'abc'[k % 3]}', {k})" for k in range(6))
            spark_rest.sql(f"INSERT INTO rc.{table} VALUES {rows}")
        spark_rest.sql(f"DELETE FROM rc.{table} WHERE id IN (1, 14, 22)")  # position deletes / DVs

    # v2, through the SQL catalog: the head (the DELETE) lost its list and its delete manifest
    before_delete = spark_rest.sql(f"SELECT snapshot_id FROM rc.{v2}.snapshots ORDER BY committed_at DESC")[1][0]
    head = _lose_head_list(rest_env, v2, also_own_manifest="deletes")
    code, plan, err = _icectl(rest_env, "jc", "repair", v2, "--dry-run")
    assert code == 0, err
    b = plan["refs"][0]["manifest_list"]
    assert b["snapshot_id"] == head and b["complete"] is False and b["parent_list"] == "read"
    diffs = {c["key"]: c["rebuilt"] - c["recorded"] for c in b["checks"] if c["rebuilt"] != c["recorded"]}
    assert diffs["total-delete-files"] < 0 and diffs["total-position-deletes"] == -3 and \
        diffs["added-delete-files"] < 0, diffs
    assert b["may_be_missing"], b  # Java numbers the commit's manifests: the lost one is a gap
    code, refused, err = _icectl(rest_env, "jc", "repair", v2, "--yes")
    assert code == 19 and refused["applied"] is False and "--accept-loss" in err
    code, done, err = _icectl(rest_env, "jc", "repair", v2, "--yes", "--accept-loss")
    assert code == 0 and done["applied"] and done["refs"][0]["operation"] == "overwrite", err
    # what is left: the parent's files, the rows the lost delete file deleted are back
    assert _rows(spark_rest, v2) == _rows(spark_rest, v2, version=before_delete)
    _validate_clean(rest_env, "jc", v2)

    # v2 again, over REST: a later DELETE's list lost, proven complete
    spark_rest.sql(f"DELETE FROM rc.{v2} WHERE id IN (2, 25)")
    want = _rows(spark_rest, v2)
    _lose_head_list(rest_env, v2)
    code, plan, err = _icectl(rest_env, "rc", "repair", v2, "--dry-run")
    assert code == 0 and plan["refs"][0]["manifest_list"]["complete"], plan["refs"][0]["manifest_list"]
    code, done, err = _icectl(rest_env, "rc", "repair", v2, "--yes")
    assert code == 0 and done["refs"][0]["operation"] == "replace", err
    assert _rows(spark_rest, v2) == want
    _validate_clean(rest_env, "rc", v2)

    # v3 through the SQL catalog: the head is an append that merged manifests (EXISTING entries of
    # the parent's files, deletion vectors kept); the rows keep their row ids and sequence numbers
    spark_rest.sql(f"INSERT INTO rc.{v3} VALUES (100, 'a', 1), (101, 'b', 2)")
    want = _rows(spark_rest, v3, lineage=True)
    manifests = spark_rest.sql(f"SELECT count(*) FROM rc.{v3}.manifests WHERE content = 0")[0][0]
    assert manifests < 4  # merged
    _lose_head_list(rest_env, v3)
    code, plan, err = _icectl(rest_env, "jc", "repair", v3, "--dry-run")
    b = plan["refs"][0]["manifest_list"]
    assert code == 0 and b["complete"] and b["parent_manifests_replaced"] >= 1, b
    assert {c["key"] for c in b["checks"]} >= {"total-records", "total-delete-files", "added-rows"}
    code, done, err = _icectl(rest_env, "jc", "repair", v3, "--yes")
    assert code == 0 and done["refs"][0]["operation"] == "replace", err
    assert _rows(spark_rest, v3, lineage=True) == want
    _validate_clean(rest_env, "rc", v3)
    spark_rest.sql(f"INSERT INTO rc.{v3} VALUES (102, 'c', 3)")  # Java commits on top of the repair
    assert len(_rows(spark_rest, v3)) == len(want) + 1
