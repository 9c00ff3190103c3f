"""drop [--purge], rename and the namespace commands on real tables in SQL and file-system
catalogs (no Java): exactly the reachable files go, nothing outside the table location, nothing
before the catalog drop; refusals write nothing and exit with their documented codes."""
from __future__ import annotations

import io
import json
import os
import pathlib
import sys

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode
from icectl.table.transaction import commit

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from validate_corpus import tables  # noqa: E402


def snapshot_of(root) -> dict[str, int]:
    """Every file and folder under root (files with their size)."""
    out = {}
    for d, dirs, fs in os.walk(root):
        out.update({os.path.join(d, x): -1 for x in dirs})
        out.update({os.path.join(d, f): os.path.getsize(os.path.join(d, f)) for f in fs})
    return out


@pytest.fixture(autouse=True)
def _config(tmp_path, monkeypatch):
    """The corpus's catalog, named ``corpus`` as the tables record it: SQL, or (``--catalog fs``)
    the file-system catalog over the same warehouse."""
    cfg = tmp_path / "icectl.yaml"
    cfg.write_text(f"catalog:\n  corpus:\n    type: sql\n    uri: sqlite:///{tmp_path}/catalog.db\n"
                   f"    warehouse: {tmp_path}/warehouse\n  fs:\n    type: hadoop\n"
                   f"    warehouse: {tmp_path}/warehouse\n")
    monkeypatch.setenv("ICECTL_CONFIG", str(cfg))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)


