"""The demo table on GCS (fake-gcs-server) and ADLS (Azurite), both on loopback (conftest.py):
icectl writes it, describes, lists, deep-validates, expires and removes orphans on it, deleting in
batches (each ``fs.rm`` call counted); PyIceberg (gcsfs / adlfs) reads its rows afterwards."""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import textwrap
import uuid

import pytest
import yaml

import icectl.io
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.io.cloud import adls_fs_path, gcs_fs_path, make_adls_filesystem, make_gcs_filesystem

MAIN_ROWS = 664  # the demo's main branch (tests/demo_rows.py RECORDS[8])
STORES = [pytest.param("gcs", marks=pytest.mark.gcs, id="gcs"), pytest.param("adls", marks=pytest.mark.adls, id="adls")]


def cli(args: list[str]) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(args, env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture
def store(request, tmp_path, monkeypatch):
    """(kind, catalog properties, warehouse, rm calls): a SQL catalog whose warehouse is a fresh
    prefix on the store; every ``rm`` / ``rm_file`` call icectl makes there is recorded."""
    kind = request.param
    props = request.getfixturevalue("fake_gcs" if kind == "gcs" else "azurite")
    bucket = request.getfixturevalue("cloud_bucket")
    prefix = uuid.uuid4().hex
    warehouse = (f"gs://{bucket}/{prefix}/wh" if kind == "gcs"
                 else f"abfss://{bucket}@devstoreaccount1.dfs.core.windows.net/{prefix}/wh")
    calls: list[tuple[str, list[str]]] = []
    name = "make_gcs_filesystem" if kind == "gcs" else "make_adls_filesystem"
    make = make_gcs_filesystem if kind == "gcs" else make_adls_filesystem

    def counting(*args, **kwargs):
        fs = make(*args, **kwargs)
        if getattr(fs, "_icectl_test_counted", False):  # fsspec caches instances: wrap each once
            return fs
        fs._icectl_test_counted = True
        rm, rm_file = fs.rm, fs.rm_file

        def counted_rm(path, *a, **kw):
            calls.append(("rm", list(path) if isinstance(path, list) else [path]))
            return rm(path, *a, **kw)

        def counted_rm_file(path, *a, **kw):
            calls.append(("rm_file", [path]))
            return rm_file(path, *a, **kw)

        fs.rm, fs.rm_file = counted_rm, counted_rm_file
        request.addfinalizer(lambda: (fs.__dict__.update(rm=rm, rm_file=rm_file, _icectl_test_counted=False)))
        return fs

    monkeypatch.setattr(icectl.io, name, counting)
    catalog = {"type": "sql", "uri": f"sqlite:///{tmp_path / 'catalog.db'}", "warehouse": warehouse, **props}
    cfg = tmp_path / "icectl.yaml"
    cfg.write_text(yaml.safe_dump({"catalog": {"cloud": catalog}, "default-catalog": "cloud"}))
    monkeypatch.setenv("ICECTL_CONFIG", str(cfg))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    return kind, catalog, warehouse, calls


def _pyiceberg_rows(catalog: dict[str, str]) -> int:
    """The rows of demo.events' main branch as PyIceberg (FsspecFileIO: gcsfs / adlfs) reads them,
    in a fresh interpreter."""
    script = textwrap.dedent("""
        import json, sys
        from pyiceberg.catalog.sql import SqlCatalog
        props = json.loads(sys.argv[1])
        props.pop("type")
        props["py-io-impl"] = "pyiceberg.io.fsspec.FsspecFileIO"
        t = SqlCatalog("cloud", **props).load_table("demo.events")
        print(t.scan().to_arrow().num_rows)
    """)
    # gcsfs's experimental gRPC file system first asks a storage-control service that the emulator lacks.
    env = dict(os.environ, GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT="false")
    out = subprocess.run([sys.executable, "-c", script, json.dumps(catalog)], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return int(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("store", STORES, indirect=True)
def test_demo_table_on_the_store(store):
    kind, catalog, warehouse, calls = store
    location = f"{warehouse}/demo/events"

    code, out, err = cli(["demo"])
    assert code == 0, err
    code, out, err = cli(["-o", "json", "describe", "demo.events"])
    assert code == 0, err
    assert json.loads(out)["location"] == location

    code, out, err = cli(["-o", "json", "files", "demo.events"])
    assert code == 0, err
    files = json.loads(out)
    paths = [f["file_path"] for f in (files["files"] if isinstance(files, dict) else files)]
    assert paths and all(p.startswith(location + "/data/") for p in paths)

    code, out, err = cli(["validate", "demo.events", "--deep"])
    assert code == 0, out + err

    calls.clear()
    code, out, err = cli(["-o", "json", "expire", "demo.events", "--yes"])
    assert code == 0, err
    deleted = [f["path"] if isinstance(f, dict) else f for f in json.loads(out)["deleted_files"]]
    assert len(deleted) >= 8, out
    fs_name = gcs_fs_path if kind == "gcs" else adls_fs_path
    # expire records what it will delete before its commit and removes that record when every delete is
    # done (issue 26: a killed run is finished by the next), in a call of its own after the batch.
    record = fs_name(f"{location}/metadata/_icectl-expire-pending.json")
    assert calls[-1][1] == [record], calls
    calls.pop()
    assert sorted(p for _, ps in calls for p in ps) == sorted(fs_name(p) for p in deleted)
    # Batched: one rm call for all of them (fewer than the default batch), no path-by-path retry.
    assert [k for k, _ in calls] == ["rm"], calls

    fio = icectl.io.FileIO(catalog)
    planted = [f"{location}/data/orphan-{i}.parquet" for i in range(3)] + [f"{location}/metadata/stale.avro"]
    for p in planted:
        fio.write(p, b"x")
    before = {f.path for f in fio.list_files(location)}
    assert set(planted) <= before
    calls.clear()
    code, out, err = cli(["-o", "json", "remove-orphans", "demo.events", "--yes", "--older-than", "2099-01-01",
                          "--force"])
    assert code == 0, err
    removed = [f["path"] if isinstance(f, dict) else f for f in json.loads(out)["deleted_files"]]
    failed_job = [p for p in removed if p.endswith("-failed-job.parquet")]  # the demo's own orphan
    assert sorted(removed) == sorted(planted + failed_job) and len(failed_job) == 1
    assert [k for k, _ in calls] == ["rm"] and len(calls[0][1]) == len(removed)
    assert {f.path for f in icectl.io.FileIO(catalog).list_files(location)} == before - set(removed)

    code, out, err = cli(["validate", "demo.events", "--deep"])
    assert code == 0, out + err
    assert _pyiceberg_rows(catalog) == MAIN_ROWS
