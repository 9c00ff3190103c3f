"""issue 25 item 3 over the real REST server (Iceberg Java's own handlers): a table Spark wrote
through the server gets a manifest whose entries lie (icectl's manifest writer, committed through
the server, as a buggy writer would): one file's ``id`` upper bound below its maximum, another's
``record_count``. Spark's filtered query misses the rows the bound hides; ``validate --deep``
reports both; ``repair --metrics --yes`` commits the footers' values through the server's commit
endpoint; Spark's filtered query returns the rows again and ``validate --deep`` is clean."""
from __future__ import annotations

import dataclasses
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from break_metrics import break_metrics, reload, set_upper  # noqa: E402

from icectl.spec.conversions import from_bytes, to_bytes  # noqa: E402
from icectl.table.loaded import load_table  # noqa: E402


def _json(rest_env, *args: str, expect: int = 0):
    code, out, err = rest_env.cli("-o", "json", *args)
    assert code == expect, (args, code, err)
    return json.loads(out)


def test_lying_metrics_repaired_through_the_rest_commit(rest_env, spark_rest):
    t = rest_env.table("lying")
    spark_rest.sql(f"CREATE NAMESPACE IF NOT EXISTS rc.{rest_env.namespace}")
    spark_rest.sql(f"CREATE TABLE rc.{t} (id bigint, name string) USING iceberg TBLPROPERTIES ('format-version'='2')")
    for lo in (1, 6):
        spark_rest.sql(f"INSERT INTO rc.{t} SELECT /*+ COALESCE(1) */ * FROM VALUES "
                       + ", ".join(f"({i}, 'n{i}')" for i in range(lo, lo + 5)))
    query = f"SELECT id FROM rc.{t} WHERE id > 7 ORDER BY id"
    assert [r[0] for r in spark_rest.sql(query)] == [8, 9, 10]

    table = load_table(rest_env.catalog(), tuple(t.split(".")))
    high = break_metrics(table, lambda df: from_bytes("long", df.upper_bounds[1]) == 10,
                         set_upper(1, to_bytes("long", 6)))
    low = break_metrics(reload(table), lambda df: from_bytes("long", df.upper_bounds[1]) == 5,
                        lambda df: dataclasses.replace(df, record_count=4))
    assert [r[0] for r in spark_rest.sql(query)] == []  # Java skips the file whose upper bound says 6

    found = _json(rest_env, "validate", t, "--deep", expect=8)["findings"]
    codes = {(f["code"], f["file"]) for f in found}
    assert {("BOUND_HIDES_ROWS", high), ("RECORD_COUNT_MISMATCH", low)} <= codes
    fixes = {f["fix"] for f in found if f["code"] in ("BOUND_HIDES_ROWS", "RECORD_COUNT_MISMATCH")}
    assert fixes == {f"icectl repair {t} --metrics --dry-run"}

    done = _json(rest_env, "repair", t, "--metrics", "--yes")
    assert done["applied"] and done["metrics_snapshot_id"] is not None
    assert {c["path"] for c in done["metrics"]} == {high, low}
    assert {q["type"] for q in done["commits"][0]["requirements"]} >= {"assert-ref-snapshot-id"}
    assert [r[0] for r in spark_rest.sql(query)] == [8, 9, 10]
    assert spark_rest.sql(f"SELECT count(*) FROM rc.{t}")[0][0] == 10
    code, out, err = rest_env.cli("validate", t, "--deep")
    assert code == 0, out + err