def cli(root, *args: str, catalog: str = "sql") -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(["--catalog", "corpus" if catalog == "sql" else "fs", *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def reachable_by_hand(t) -> set[str]:
    """What the table reaches, read independently of icectl.ops.evolve.drop: every snapshot's manifest list,
    manifests and live entries, the statistics files, the metadata log and the current file."""
    md = t.metadata
    out = {t.metadata_location, *(e.metadata_file for e in md.metadata_log)}
    for s in md.snapshots:
        out.add(s.manifest_list)
        for m in t.manifests(s):
            out.add(m.manifest_path)
            out.update(e.data_file.file_path for e in t.read_entries(m, live_only=True))
    out.update(st.statistics_path for st in md.statistics)
    return out


@pytest.mark.parametrize("version", [2, 3])
def test_purge_deletes_exactly_the_reachable_files_and_nothing_beside(tmp_path, version):
    from icectl.ops.maintain import expire as ex

    base = tables.build(str(tmp_path), version)
    t = base.table
    # An older snapshot that expires without deleting its files: they are reachable from nothing,
    # so the purge must leave them (as the orphan and the sentinels).
    location = t.location
    wh = os.path.join(str(tmp_path), "warehouse")
    sentinels = [os.path.join(wh, "db", "t_sibling", "data", "keep.parquet"),  # beside the table, same prefix
                 os.path.join(wh, "db", "keep.txt"), os.path.join(location, "data", "orphan.parquet")]
    for s in sentinels:
        os.makedirs(os.path.dirname(s), exist_ok=True)
        pathlib.Path(s).write_bytes(b"sentinel")
    t = ex.apply_expiry(t, ex.ExpireOptions(retain_last=2, older_than_ms=2**62, delete_files=False)).committed.table
    reachable = reachable_by_hand(t)
    before = snapshot_of(tmp_path)
    code, out, err = cli(tmp_path, "-o", "json", "drop", "db.t", "--purge", "--dry-run")
    assert code == 0, err
    plan = json.loads(out)
    assert {f["path"] for f in plan["files"]} == reachable
    assert snapshot_of(tmp_path) == before
    code, out, err = cli(tmp_path, "-o", "json", "drop", "db.t", "--purge", "--yes")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["applied"] and doc["deleted"] == len(reachable) and doc["failed_deletes"] == []
    after = snapshot_of(tmp_path)
    gone = {p for p in before if p not in after}
    assert gone == reachable
    for s in sentinels:
        assert pathlib.Path(s).read_bytes() == b"sentinel"
    assert any(p.startswith(location) for p in after if after[p] >= 0)  # files expired earlier stay
    assert cli(tmp_path, "describe", "db.t")[0] == ExitCode.NOT_FOUND


def test_drop_without_purge_keeps_every_file(tmp_path):
    base = tables.build(str(tmp_path), 2)
    metadata_location = base.table.metadata_location
    before = {p: s for p, s in snapshot_of(tmp_path).items() if not p.endswith("catalog.db")}
    code, out, err = cli(tmp_path, "drop", "db.t", "--yes")
    assert code == 0, err
    assert "dropped db.t" in out and "metadata only" in out
    assert {p: s for p, s in snapshot_of(tmp_path).items() if not p.endswith("catalog.db")} == before
    # the files are intact: the metadata file registers again and reads the same table
    code, out, err = cli(tmp_path, "register", "db.t", metadata_location, "--yes")
    assert code == 0, err
    assert cli(tmp_path, "validate", "db.t", "--deep")[0] == 0


def test_purge_never_deletes_outside_the_location(tmp_path):
    """A data file the metadata names outside the table location is listed and kept."""
    from helpers import append_files

    base = tables.build(str(tmp_path), 2, deletes=False)
    t = base.table
    outside_dir = os.path.join(str(tmp_path), "elsewhere")
    f = tables.write_data_file(t, [100], ["z"], tables.day_of("2026-01-05"))
    os.makedirs(outside_dir)
    moved = os.path.join(outside_dir, "shared.parquet")
    os.rename(f.file_path, moved)
    f.file_path = moved
    append_files(t, [f])
    code, out, err = cli(tmp_path, "-o", "json", "drop", "db.t", "--purge", "--yes")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["skipped_outside_location"] == [moved]
    assert os.path.exists(moved)


def test_gc_disabled_purge_keeps_content_files(tmp_path):
    base = tables.build(str(tmp_path), 2)
    t = base.table
    from icectl.table.updates import SetProperties

    t = commit(t, [SetProperties({"gc.enabled": "false"})])
    code, out, err = cli(tmp_path, "-o", "json", "drop", "db.t", "--purge", "--yes")
    assert code == 0, err
    doc = json.loads(out)
    content = [f.file_path for f in base.data_files + base.delete_files]
    assert sorted(doc["kept_files"]) == sorted(content)
    assert all(os.path.exists(p) for p in content)
    assert not os.path.exists(t.metadata_location)


def test_drop_refuses_when_the_table_grew_after_the_plan(tmp_path):
    """A purge never deletes what the plan shown did not list: an append in between stops it."""
    from icectl.ops.evolve.drop import apply_drop, plan_drop
    from helpers import append_files
    from icectl.errors import ConflictingChangeError

    base = tables.build(str(tmp_path), 2)
    t = base.table
    plan = plan_drop(t, purge=True)
    append_files(t, [tables.write_data_file(t, [50], ["x"], tables.day_of("2026-01-09"))])
    before = snapshot_of(tmp_path)
    with pytest.raises(ConflictingChangeError, match="more files would be deleted"):
        apply_drop(t, plan)
    assert snapshot_of(tmp_path) == before
    assert cli(tmp_path, "describe", "db.t")[0] == 0


def test_rename_moves_the_catalog_entry_only(tmp_path):
    base = tables.build(str(tmp_path), 2)
    loc = base.table.metadata_location
    assert cli(tmp_path, "namespace", "create", "lake", "--yes")[0] == 0
    code, out, err = cli(tmp_path, "rename", "db.t", "lake.events", "--yes")
    assert code == 0, err
    code, out, err = cli(tmp_path, "-o", "json", "describe", "lake.events")
    assert code == 0 and json.loads(out)["metadata_location"] == loc
    assert cli(tmp_path, "describe", "db.t")[0] == ExitCode.NOT_FOUND


@pytest.mark.parametrize("args, code, message", [
    (["rename", "db.t", "nope.t"], ExitCode.NOT_FOUND, "namespace nope does not exist"),
    (["rename", "db.t", "db.t"], ExitCode.USAGE, "already named"),
    (["rename", "db.missing", "db.u"], ExitCode.NOT_FOUND, "db.missing does not exist"),
    (["rename", "db.t", "db.other"], ExitCode.CONFLICT, "db.other already exists"),
    (["drop", "db.missing"], ExitCode.NOT_FOUND, "db.missing does not exist"),
    (["namespace", "drop", "db"], ExitCode.CONFLICT, "namespace db is not empty"),
    (["namespace", "drop", "nope"], ExitCode.NOT_FOUND, "namespace nope does not exist"),
    (["namespace", "create", "db"], ExitCode.CONFLICT, "namespace db already exists"),
    (["namespace", "create", "a..b"], ExitCode.USAGE, "invalid namespace"),
    (["namespace", "create", "x", "--property", "novalue"], ExitCode.USAGE, "expected KEY=VALUE"),
    (["namespace", "properties", "db", "--set", "a=1", "--remove", "a"], ExitCode.USAGE, "both set and removed"),
    (["namespace", "properties", "nope"], ExitCode.NOT_FOUND, "namespace nope does not exist"),
    (["namespace", "list", "nope"], ExitCode.NOT_FOUND, "nope"),
])
def test_bad_input_one_line_exit_code_nothing_written(tmp_path, args, code, message):
    tables.build(str(tmp_path), 2)
    t2 = tables.build(str(tmp_path / "x"), 2)  # noqa: F841 (another catalog; db.other below)
    from icectl.catalog.sql import SqlCatalog
    from icectl.io import FileIO

    cat = SqlCatalog("corpus", f"sqlite:///{tmp_path}/catalog.db", f"{tmp_path}/warehouse", FileIO())
    cat.register_table(("db", "other"), t2.table.metadata_location)
    before = snapshot_of(tmp_path)
    got, out, err = cli(tmp_path, *args, "--yes") if args[0] != "namespace" or args[1] != "list" else \
        cli(tmp_path, *args)
    assert got == code, err
    assert message in err and len(err.strip().splitlines()) <= 2 and "Traceback" not in err
    assert snapshot_of(tmp_path) == before


@pytest.mark.parametrize("args, message", [
    (["rename", "db.t", "db.u"], "cannot rename"),
    (["drop", "db.t"], "cannot drop"),
    (["drop", "db.t", "--purge"], "cannot drop"),
    (["namespace", "create", "x", "--property", "a=1"], "cannot store namespace properties"),
    (["namespace", "properties", "db", "--set", "a=1"], "cannot store namespace properties"),
])
def test_file_system_catalog_says_what_it_cannot_do(tmp_path, args, message):
    tables.build(str(tmp_path), 2, catalog="hadoop")
    before = snapshot_of(tmp_path)
    code, out, err = cli(tmp_path, *args, "--yes", catalog="hadoop")
    assert code == ExitCode.UNSUPPORTED, err
    assert message in err
    assert snapshot_of(tmp_path) == before


def test_namespaces_on_a_file_system_catalog(tmp_path):
    tables.build(str(tmp_path), 2, catalog="hadoop")
    assert cli(tmp_path, "namespace", "create", "lake.raw", "--yes", catalog="hadoop")[0] == 0
    code, out, _ = cli(tmp_path, "-o", "json", "namespace", "list", catalog="hadoop")
    assert json.loads(out)["namespaces"] == ["db", "lake", "lake.raw"]
    code, out, _ = cli(tmp_path, "-o", "json", "namespace", "list", "lake", catalog="hadoop")
    assert json.loads(out)["namespaces"] == ["lake.raw"]
    assert cli(tmp_path, "namespace", "drop", "lake", "--yes", catalog="hadoop")[0] == ExitCode.CONFLICT
    assert cli(tmp_path, "namespace", "drop", "lake.raw", "--yes", catalog="hadoop")[0] == 0
    assert not os.path.exists(os.path.join(tmp_path, "warehouse", "lake", "raw"))
    assert cli(tmp_path, "namespace", "drop", "db", "--yes", catalog="hadoop")[0] == ExitCode.CONFLICT


def test_namespace_properties_round_trip(tmp_path):
    tables.build(str(tmp_path), 2)
    assert cli(tmp_path, "namespace", "create", "lake", "-P", "owner=etl", "-P", "tier=bronze", "--yes")[0] == 0
    code, out, err = cli(tmp_path, "-o", "json", "namespace", "properties", "lake", "--set", "tier=gold",
                         "--remove", "owner", "--remove", "absent", "--yes")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["updated"] == ["tier"] and doc["removed"] == ["owner"] and doc["missing"] == ["absent"]
    code, out, _ = cli(tmp_path, "-o", "json", "namespace", "properties", "lake")
    props = json.loads(out)["properties"]
    assert props["tier"] == "gold" and "owner" not in props
