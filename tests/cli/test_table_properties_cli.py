"""A table property with a bad value (issue 20, item 3): every command that reads it stops with one
clear error that names the property and its value, exit code 4 (invalid table metadata), before
it changes anything; never a silent default. The bad values are written through the catalog
contract, as another engine would write them (icectl itself refuses to set them: exit code 2)."""
from __future__ import annotations

import io
import json
import pathlib
import sys

import pytest

from icectl.catalog.sql import SqlCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode
from icectl.io import FileIO
from icectl.table.loaded import load_table
from icectl.table.updates import SetProperties

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from validate_corpus import tables  # noqa: E402

RETRIES = ("commit.retry.num-retries", "abc")
MAX_AGE = ("history.expire.max-snapshot-age-ms", "-5")


def run_cli(root, *args) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(["--uri", f"sqlite:///{root}/catalog.db", "--warehouse", f"{root}/warehouse", *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture
def catalog(tmp_path):
    """db.t (two days of data, deletes, several snapshots) in the catalog the CLI opens."""
    base = tables.build(str(tmp_path), 2)
    cat = SqlCatalog("default", f"sqlite:///{tmp_path}/catalog.db", f"{tmp_path}/warehouse", FileIO())
    cat.register_table(tables.IDENT, base.metadata_location)
    return cat


def set_raw(catalog, name: str, value: str) -> str:
    """Write the property as another engine would (the catalog contract, no icectl check)."""
    return catalog.commit(tables.IDENT, [], [SetProperties({name: value})]).metadata_location


def assert_names(code: int, err: str, prop: tuple[str, str]) -> None:
    name, value = prop
    assert code == ExitCode.INVALID_METADATA, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert f"{name}={value!r}" in lines[0], err
    assert "Traceback" not in err


@pytest.mark.parametrize("args", [
    ["properties", "db.t", "set", "owner=ops", "--yes"],
    ["properties", "db.t", "unset", "history.expire.min-snapshots-to-keep", "--yes"],
    ["tag", "create", "db.t", "t1", "--yes"],
    ["alter", "db.t", "--add-column", "note string", "--yes"],
    ["expire", "db.t", "--older-than", "0d", "--retain-last", "1", "--yes"],
], ids=["properties-set", "properties-unset", "tag-create", "alter", "expire"])
def test_bad_commit_retries_stop_every_committing_command(catalog, tmp_path, args):
    set_raw(catalog, "history.expire.min-snapshots-to-keep", "1")  # something for unset to remove
    location = set_raw(catalog, *RETRIES)
    code, _, err = run_cli(tmp_path, *args)
    assert_names(code, err, RETRIES)
    assert load_table(catalog, tables.IDENT).metadata_location == location  # nothing was committed


def test_bad_commit_retries_are_repaired_by_setting_or_unsetting_them(catalog, tmp_path):
    set_raw(catalog, *RETRIES)
    code, _, err = run_cli(tmp_path, "properties", "db.t", "set", "commit.retry.num-retries=8", "--yes")
    assert code == 0, err
    set_raw(catalog, *RETRIES)
    code, _, err = run_cli(tmp_path, "properties", "db.t", "unset", "commit.retry.num-retries", "--yes")
    assert code == 0, err
    assert "commit.retry.num-retries" not in load_table(catalog, tables.IDENT).metadata.properties
    assert run_cli(tmp_path, "tag", "create", "db.t", "t1", "--yes")[0] == 0


@pytest.mark.parametrize("args", [
    ["expire", "db.t", "--dry-run"],
    ["expire", "db.t", "--yes"],
], ids=["dry-run", "yes"])
def test_bad_max_snapshot_age_stops_expire(catalog, tmp_path, args):
    location = set_raw(catalog, *MAX_AGE)
    code, _, err = run_cli(tmp_path, *args)
    assert_names(code, err, MAX_AGE)
    assert load_table(catalog, tables.IDENT).metadata_location == location


@pytest.mark.parametrize("prop", [MAX_AGE, ("history.expire.max-snapshot-age-ms", "5 days"),
                                  ("commit.manifest.target-size-bytes", "0"), ("write.target-file-size-bytes", "1e9")])
def test_health_reports_the_table_it_cannot_measure_with_the_property(catalog, tmp_path, prop):
    set_raw(catalog, *prop)
    code, out, err = run_cli(tmp_path, "-o", "json", "health", "db.t")
    # health's contract for a fleet: a table it cannot measure is reported with the reason, exit 14
    assert code == ExitCode.HEALTH_CRITICAL, err
    [table] = json.loads(out)["tables"]
    assert table["status"] == "error" and f"{prop[0]}={prop[1]!r}" in table["error"]


def test_maintain_reports_the_bad_property(catalog, tmp_path):
    set_raw(catalog, *MAX_AGE)
    code, out, _ = run_cli(tmp_path, "-o", "json", "maintain", "db.t", "--dry-run")
    [table] = json.loads(out)["tables"]
    assert table["status"] == "failed" and f"{MAX_AGE[0]}={MAX_AGE[1]!r}" in table["error"]
    code, _, err = run_cli(tmp_path, "maintain", "db.t", "--yes")
    assert code == ExitCode.MAINTENANCE_FAILED and f"{MAX_AGE[0]}={MAX_AGE[1]!r}" in err


@pytest.mark.parametrize("prop", [("gc.enabled", "yes"), ("history.expire.min-snapshots-to-keep", "0"),
                                  ("history.expire.max-ref-age-ms", "9223372036854775808")])
def test_other_retention_properties_stop_expire(catalog, tmp_path, prop):
    set_raw(catalog, *prop)
    code, _, err = run_cli(tmp_path, "expire", "db.t", "--dry-run")
    assert_names(code, err, prop)


def test_icectl_refuses_to_set_a_bad_value(catalog, tmp_path):
    before = load_table(catalog, tables.IDENT).metadata_location
    for prop in (RETRIES, MAX_AGE, ("gc.enabled", "maybe"), ("write.parquet.compression-codec", "zip")):
        code, _, err = run_cli(tmp_path, "properties", "db.t", "set", f"{prop[0]}={prop[1]}", "--yes")
        assert code == ExitCode.USAGE and f"{prop[0]}={prop[1]!r}" in err, err
    assert load_table(catalog, tables.IDENT).metadata_location == before
    code, _, err = run_cli(tmp_path, "create", "db.u", "--schema", "id:long", "--property", "gc.enabled=maybe", "--yes")
    assert code == ExitCode.USAGE and "gc.enabled='maybe'" in err, err
    assert run_cli(tmp_path, "describe", "db.u")[0] == ExitCode.NOT_FOUND
