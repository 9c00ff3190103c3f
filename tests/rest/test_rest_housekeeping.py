"""drop [--purge], rename, namespaces and rewrite-manifests on the real REST server, with Spark
(Iceberg Java, a REST client of the same server) reading what icectl changed."""
from __future__ import annotations

import json
import os

import pytest


def icectl_json(rest_env, *args: str):
    code, out, err = rest_env.cli("-o", "json", *args)
    assert code == 0, (args, err)
    return json.loads(out)


@pytest.fixture
def demo(rest_env):
    return icectl_json(rest_env, "demo", rest_env.namespace)


def live_files(rest_env, table: str) -> list[tuple]:
    return sorted((f["file_path"], f["status"] != "deleted", f["data_sequence_number"], f["file_sequence_number"])
                  for f in icectl_json(rest_env, "files", table))


def test_rewrite_manifests_over_rest_and_spark_reads(rest_env, demo, spark_rest):
    t = rest_env.table()
    before = live_files(rest_env, t)
    count = spark_rest.sql(f"SELECT count(*) FROM rc.{t}")[0][0]
    r = icectl_json(rest_env, "rewrite-manifests", t, "--yes")
    assert r["applied"] and r["rewritten_manifests"] and r["added_manifests"]
    assert [u["action"] for u in r["commits"][0]["updates"]] == ["add-snapshot", "set-snapshot-ref"]
    assert live_files(rest_env, t) == before
    assert spark_rest.sql(f"SELECT count(*) FROM rc.{t}")[0][0] == count
    op = spark_rest.sql(f"SELECT operation, summary['manifests-replaced'] FROM rc.{t}.snapshots "
                        f"WHERE snapshot_id = {r['snapshot_id']}")
    assert op == [["replace", str(len(r["rewritten_manifests"]))]]


def test_namespaces_and_rename_over_rest(rest_env, demo, spark_rest):
    ns = rest_env.namespace
    t = rest_env.table()
    other = ns + "_other"
    assert icectl_json(rest_env, "namespace", "create", other, "--property", "owner=etl", "--yes")["applied"]
    assert other in icectl_json(rest_env, "namespace", "list")["namespaces"]
    p = icectl_json(rest_env, "namespace", "properties", other, "--set", "tier=gold", "--remove", "owner", "--yes")
    assert p["properties"].get("tier") == "gold" and "owner" not in p["properties"]
    code, out, err = rest_env.cli("namespace", "drop", ns, "--yes")
    assert code == 5 and f"namespace {ns} is not empty" in err
    count = spark_rest.sql(f"SELECT count(*) FROM rc.{t}")[0][0]
    r = icectl_json(rest_env, "rename", t, f"{other}.moved", "--yes")
    assert r["applied"] and r["destination"] == f"{other}.moved"
    assert spark_rest.sql(f"SELECT count(*) FROM rc.{other}.moved")[0][0] == count
    code, out, err = rest_env.cli("describe", t)
    assert code == 3
    # emptied: the old namespace can go now; the other one cannot
    assert icectl_json(rest_env, "namespace", "drop", ns, "--yes")["applied"]
    assert rest_env.cli("namespace", "drop", other, "--yes")[0] == 5


def test_drop_metadata_only_over_rest_keeps_files(rest_env, demo):
    t = rest_env.table()
    d = icectl_json(rest_env, "describe", t)
    files = [f["file_path"] for f in icectl_json(rest_env, "files", t)]
    r = icectl_json(rest_env, "drop", t, "--yes")
    assert r["applied"] and r["purge"] is False and r["purged_by"] is None
    assert os.path.exists(d["metadata_location"]) and all(os.path.exists(f) for f in files)
    assert rest_env.cli("describe", t)[0] == 3


def test_drop_purge_over_rest_is_the_servers_and_icectl_reports_it(rest_env, demo, proxy):
    t = rest_env.table()
    rest_env.write(uri=proxy.url)  # to see the request icectl sends
    d = icectl_json(rest_env, "describe", t)
    location = d["location"]
    sentinel = location.rstrip("/") + "_sibling/keep.txt"
    os.makedirs(os.path.dirname(sentinel), exist_ok=True)
    with open(sentinel, "w") as f:
        f.write("keep")
    plan = icectl_json(rest_env, "drop", t, "--purge", "--dry-run")
    assert plan["purged_by"] == "server" and plan["files"] and not plan["applied"]
    assert all(os.path.exists(f["path"]) for f in plan["files"])
    r = icectl_json(rest_env, "drop", t, "--purge", "--yes")
    assert r["applied"] and r["still_present"] == [] and r["deleted"] == len(r["files"]) == len(plan["files"])
    assert not any(os.path.exists(f["path"]) for f in r["files"])
    assert open(sentinel).read() == "keep"
    assert rest_env.cli("describe", t)[0] == 3
    drops = proxy.requests("DELETE", r"/tables/events")
    assert len(drops) == 1 and drops[0][2] == 204, drops  # one drop; the server deleted the files


def test_statistics_over_rest(rest_env, demo, spark_rest):
    """set-partition-statistics and set-statistics as Iceberg Java's server parses and stores them:
    the table it serves afterwards registers both files, as describe shows."""
    t = rest_env.table()
    p = icectl_json(rest_env, "compute-partition-stats", t, "--yes")
    assert p["applied"] and p["commits"][0]["updates"][0]["action"] == "set-partition-statistics"
    assert sum(r["data_file_count"] for r in p["partitions"]) == \
        spark_rest.sql(f"SELECT count(*) FROM rc.{t}.files WHERE content = 0")[0][0]
    s = icectl_json(rest_env, "compute-stats", t, "--columns", "country,user_id", "--yes")
    assert s["applied"] and [c["name"] for c in s["columns"]] == ["country", "user_id"]
    d = icectl_json(rest_env, "describe", t)
    assert [x["statistics_path"] for x in d["partition_statistics"]] == [p["statistics"]["statistics-path"]]
    (st,) = d["statistics"]
    assert st["statistics_path"] == s["statistics"]["statistics-path"]
    assert [b["columns"] for b in st["blobs"]] == [["country"], ["user_id"]]
    assert [b["properties"]["ndv"] for b in st["blobs"]] == [str(c["ndv"]) for c in s["columns"]]
    countries = spark_rest.sql(f"SELECT count(DISTINCT country) FROM rc.{t}")[0][0]
    assert s["columns"][0]["ndv"] == countries
