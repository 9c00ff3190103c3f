"""``migrate`` between two SQLite catalogs (no JVM): the plan, the move, the re-run that resumes, a
table registered in both (finished, or a conflict never overwritten), a commit to the source during
the run (left in the source, reported ``changed``), ``--keep-source``, and the CLI's plan, refusal,
report and exit codes. No file is ever written or deleted by a migration."""
from __future__ import annotations

import io
import json
import os
import pathlib
import sys

import pytest
import yaml

from icectl.catalog.sql import SqlCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode, InvalidMetadataError, NotFoundError, UsageError
from icectl.io import FileIO
from icectl.ops.migrate import VERIFIED, apply_migration, plan_migration
from icectl.table.loaded import load_table
from icectl.table.transaction import commit
from icectl.table.updates import SetProperties

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from cli.output_shapes import SHAPES, check_shape  # noqa: E402
from helpers import create_table  # noqa: E402
from migrate_tables import build_namespace, build_views, files_under, where  # noqa: E402
from validate_corpus import tables  # noqa: E402


class Lab:
    def __init__(self, root: pathlib.Path, n: int = 20):
        self.root = root
        self.src = SqlCatalog("src", f"sqlite:///{root}/src.db", str(root / "wh"), FileIO())
        self.dst = SqlCatalog("dst", f"sqlite:///{root}/dst.db", str(root / "wh-dst"), FileIO())
        self.idents = build_namespace(self.src, "db", n)
        self.before = where(self.src, self.dst, self.idents)
        self.config = root / "icectl.yaml"
        self.config.write_text(yaml.safe_dump({"catalog": {
            "src": {"uri": f"sqlite:///{root}/src.db", "warehouse": str(root / "wh")},
            "dst": {"uri": f"sqlite:///{root}/dst.db", "warehouse": str(root / "wh-dst")}}}))

    def files(self) -> dict[str, int]:
        return files_under(str(self.root))

    def run(self, *args: str) -> tuple[int, str, str]:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        code = run(list(args), env)
        return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture
def lab(tmp_path, monkeypatch) -> Lab:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.setenv("ICECTL_CONFIG", str(tmp_path / "icectl.yaml"))
    return Lab(tmp_path)


def test_a_namespace_of_20_tables_moves_and_a_rerun_is_done(lab):
    files = lab.files()
    plan = plan_migration(lab.src, lab.dst, ["db"])
    assert [e.action for e in plan.entries] == ["migrate"] * 20 and plan.namespaces_to_create == ["db"]
    assert where(lab.src, lab.dst, lab.idents) == lab.before, "planning changed something"
    apply_migration(lab.src, lab.dst, plan)
    assert plan.counts() == {"migrated": 20} and plan.namespaces_created == ["db"]
    after = where(lab.src, lab.dst, lab.idents)
    assert after == {i: (None, src) for i, (src, _) in lab.before.items()}
    assert lab.src.list_tables(("db",)) == [] and lab.dst.list_tables(("db",)) == lab.idents
    for i in lab.idents:
        t = load_table(lab.dst, i)
        assert t.metadata.current_snapshot_id is not None
        assert ("v1" in t.metadata.refs) is (int(i[1][1:]) % 3 == 0)
    assert lab.files() == files, "a migration wrote or deleted a file"
    again = apply_migration(lab.src, lab.dst, plan_migration(lab.src, lab.dst, ["db"]))
    assert again.counts() == {"done": 20} and not again.incomplete
    assert where(lab.src, lab.dst, lab.idents) == after


def test_views_move_with_their_uuid_and_history_and_a_rerun_is_done(lab):
    views = build_views(lab.src, "db", 2, str(lab.root / "wh"))
    before = where(lab.src, lab.dst, views)
    src_md = {v: lab.src.load_view(v).metadata for v in views}
    files = lab.files()
    plan = plan_migration(lab.src, lab.dst, ["db"])
    assert [(e.kind, e.name) for e in plan.entries if e.kind == "view"] == [("view", "db.v0"), ("view", "db.v1")]
    assert plan.counts() == {"migrate": 22}
    apply_migration(lab.src, lab.dst, plan)
    assert plan.counts() == {"migrated": 22}, [(e.name, e.detail) for e in plan.incomplete]
    assert where(lab.src, lab.dst, views) == {v: (None, src) for v, (src, _) in before.items()}
    assert lab.src.list_views(("db",)) == [] and lab.dst.list_views(("db",)) == views
    for v in views:
        md = lab.dst.load_view(v).metadata
        assert md == src_md[v] and [x.version_id for x in md.versions] == [1, 2], "uuid or history not kept"
    assert lab.files() == files, "a migration wrote or deleted a file"
    again = apply_migration(lab.src, lab.dst, plan_migration(lab.src, lab.dst, ["db"]))
    assert again.counts() == {"done": 22}


