"""health and maintain on the real REST server (Iceberg Java's handlers): the demo table's steps
(rewrite-deletes, remove-orphans, ...; compaction left out by the policy) are committed through
the server, Spark (a REST client of the same server) reads the same rows, health is then clean, and
a second run sends nothing."""
from __future__ import annotations

import json


def test_maintain_over_rest(rest_env, spark_rest, tmp_path):
    ns = rest_env.namespace
    t = rest_env.table()
    code, out, err = rest_env.cli("demo", ns)
    assert code == 0, err
    policy = tmp_path / "policy.yaml"
    policy.write_text("defaults: {steps: [rewrite-deletes, rewrite-manifests, expire, remove-orphans]}\n")
    count = spark_rest.sql(f"SELECT count(*) FROM rc.{t}")[0][0]
    code, out, err = rest_env.cli("-o", "json", "health", ns, "--orphans", "--policy", str(policy))
    assert code == 13, err
    steps = json.loads(out)["tables"][0]["steps"]
    assert steps[0] == "rewrite-deletes" and steps[-1] == "remove-orphans"  # (expire: as the server's times say)
    code, out, err = rest_env.cli("-o", "json", "maintain", ns, "--policy", str(policy), "--yes")
    assert code == 0, err
    doc = json.loads(out)
    run = doc["tables"][0]
    assert run["status"] == "done" and run["health_after"] == "healthy", run
    assert [s["step"] for s in run["steps"]] == steps
    assert len(doc["commits"]) == len(steps) - 1  # remove-orphans commits nothing
    assert [u["action"] for u in doc["commits"][0]["updates"]] == ["add-snapshot", "set-snapshot-ref"]
    assert spark_rest.sql(f"SELECT count(*) FROM rc.{t}")[0][0] == count
    code, out, err = rest_env.cli("health", ns, "--orphans", "--policy", str(policy))
    assert code == 0, out + err
    code, out, err = rest_env.cli("-o", "json", "maintain", ns, "--policy", str(policy), "--yes")
    assert code == 0 and json.loads(out)["commits"] == [] and json.loads(out)["tables"][0]["status"] == "healthy"
