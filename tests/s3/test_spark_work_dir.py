"""A compaction whose job files live on S3 (the job template's ``work_dir: s3://...``, as deploy
mode cluster needs): a table on S3 (moto server on loopback), compacted by a real spark-submit
(pyspark's, local[*]) whose driver reads the plan from S3 and writes its result there through
FileIO, with the endpoint given on its command line and the credentials from its environment.
No credential is on the command line or in the plan on S3; the run's S3 folder is removed
after it succeeded."""
from __future__ import annotations

import json
import sys

import pytest

from test_s3 import cli, upload_data_file, write_config  # noqa: E402  (same folder)

pytestmark = [pytest.mark.s3, pytest.mark.spark]


def test_plan_and_result_on_s3(moto_s3, s3_prefix, tmp_path, monkeypatch):
    from icectl.catalog import build_catalog, resolve_catalog_config
    from helpers import create_table
    from helpers import append_files

    secret = "not-a-real-secret-7f3a"
    props = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}", "warehouse": f"{s3_prefix}/wh",
             **moto_s3, "s3.secret-access-key": secret}
    monkeypatch.setenv("ICECTL_CONFIG", write_config(tmp_path / "icectl.yaml", {"s3cat": props}))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", secret)  # what the job's driver and executors use
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    catalog = build_catalog(resolve_catalog_config("s3cat"))
    t = create_table(catalog, ("db", "t"), schema_text="id:long!, name:string", format_version=2)
    t = append_files(t, [upload_data_file(catalog.io, f"{t.location}/data/f{i}.parquet", [i, i + 10], [f"n{i}", None])
                         for i in range(5)])
    work = f"{s3_prefix}/icectl-work"
    tpl = tmp_path / "s3work.yaml"
    tpl.write_text(f"work_dir: {work}\n")

    code, out, err = cli(["-c", "s3cat", "-o", "json", "compact", "db.t", "--dry-run", "--template", str(tpl)])
    assert code == 0, err
    argv = json.loads(out)["spark_submit"]
    plan_file = argv[argv.index("--plan") + 1]
    assert plan_file.startswith(work + "/icectl-spark-") and plan_file.endswith("/plan.json")
    assert argv[argv.index("--result") + 1] == plan_file[:-len("plan.json")] + "result.json"
    assert f"s3.endpoint={moto_s3['s3.endpoint']}" in argv and secret not in out and "testing" not in out

    monkeypatch.setenv("ICECTL_KEEP_WORK", "1")  # keep the S3 run folder to look at the plan
    code, out, err = cli(["-c", "s3cat", "-o", "json", "compact", "db.t", "--yes", "--template", str(tpl)])
    assert code == 0, err
    res = json.loads(out)
    assert (res["rewritten_data_files"], res["added_data_files"]) == (5, 1)
    [kept] = [f.path for f in catalog.io.list_files(work) if f.path.endswith("/plan.json")]
    plan = json.loads(catalog.io.read(kept))
    assert plan["io_properties"] == {"s3.endpoint": moto_s3["s3.endpoint"], "s3.region": "us-east-1"}
    assert secret not in catalog.io.read(kept).decode()
    result = json.loads(catalog.io.read(kept[:-len("plan.json")] + "result.json"))
    assert result["error"] is None and [f["record_count"] for f in result["files"]] == [10]

    monkeypatch.delenv("ICECTL_KEEP_WORK")
    code, out, err = cli(["-c", "s3cat", "-o", "json", "compact", "db.t", "--yes", "--template", str(tpl),
                          "--rewrite-all"])
    assert code == 0, err
    left = sorted(f.path for f in catalog.io.list_files(work))
    assert left == sorted(p for p in left if p.startswith(kept[:-len("plan.json")]))  # only the kept run's files