def test_a_view_in_both_is_finished_at_the_same_file_a_conflict_at_another(lab):
    v0, v1 = build_views(lab.src, "db", 2, str(lab.root / "wh"))
    lab.dst.create_namespace(("db",))
    lab.dst.register_view(v0, lab.src.load_view_metadata_location(v0))  # an interrupted run
    other = build_views(lab.dst, "other", 1, str(lab.root / "wh-dst"))[0]
    other_file = lab.dst.load_view_metadata_location(other)
    lab.dst.drop_view(other)
    lab.dst.register_view(v1, other_file)  # a different view by the same name
    plan = apply_migration(lab.src, lab.dst, plan_migration(lab.src, lab.dst, ["db.v0", "db.v1"]))
    by = {e.name: e for e in plan.entries}
    assert by["db.v0"].outcome == "finished" and by["db.v1"].outcome == "conflict"
    assert where(lab.src, lab.dst, [v0]) == {v0: (None, lab.dst.load_view_metadata_location(v0))}
    assert lab.src.load_view_metadata_location(v1) != lab.dst.load_view_metadata_location(v1), "overwritten"


def test_a_view_from_a_catalog_that_deletes_it_on_drop_stays_there(lab, monkeypatch):
    """A source whose drop_view deletes the current metadata file (Iceberg Java's REST server) must
    not hand the view to a target that would point at that file: unsupported, left in the source."""
    (view,) = build_views(lab.src, "db", 1, str(lab.root / "wh"))
    monkeypatch.setattr(lab.src, "view_drop_keeps_files", False)
    plan = apply_migration(lab.src, lab.dst, plan_migration(lab.src, lab.dst, ["db"]))
    entry = next(e for e in plan.entries if e.kind == "view")
    assert entry.outcome == "unsupported" and "deletes a view's current metadata file" in entry.detail
    assert entry.exit_code == ExitCode.UNSUPPORTED
    assert where(lab.src, lab.dst, [view]) == {view: (lab.src.load_view_metadata_location(view), None)}
    assert plan.counts() == {"migrated": 20, "unsupported": 1}


def test_in_both_at_the_same_file_is_finished_at_different_files_a_conflict(lab):
    a, b, c = lab.idents[:3]
    lab.dst.register_table(a, lab.before[a][0])  # an interrupted run: registered, source not yet removed
    other = commit(load_table(lab.src, b), [SetProperties({"k": "v"})])  # b moved on after its copy
    lab.dst.register_table(b, lab.before[b][0])
    plan = plan_migration(lab.src, lab.dst, [".".join(a), ".".join(b), ".".join(c)])
    assert [e.action for e in plan.entries] == ["finish", "conflict", "migrate"]
    apply_migration(lab.src, lab.dst, plan)
    assert [e.outcome for e in plan.entries] == ["finished", "conflict", "migrated"]
    assert plan.entries[1].exit_code == ExitCode.CONFLICT and "drop" in plan.entries[1].detail
    now = where(lab.src, lab.dst, [a, b, c])
    assert now[a] == (None, lab.before[a][0]) and now[c] == (None, lab.before[c][0])
    assert now[b] == (other.metadata_location, lab.before[b][0]), "a conflict was overwritten"


