"""``upgrade-format`` and ``register``: the pre-flight report, stepwise upgrades that validate clean
and keep working for the next commit, refusals (downgrades, v4 in a file-system catalog, no
terminal), and registering a file-system table in a SQL catalog to take it to v4."""
from __future__ import annotations

import io
import json
import os
import pathlib
import sys

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from helpers import append_files
from icectl.ops.evolve.upgrade import apply_upgrade, plan_upgrade
from icectl.validate.findings import ValidateOptions
from icectl.validate.run import validate_table
from icectl.errors import UsageError

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for validate_corpus

from validate_corpus import tables  # noqa: E402


@pytest.fixture(autouse=True)
def no_config(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)


def cli(tmp_path, *args: str, sql: bool = True) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    pre = ["-c", "corpus", "--uri", f"sqlite:///{tmp_path}/catalog.db", "--warehouse", f"{tmp_path}/warehouse"] \
        if sql else ["--warehouse", f"{tmp_path}/warehouse"]
    code = run([*pre, *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def clean(base) -> list[str]:
    r = validate_table(base.catalog, tables.IDENT, ValidateOptions(deep=True, all_snapshots=True))
    return [f"{f.code}: {f.message}" for f in r.findings]


def test_plan_lists_steps_findings_and_readers(tmp_path):
    base = tables.build(tmp_path, 2)
    plan = plan_upgrade(base.table, 3)
    assert [(s.from_version, s.to_version) for s in plan.steps] == [(2, 3)]
    assert plan.can_apply and plan.blockers == []
    assert any("position delete files stay valid" in f for f in plan.found)
    assert any("equality delete files" in f for f in plan.found)
    assert any("deletion vectors" in a for a in plan.steps[0].allows)
    assert any("new position delete files" in f for f in plan.steps[0].forbids)
    readers = {r.reader: r.reads for r in plan.readers}
    assert readers["Iceberg Java 1.10 (Spark, Flink, Trino, ...)"] is True
    assert readers["Iceberg Java 1.4 to 1.7"] is False
    assert plan.new_metadata.format_version == 3 and plan.new_metadata.next_row_id == 0
    assert not any(r.reads for r in plan_upgrade(base.table, 4).readers if r.reader.startswith("Iceberg Java"))


@pytest.mark.parametrize("start", [1, 2])
def test_stepwise_upgrades_validate_clean_and_keep_committing(start, tmp_path):
    base = tables.build(tmp_path, start)
    t = base.table
    records = sum(f.record_count for f in base.data_files)
    for to in range(start + 1, 5):
        t = apply_upgrade(t, to).table
        assert t.metadata.format_version == to
        assert clean(base) == []
        f = tables.write_data_file(t, [100 + to], ["z"], tables.day_of("2026-02-01"))
        t = append_files(t, [f])
        records += 1
        assert clean(base) == []
        if to == 3:
            snap = t.metadata.current_snapshot
            assert snap.first_row_id == 0  # the first v3 commit gives the existing rows ids too
            assert t.metadata.next_row_id == records
    raw = json.loads(open(base.metadata_location).read())
    assert raw["format-version"] == 4 and "schema" not in raw and raw["table-uuid"]
    manifest = t.manifests(t.metadata.current_snapshot)[0]
    import fastavro

    paths = [r["data_file"]["file_path"] for r in fastavro.reader(open(manifest.manifest_path, "rb"))]
    assert paths and all(p.startswith("data/") for p in paths)  # v4: relative to the location


def test_v1_upgrade_fills_the_v2_fields(tmp_path):
    base = tables.build(tmp_path, 1)
    apply_upgrade(base.table, 2)
    raw = json.loads(open(base.metadata_location).read())
    for field in ("table-uuid", "last-sequence-number", "schemas", "current-schema-id", "partition-specs",
                  "default-spec-id", "last-partition-id", "sort-orders", "default-sort-order-id"):
        assert field in raw, field
    assert raw["last-sequence-number"] == 0
    assert all(s.get("sequence-number", 0) == 0 for s in raw["snapshots"])
    assert "partition-spec" not in raw


def test_never_downgrades_and_same_version_is_a_no_op(tmp_path):
    base = tables.build(tmp_path, 3)
    with pytest.raises(UsageError, match="never downgrades"):
        plan_upgrade(base.table, 2)
    before = base.metadata_location
    code, out, err = cli(tmp_path, "upgrade-format", "db.t", "--to", "3", "--yes")
    assert code == 0 and "already format version 3" in out
    assert base.metadata_location == before
    code, out, err = cli(tmp_path, "upgrade-format", "db.t", "--to", "2")
    assert code == 2 and "never downgrades" in err


def test_dry_run_changes_nothing_and_no_terminal_refuses(tmp_path):
    base = tables.build(tmp_path, 1)
    before = base.metadata_location
    code, out, err = cli(tmp_path, "upgrade-format", "db.t", "--to", "3", "--dry-run")
    assert code == 0, err
    assert "format version 1 -> 2 -> 3" in out and "dry run: nothing changed" in out
    assert "Readers of format version 3" in out
    code, out, err = cli(tmp_path, "upgrade-format", "db.t", "--to", "2")
    assert code == 6 and "--yes" in err
    assert base.metadata_location == before


def test_json_shapes(tmp_path):
    tables.build(tmp_path, 2)
    code, out, err = cli(tmp_path, "-o", "json", "upgrade-format", "db.t", "--to", "3", "--dry-run")
    assert code == 0, err
    doc = json.loads(out)
    assert set(doc) == {"plan", "dry_run", "applied", "metadata_location", "commits"}
    assert doc["commits"] == [{"requirements": [{"type": "assert-table-uuid", "uuid": doc["commits"][0]["requirements"][0]["uuid"]}],
                               "updates": [{"action": "upgrade-format-version", "format-version": 3}]}]
    assert set(doc["plan"]) == {"table", "metadata_location", "catalog", "from_version", "to_version", "steps",
                                "found", "blockers", "readers"}
    assert doc["dry_run"] is True and doc["applied"] is False and doc["metadata_location"] is None
    assert set(doc["plan"]["steps"][0]) == {"from_version", "to_version", "changes", "allows", "forbids"}
    assert set(doc["plan"]["readers"][0]) == {"reader", "reads", "note"}
    code, out, err = cli(tmp_path, "-o", "json", "upgrade-format", "db.t", "--to", "3", "--yes")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["dry_run"] is False and doc["applied"] is True and doc["metadata_location"].endswith(".metadata.json")


def test_validation_errors_block_the_upgrade(tmp_path):
    base = tables.build(tmp_path, 2)
    path = base.metadata_location
    obj = json.load(open(path))
    obj["refs"]["gone"] = {"snapshot-id": 42, "type": "tag"}
    json.dump(obj, open(path, "w"))
    plan = plan_upgrade(base.table, 3)
    assert [b.code for b in plan.blockers] == ["REF_MISSING_SNAPSHOT"]
    code, out, err = cli(tmp_path, "upgrade-format", "db.t", "--to", "3", "--yes")
    assert code == 6 and "REF_MISSING_SNAPSHOT" in out
    code, out, err = cli(tmp_path, "-o", "json", "upgrade-format", "db.t", "--to", "3", "--yes")
    assert code == 6 and json.loads(out)["plan"]["blockers"][0]["code"] == "REF_MISSING_SNAPSHOT"
    assert json.loads(out)["applied"] is False
    assert base.metadata_location == path


def test_file_system_table_to_v4_goes_through_register(tmp_path):
    base = tables.build(tmp_path, 3, catalog="hadoop")
    location = base.metadata_location
    code, out, err = cli(tmp_path, "upgrade-format", "db.t", "--to", "4", "--yes", sql=False)
    assert code == 7, err
    assert "V4_FILESYSTEM_CATALOG" in out and "icectl -c SQLCATALOG register" in err
    code, out, err = cli(tmp_path, "-o", "json", "register", "db.t", location, "--dry-run")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["registered"] is False and doc["plan"]["format_version"] == 3
    code, out, err = cli(tmp_path, "register", "db.t", location)
    assert code == 6  # no terminal, no --yes
    code, out, err = cli(tmp_path, "register", "db.t", location, "--yes")
    assert code == 0, err
    assert "registered db.t in catalog corpus" in out
    code, out, err = cli(tmp_path, "register", "db.t", location, "--yes")
    assert code == 5  # already exists
    code, out, err = cli(tmp_path, "upgrade-format", "db.t", "--to", "4", "--yes")
    assert code == 0, err
    sql = tables.Base(str(tmp_path), tables.make_catalog(str(tmp_path)), 4)
    assert sql.table.metadata.format_version == 4
    append_files(sql.table, [tables.write_data_file(sql.table, [77], ["v4"], tables.day_of("2026-03-01"))])
    assert clean(sql) == []
    code, out, err = cli(tmp_path, "validate", "db.t", "--deep", sql=False)
    assert code == 0, out  # the file-system pointer still names the v3 metadata file, which is valid


def test_register_refuses_bad_input(tmp_path):
    tables.build(tmp_path, 2)
    code, out, err = cli(tmp_path, "register", "db.x", str(tmp_path / "nope.metadata.json"), "--yes")
    assert code == 3 and out == ""
    bad = tmp_path / "bad.metadata.json"
    bad.write_text("{nope")
    code, out, err = cli(tmp_path, "register", "db.x", str(bad), "--yes")
    assert code == 4 and "Traceback" not in err
    code, out, err = cli(tmp_path, "register", "db.x", str(bad), "--yes", sql=False)
    assert code == 7


def test_blockers_for_a_table_opened_by_path(tmp_path):
    base = tables.build(tmp_path, 2)
    code, out, err = cli(tmp_path, "upgrade-format", base.metadata_location, "--to", "3", "--yes", sql=False)
    assert code == 7 and "READ_ONLY" in out
    assert os.path.exists(base.metadata_location)
