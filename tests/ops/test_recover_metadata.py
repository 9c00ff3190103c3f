"""restore from a broken current metadata file (issue 25 item 1) on tables icectl wrote: the current
file truncated, emptied, replaced by another table's file, deleted; in the SQL and file-system
catalogs. Every command that cannot load the table names the way back; restore --dry-run finds
the newest good file and changes nothing; --yes makes it current through the catalog's
compare-and-set against the broken file, which stays; validate is clean afterwards."""
from __future__ import annotations

import io
import os
import pathlib
import shutil
import sys

import pytest

from icectl.catalog.sql import SqlCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import CommitConflictError, ExitCode, NotFoundError
from icectl.io import FileIO
from icectl.ops.recover.recover_metadata import apply_recovery, plan_recovery
from icectl.table.loaded import load_table
from icectl.table.metadata_io import read_metadata_file

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from validate_corpus import tables  # noqa: E402


def run_cli(root, *args) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(["--uri", f"sqlite:///{root}/catalog.db", "--warehouse", f"{root}/warehouse", *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture(params=[2, 3])
def catalog_table(tmp_path, request):
    base = tables.build(str(tmp_path), request.param)
    cat = SqlCatalog("default", f"sqlite:///{tmp_path}/catalog.db", f"{tmp_path}/warehouse", FileIO())
    cat.register_table(tables.IDENT, base.metadata_location)
    base.catalog = cat
    return base


def folder_files(t) -> dict[str, bytes]:
    folder = os.path.dirname(t.metadata_location)
    return {n: open(os.path.join(folder, n), "rb").read() for n in sorted(os.listdir(folder))}


def break_current(path: str, how: str, tmp_path) -> None:
    if how == "truncated":
        data = open(path, "rb").read()
        open(path, "wb").write(data[: len(data) // 2])
    elif how == "emptied":
        open(path, "wb").close()
    elif how == "deleted":
        os.remove(path)
    elif how == "other-table":
        other = tables.build(str(tmp_path / "other"), 2)
        shutil.copyfile(other.table.metadata_location, path)
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["truncated", "emptied", "deleted", "other-table"])
def test_restore_finds_the_newest_good_file(catalog_table, tmp_path, how):
    t = catalog_table.table
    broken = t.metadata_location
    previous = t.metadata.metadata_log[-1].metadata_file
    expected = load_table(t.catalog, t.identifier).metadata
    break_current(broken, how, tmp_path)
    if how != "other-table":
        # Every command that cannot load the table says so in one line and names the way back.
        for args in (["describe", "db.t"], ["rollback", "db.t", "--to-snapshot", "1", "--dry-run"],
                     ["repair", "db.t", "--dry-run"], ["drop", "db.t", "--dry-run"],
                     ["restore", "db.t", "--to-time", "1h", "--dry-run"]):
            code, out, err = run_cli(tmp_path, *args)
            assert code in (ExitCode.INVALID_METADATA, ExitCode.NOT_FOUND), (args, code, err)
            assert "the current metadata file of db.t cannot be read" in err, (args, err)
            assert "icectl restore db.t --dry-run" in err, (args, err)
            assert "Traceback" not in err
    before = folder_files(t)
    code, out, err = run_cli(tmp_path, "restore", "db.t", "--dry-run")
    assert code == 0, err
    assert "the current metadata file is broken" in out and previous.rsplit("/", 1)[-1] in out
    assert folder_files(t) == before  # a dry run writes and deletes nothing
    assert t.catalog.load_metadata_location(t.identifier) == broken
    plan = plan_recovery(t.catalog, t.identifier)
    assert plan.broken is not None and plan.restore_from == previous
    assert plan.table_uuid == expected.table_uuid and plan.checked_files > 0
    code, out, err = run_cli(tmp_path, "restore", "db.t", "--yes")
    assert code == 0 and "restored db.t" in out, err
    now = load_table(t.catalog, t.identifier)
    assert now.metadata_location not in (broken, previous)
    assert now.metadata.current_snapshot_id == plan.current_snapshot_id_after
    assert any(e.metadata_file == previous for e in now.metadata.metadata_log)
    if how != "deleted":
        assert os.path.exists(broken)  # the broken file is kept
    code, out, err = run_cli(tmp_path, "validate", "db.t")
    assert code == 0 and "valid: no findings" in out, out


def test_the_previous_good_file_is_chosen_over_newer_broken_ones(catalog_table, tmp_path):
    t = catalog_table.table
    log = [e.metadata_file for e in t.metadata.metadata_log]
    break_current(t.metadata_location, "truncated", tmp_path)
    break_current(log[-1], "emptied", tmp_path)
    plan = plan_recovery(t.catalog, t.identifier)
    assert plan.restore_from == log[-2]
    problems = {c.location: c.problem for c in plan.candidates}
    assert problems[log[-1]] == "the file is empty" and problems[log[-2]] is None


def test_to_version_and_to_metadata_work_when_the_current_file_is_broken(catalog_table, tmp_path):
    t = catalog_table.table
    log = [e.metadata_file for e in t.metadata.metadata_log]
    break_current(t.metadata_location, "truncated", tmp_path)
    code, out, err = run_cli(tmp_path, "restore", "db.t", "--to-version", "1", "--dry-run")
    assert code == 0 and log[1].rsplit("/", 1)[-1] in out, (out, err)
    code, out, err = run_cli(tmp_path, "restore", "db.t", "--to-metadata", log[1].rsplit("/", 1)[-1], "--yes")
    assert code == 0, err
    now = load_table(t.catalog, t.identifier)
    assert now.metadata.current_snapshot_id == read_metadata_file(t.io, log[1]).current_snapshot_id
    break_current(now.metadata_location, "deleted", tmp_path)
    code, out, err = run_cli(tmp_path, "restore", "db.t", "--to-version", "99", "--dry-run")
    assert code == ExitCode.NOT_FOUND and "no metadata file version 99" in err


def test_a_restore_whose_files_are_gone_skips_to_an_older_file_and_refuses_when_none(catalog_table, tmp_path):
    t = catalog_table.table
    log = [e.metadata_file for e in t.metadata.metadata_log]
    head = read_metadata_file(t.io, log[-1]).current_snapshot
    break_current(t.metadata_location, "truncated", tmp_path)
    os.remove(t.resolve(head.manifest_list))  # the newest good file's head reads it
    plan = plan_recovery(t.catalog, t.identifier)
    assert plan.restore_from == log[-2]
    assert any("are gone" in (c.problem or "") for c in plan.candidates)
    for path in log:
        break_current(path, "emptied", tmp_path)
    plan = plan_recovery(t.catalog, t.identifier)
    assert plan.restore_from is None
    code, out, err = run_cli(tmp_path, "restore", "db.t", "--dry-run")
    assert code == ExitCode.NOT_FOUND and "no readable, valid metadata file" in err


def test_the_pointer_moved_after_the_plan_is_a_conflict(catalog_table, tmp_path):
    t = catalog_table.table
    break_current(t.metadata_location, "truncated", tmp_path)
    plan = plan_recovery(t.catalog, t.identifier)
    t.catalog.register_table(t.identifier, plan.restore_from, overwrite=True)
    with pytest.raises(CommitConflictError):
        apply_recovery(t.catalog, t.identifier, plan)


def test_a_readable_table_needs_no_recovery(catalog_table, tmp_path):
    t = catalog_table.table
    code, out, err = run_cli(tmp_path, "restore", "db.t", "--dry-run")
    assert code == 0 and "readable and valid: nothing to recover" in out
    assert plan_recovery(t.catalog, t.identifier).broken is None


def test_file_system_catalog(tmp_path):
    base = tables.build(str(tmp_path), 2, catalog="hadoop")
    t = base.table
    current = t.metadata_location
    assert current.endswith("/v5.metadata.json")
    os.remove(current)
    plan = plan_recovery(t.catalog, t.identifier)
    assert plan.metadata_location == current and plan.restore_from.endswith("/v4.metadata.json")
    written = apply_recovery(t.catalog, t.identifier, plan)
    assert written.endswith("/v6.metadata.json")
    assert load_table(t.catalog, t.identifier).metadata.current_snapshot_id == plan.current_snapshot_id_after


def test_no_good_file_is_not_found(tmp_path):
    base = tables.build(str(tmp_path), 2, catalog="hadoop")
    t = base.table
    for name in os.listdir(os.path.dirname(t.metadata_location)):
        if name.endswith(".metadata.json"):
            open(os.path.join(os.path.dirname(t.metadata_location), name), "wb").close()
    plan = plan_recovery(t.catalog, t.identifier)
    assert plan.restore_from is None
    with pytest.raises(NotFoundError):
        apply_recovery(t.catalog, t.identifier, plan)