def test_a_commit_to_the_source_during_the_run_is_left_there_and_migrated_by_the_rerun(lab):
    """The source commits between the target's check and the re-read of its location: the table is
    reported changed, stays in the source with its commit, and the target's entry is taken back."""
    moved = {}

    def commit_in_source(entry, step):
        if step == VERIFIED and entry.name == "db.t01":
            moved["at"] = commit(load_table(lab.src, entry.ident), [SetProperties({"late": "1"})]).metadata_location

    plan = plan_migration(lab.src, lab.dst, ["db.t00", "db.t01", "db.t02"])
    apply_migration(lab.src, lab.dst, plan, progress=commit_in_source)
    assert [e.outcome for e in plan.entries] == ["migrated", "changed", "migrated"]
    t01 = lab.idents[1]
    assert where(lab.src, lab.dst, [t01]) == {t01: (moved["at"], None)}
    assert plan.entries[1].source_metadata_location == moved["at"] and plan.entries[1].exit_code == 5
    rerun = apply_migration(lab.src, lab.dst, plan_migration(lab.src, lab.dst, ["db.t01"]))
    assert rerun.counts() == {"migrated": 1}
    assert where(lab.src, lab.dst, [t01]) == {t01: (None, moved["at"])}
    assert load_table(lab.dst, t01).metadata.properties["late"] == "1"


def test_keep_source_registers_and_keeps(lab):
    plan = apply_migration(lab.src, lab.dst, plan_migration(lab.src, lab.dst, ["db.t03"], keep_source=True))
    assert plan.counts() == {"copied": 1}
    t = lab.idents[3]
    assert where(lab.src, lab.dst, [t]) == {t: (lab.before[t][0], lab.before[t][0])}


def test_names_that_are_nothing_are_refused_before_anything_changes(lab):
    with pytest.raises(NotFoundError, match="nosuch"):
        plan_migration(lab.src, lab.dst, ["db.t00", "nosuch"])
    with pytest.raises(UsageError):
        plan_migration(lab.src, lab.dst, [])
    with pytest.raises(UsageError):
        plan_migration(lab.src, lab.dst, ["db"], all_entries=True)
    assert where(lab.src, lab.dst, lab.idents) == lab.before


def test_all_moves_every_namespace(lab):
    build_namespace(lab.src, "other", 2)
    plan = apply_migration(lab.src, lab.dst, plan_migration(lab.src, lab.dst, [], all_entries=True))
    assert plan.counts() == {"migrated": 22}
    assert lab.src.list_tables(None) == [] and len(lab.dst.list_tables(None)) == 22


# -- the command ---------------------------------------------------------------------------------------

def test_cli_dry_run_refusal_yes_and_rerun(lab):
    files = lab.files()
    code, out, err = lab.run("-o", "json", "migrate", "--from", "src", "--to", "dst", "db", "--dry-run")
    assert code == 0, err
    doc = json.loads(out)
    check_shape(doc, SHAPES["migrate"])
    assert doc["dry_run"] is True and doc["applied"] is False and doc["counts"] == {"migrate": 20}
    assert doc["entries"][0] == {"kind": "table", "name": "db.t00", "action": "migrate", "outcome": None,
                                 "source_metadata_location": lab.before[lab.idents[0]][0],
                                 "target_metadata_location": None, "detail": None, "exit_code": None}
    code, out, err = lab.run("migrate", "--from", "src", "--to", "dst", "db")
    assert code == ExitCode.REFUSED and "without --yes" in err
    assert "db.t19" in out and "register in target" in out
    assert where(lab.src, lab.dst, lab.idents) == lab.before
    code, out, err = lab.run("-o", "json", "migrate", "--from", "src", "--to", "dst", "db", "--yes")
    assert code == 0, err
    doc = json.loads(out)
    check_shape(doc, SHAPES["migrate"])
    assert doc["applied"] is True and doc["counts"] == {"migrated": 20} and doc["namespaces_created"] == ["db"]
    assert all(e["outcome"] == "migrated" and e["source_metadata_location"] is None for e in doc["entries"])
    code, out, err = lab.run("migrate", "--from", "src", "--to", "dst", "db", "--yes")
    assert code == 0, err
    assert "20 done" in out
    assert lab.files() == files


def test_cli_conflict_exits_5_after_the_report(lab):
    t = lab.idents[0]
    lab.dst.register_table(t, lab.before[lab.idents[1]][0])  # the name taken by another table's file
    code, out, err = lab.run("-o", "json", "migrate", "--from", "src", "--to", f"sqlite:///{lab.root}/dst.db",
                             "db", "--yes")
    assert code == ExitCode.CONFLICT
    doc = json.loads(out)
    assert doc["counts"] == {"conflict": 1, "migrated": 19}
    assert json.loads(err)["error"]["exit_code"] == ExitCode.CONFLICT
    assert where(lab.src, lab.dst, [t])[t][0] == lab.before[t][0]


