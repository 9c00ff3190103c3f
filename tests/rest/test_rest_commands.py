"""Every icectl command on a table of the real REST server, with Spark (Iceberg Java, a REST
client of the same server) reading what icectl committed and icectl reading what Spark
committed; and a Spark commit landing between icectl's load and its commit (409, re-plan)."""
from __future__ import annotations

import json

import pytest

from rest_proxy import Fault


@pytest.fixture
def demo(rest_env):
    code, out, err = rest_env.cli("-o", "json", "demo", rest_env.namespace)
    assert code == 0, err
    return json.loads(out)


def spark_count(spark_rest, table: str, ref: str | None = None) -> int:
    suffix = f" VERSION AS OF '{ref}'" if ref else ""
    return spark_rest.sql(f"SELECT count(*) FROM rc.{table}{suffix}")[0][0]


def icectl_json(rest_env, *args: str):
    code, out, err = rest_env.cli("-o", "json", *args)
    assert code == 0, (args, err)
    return json.loads(out)


def test_every_command_on_a_rest_table_and_spark_agrees(rest_env, demo, spark_rest):
    t = rest_env.table()
    records = {r["name"]: r["records"] for r in demo["refs"]}
    # Spark reads the table icectl built through the server: rows of every ref, every snapshot.
    assert spark_count(spark_rest, t) == records["main"]
    assert spark_count(spark_rest, t, "audit") == records["audit"]
    assert spark_count(spark_rest, t, "before-overwrite") == records["before-overwrite"]
    java_ids = {r[0] for r in spark_rest.sql(f"SELECT snapshot_id FROM rc.{t}.snapshots")}
    assert java_ids == {s["snapshot_id"] for s in demo["snapshots"]}

    # Reads.
    d = icectl_json(rest_env, "describe", t)
    assert d["metadata_location"].startswith(str(rest_env.server.warehouse))
    snaps = icectl_json(rest_env, "snapshots", t)
    assert {s["snapshot_id"] for s in snaps} == java_ids
    files = icectl_json(rest_env, "files", t)
    assert len(files) == spark_rest.sql(f"SELECT count(*) FROM rc.{t}.files")[0][0]
    assert icectl_json(rest_env, "validate", t, "--deep")["ok"] is True
    assert [r["name"] for r in icectl_json(rest_env, "refs", t)][0] == "main"
    assert t in icectl_json(rest_env, "list")["tables"]

    # Changes, each read back by Spark.
    staged = demo["staged_snapshot_id"]
    staged_records = next(s["records"] for s in demo["snapshots"] if s["snapshot_id"] == staged)
    r = icectl_json(rest_env, "cherry-pick", t, str(staged), "--yes")
    assert r["applied"] and spark_count(spark_rest, t) == staged_records
    tag = next(x for x in demo["refs"] if x["name"] == "before-overwrite")
    r = icectl_json(rest_env, "rollback", t, "--to-snapshot", str(tag["snapshot_id"]), "--yes")
    assert r["applied"] and spark_count(spark_rest, t) == tag["records"]
    icectl_json(rest_env, "branch", "create", t, "nightly", "--yes")
    icectl_json(rest_env, "tag", "create", t, "t1", "--max-ref-age", "30d", "--yes")
    refs = {row[0]: row[1] for row in spark_rest.sql(f"SELECT name, type FROM rc.{t}.refs")}
    assert refs["nightly"] == "BRANCH" and refs["t1"] == "TAG"
    main_rows = spark_count(spark_rest, t)
    r = icectl_json(rest_env, "rewrite-deletes", t, "--yes")
    assert r["applied"] and spark_count(spark_rest, t) == main_rows
    r = icectl_json(rest_env, "remove-orphans", t, "--yes")
    assert r["applied"] and len(r["deleted_files"]) == 1
    r = icectl_json(rest_env, "expire", t, "--older-than", "0s", "--retain-last", "2", "--yes")
    assert r["applied"] and r["expired_snapshot_ids"] and r["deleted_files"]
    left = {row[0] for row in spark_rest.sql(f"SELECT snapshot_id FROM rc.{t}.snapshots")}
    assert not left & set(r["expired_snapshot_ids"])
    assert spark_count(spark_rest, t) == main_rows
    r = icectl_json(rest_env, "compact", t, "--rewrite-all", "--yes")
    assert r["applied"] and r["committed"] and spark_count(spark_rest, t) == main_rows
    r = icectl_json(rest_env, "upgrade-format", t, "--to", "3", "--yes")
    assert r["applied"]
    assert spark_count(spark_rest, t) == main_rows
    assert icectl_json(rest_env, "describe", t)["format_version"] == 3

    # Spark commits; icectl reads it.
    spark_rest.sql(f"INSERT INTO rc.{t} SELECT * FROM rc.{t} LIMIT 3")
    head = spark_rest.sql(f"SELECT snapshot_id FROM rc.{t}.snapshots ORDER BY committed_at DESC LIMIT 1")[0][0]
    d = icectl_json(rest_env, "describe", t)
    assert d["current_snapshot"]["snapshot_id"] == head and d["current_snapshot"]["operation"] == "append"
    v = icectl_json(rest_env, "validate", t, "--deep", "--all-snapshots")
    assert v["ok"] is True, v["findings"]
    assert spark_count(spark_rest, t) == main_rows + 3


def test_a_spark_commit_between_icectl_load_and_commit_is_replanned(rest_env, demo, spark_rest, proxy):
    """icectl plans rewrite-deletes against main; before its commit reaches the server, Spark
    appends to main. The server answers 409, icectl reads the table again, plans again, and
    the final table has Spark's rows and icectl's rewrite."""
    t = rest_env.table()
    rest_env.write(uri=proxy.url)
    before = spark_count(spark_rest, t)
    fired = []

    def spark_commits_first() -> None:
        spark_rest.sql(f"INSERT INTO rc.{t} SELECT * FROM rc.{t} LIMIT 2")
        fired.append(True)

    proxy.inject(Fault("POST", r"/tables/events$", "hook", hook=spark_commits_first))
    r = icectl_json(rest_env, "rewrite-deletes", t, "--yes")
    assert fired and r["applied"]
    statuses = [s for _, _, s in proxy.requests("POST", r"/tables/events$")]
    assert statuses == [409, 200], statuses
    ops = [row[0] for row in spark_rest.sql(f"SELECT operation FROM rc.{t}.snapshots ORDER BY committed_at")]
    assert ops[-2:] == ["append", "replace"]  # Spark's append, then icectl's rewrite on top of it
    assert spark_count(spark_rest, t) == before + 2
    assert icectl_json(rest_env, "validate", t, "--deep")["ok"] is True


def test_a_server_that_refuses_a_format_version_gives_its_message_and_exit_7(rest_env, proxy):
    rest_env.write(uri=proxy.url)
    cat = rest_env.catalog()
    cat.create_namespace((rest_env.namespace,))
    code, out, err = rest_env.cli("create", rest_env.table("t"), "--schema", "id:long", "--yes")
    assert code == 0, err
    proxy.inject(Fault("POST", r"/tables/t$", "status", 400,
                       message="Cannot upgrade table to unsupported format version: v3 (supported: v2)",
                       error_type="IllegalArgumentException"))
    code, out, err = rest_env.cli("upgrade-format", rest_env.table("t"), "--to", "3", "--yes")
    assert code == 7, err
    assert "unsupported format version: v3 (supported: v2)" in err and "Traceback" not in err
    assert cat.load((rest_env.namespace, "t")).metadata.format_version == 2