def test_cli_same_catalog_or_none_is_a_usage_error(lab):
    assert lab.run("migrate", "--from", "src", "--to", "src", "db", "--yes")[0] == ExitCode.USAGE
    assert lab.run("migrate", "--to", "dst", "db", "--yes")[0] == ExitCode.USAGE
    assert lab.run("migrate", "--from", "src", "--to", "nosuch", "db", "--yes")[0] == ExitCode.USAGE


def test_a_table_whose_metadata_cannot_be_read_is_skipped_with_its_error(lab):
    broken = lab.root / "broken.metadata.json"
    broken.write_text("{")
    with pytest.raises(InvalidMetadataError):  # the entry is made, then loading it fails
        lab.src.register_table(("db", "broken"), str(broken))
    code, out, err = lab.run("-o", "json", "migrate", "--from", "src", "--to", "dst", "db", "--yes")
    assert code == ExitCode.INVALID_METADATA, err
    doc = json.loads(out)
    assert doc["counts"] == {"migrated": 20, "unreadable": 1}
    entry = next(e for e in doc["entries"] if e["name"] == "db.broken")
    assert entry["exit_code"] == ExitCode.INVALID_METADATA and "broken.metadata.json" in entry["detail"]
    assert where(lab.src, lab.dst, [("db", "broken")]) == {("db", "broken"): (str(broken), None)}


def test_docs_examples_run(tmp_path, monkeypatch):
    """docs/migrate.md's examples, in order, on three SQLite catalogs named as the page names them
    (``jdbc``, ``rest``, ``hive``; the REST server and the Hive Metastore are proven in
    tests/rest/test_rest_migrate.py and tests/hive/test_hive_migrate.py): each exits 0, and at the
    end ``prod``'s tables are in ``rest``, the JSON report parses, and ``jdbc`` lists none."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "cli"))
    from test_readme import section_commands  # noqa: PLC0415 (a sibling test module, for its block parser)
    cmds = section_commands("docs/migrate.md", None)
    assert len(cmds) >= 5 and all(c.startswith("icectl migrate ") or c.startswith("icectl -o json migrate ")
                                  for c in cmds), cmds
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    config = tmp_path / "icectl.yaml"
    monkeypatch.setenv("ICECTL_CONFIG", str(config))
    names = ("jdbc", "rest", "hive")
    config.write_text(yaml.safe_dump({"catalog": {n: {"uri": f"sqlite:///{tmp_path}/{n}.db",
                                                      "warehouse": str(tmp_path / f"wh-{n}")} for n in names}}))
    jdbc = SqlCatalog("jdbc", f"sqlite:///{tmp_path}/jdbc.db", str(tmp_path / "wh-jdbc"), FileIO())
    idents = build_namespace(jdbc, "prod", 3) + build_namespace(jdbc, "staging", 2)
    create_table(jdbc, ("prod", "events"), schema_text=tables.SCHEMA)
    idents.append(("prod", "events"))
    rest = SqlCatalog("rest", f"sqlite:///{tmp_path}/rest.db", str(tmp_path / "wh-rest"), FileIO())
    hive = SqlCatalog("hive", f"sqlite:///{tmp_path}/hive.db", str(tmp_path / "wh-hive"), FileIO())
    before = where(jdbc, rest, idents)
    reports = []
    for cmd in cmds:
        argv = cmd.split("#", 1)[0].split()[1:]
        env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        assert run(argv, env) == 0, (cmd, env.stderr.getvalue())
        if "-o" in argv:
            reports.append(json.loads(env.stdout.getvalue()))
    assert jdbc.list_tables(("prod",)) == [] and jdbc.list_tables(("staging",)) == []
    assert sorted(i for i in idents if i[0] == "prod") == sorted(rest.list_tables(("prod",)))
    assert hive.list_tables(("staging",)) == [i for i in idents if i[0] == "staging"]
    for i in idents:
        target = rest if i[0] == "prod" else hive
        assert target.load_metadata_location(i) == before[i][0]
    assert reports and all(r["source"] == "jdbc" for r in reports)
