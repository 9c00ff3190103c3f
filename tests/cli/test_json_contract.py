"""The output contract of every command, end to end on a real table.

Every command and subcommand (found by walking the live click tree, so a new command without a
case here fails :func:`test_every_command_has_a_case`) runs with ``-o json`` and its document is
checked against :data:`SHAPES`: exactly these keys, values of these types. The same shapes are
what docs/reference/json-output.md documents, generated from the result dataclasses by
``python -m tools.gendocs`` (:func:`test_docs_document_these_shapes` parses it; test_docs.py
checks it is current). Each command also runs in text, piped: something meaningful is printed, and no
box-drawing character (rich draws boxes and tree guides only on a terminal). Mutating commands
without a terminal and without ``--yes`` refuse (exit 6) after printing their plan: as text, or
as the plan's JSON document (``applied`` false), and change nothing.

The table (:class:`Lab`): the validation corpus's v2 table (real Parquet files, a position and an
equality delete) in a file-system catalog, plus a second position delete for the first file (so
``rewrite-deletes`` merges two), a branch ``dev`` with its own append, a branch ``old`` and a tag
``t1`` at the first snapshot, and an orphan file; every file 10 days old.
"""
from __future__ import annotations

import dataclasses
import io
import json
import os
import pathlib
import re
import sys
import time
from dataclasses import dataclass
from typing import Any, Callable

import pytest
import typer.main

from icectl.cli.context import Env
from icectl.cli.main import app, run
from icectl.errors import ExitCode
from icectl.table.transaction import commit
from tools.gendocs.json_shapes import NOTES, SHAPES as JSON_SHAPES, json_output_markdown

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for validate_corpus
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # tests/cli for output_shapes

from output_shapes import SHAPES, SPEC_JSON, TREE_SNAPSHOT, Opt, check_shape  # noqa: E402
from validate_corpus import tables  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
BOX_DRAWING = re.compile("[\u2500-\u257f]")


# -- the table ------------------------------------------------------------------------------------------

DAY_MS = 86_400_000


class Lab:
    def __init__(self, root: pathlib.Path):
        from icectl.ops.recover import refs
        from helpers import append_files

        self.root = root
        base = tables.build(str(root), 2, catalog="hadoop")
        self.warehouse = os.path.join(str(root), "warehouse")
        t = base.table
        f1 = base.data_files[0]
        t = append_files(t, [tables.write_position_delete(t, f1, [1])])
        main = [s.snapshot_id for s in reversed(t.metadata.ancestors_of(t.metadata.current_snapshot_id))]
        self.s1, self.s2, self.s3, self.s4, self.s5 = main
        md = t.metadata
        t = commit(t, refs.create_ref(md, "dev", ref_type="branch", snapshot_id=self.s3)
                     + refs.create_ref(md, "old", ref_type="branch", snapshot_id=self.s1)
                     + refs.create_ref(md, "t1", ref_type="tag", snapshot_id=self.s1))
        t = append_files(t, [tables.write_data_file(t, [11, 12], ["x", "y"], tables.day_of("2026-01-04"))],
                         branch="dev")
        self.dev = t.metadata.refs["dev"].snapshot_id
        self.f4 = base.data_files[3].file_path
        self.table = t
        self.location = t.location
        old = time.time() - 10 * 86400
        self.orphan = os.path.join(self.location, "data", "orphan.parquet")
        with open(self.orphan, "wb") as f:
            f.write(b"not reachable")
        for d, _, fs in os.walk(self.location):
            for name in fs:
                os.utime(os.path.join(d, name), (old, old))
        self.future = str(int(time.time() * 1000) + DAY_MS)

    def run(self, *args: str) -> tuple[int, str, str]:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        code = run(["--warehouse", self.warehouse, *args], env)
        return code, env.stdout.getvalue(), env.stderr.getvalue()

    def state(self) -> tuple[str | None, dict[str, Any]]:
        """The current metadata file (None once the table is gone) and everything under the root:
        each file with its size and content hash, each folder."""
        import hashlib

        from icectl.errors import IcectlError

        found: dict[str, Any] = {}
        for d, dirs, fs in os.walk(self.root):
            found.update({os.path.join(d, x): "dir" for x in dirs})
            for f in fs:
                path = os.path.join(d, f)
                with open(path, "rb") as fh:
                    found[path] = (os.path.getsize(path), hashlib.sha1(fh.read()).hexdigest())
        try:
            current: str | None = self.table.catalog.load_metadata_location(("db", "t"))
        except IcectlError:
            current = None
        return current, found

    def sql(self) -> None:
        """The table, also registered as db.t in a SQL catalog (reg.db), and an empty namespace
        ``empty`` there: for the commands a file-system catalog cannot do."""
        from icectl.catalog.sql import SqlCatalog
        from icectl.io import FileIO

        catalog = SqlCatalog("default", f"sqlite:///{self.root}/reg.db", self.warehouse, FileIO({}))
        catalog.register_table(("db", "t"), self.table.metadata_location)
        catalog.create_namespace(("empty",), {"owner": "ops"})


@pytest.fixture
def lab(tmp_path, monkeypatch) -> Lab:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)
    return Lab(tmp_path)


# -- the cases: every command --------------------------------------------------------------------------

@dataclass
class Case:
    command: tuple[str, ...]  # the click command path
    args: Callable[[Lab], list[str]]  # after the command path
    shape: str  # key of SHAPES
    text: Callable[[Lab], list[str]]  # facts the text output contains (the plan's: the first one)
    mutating: bool = False  # runs with --dry-run, then --yes; refuses without either
    check: Callable[[Lab, Any], bool] | None = None  # more about the JSON document
    catalog: Callable[[Lab], list[str]] = lambda lab: []  # global options before the command
    setup: Callable[[Lab], None] | None = None  # before anything is looked at
    code: int = 0  # the exit code of a run that works (health: by the worst finding)


REF_CHANGE = "rollback, cherry-pick, branch, tag"
QUARANTINE = "remove-orphans --quarantine, --restore-quarantine, --purge-quarantine"


def _quarantine(lab: Lab) -> None:
    code, _, err = lab.run("remove-orphans", "db.t", "--quarantine", "quarantine", "-y")
    assert code == 0, err
SQL_CATALOG = lambda lab: ["--uri", f"sqlite:///{lab.root}/reg.db"]  # noqa: E731 (register needs one)

CASES: dict[str, Case] = {
    "create": Case(("create",), lambda lab: ["db.new", "--schema", "id:long!, v:string", "--partition-by",
                                             "bucket(4, id)"], "create",
                   lambda lab: ["db.new", "bucket[4]", "created db.new"], mutating=True,
                   check=lambda lab, d: d["partition_spec"]["fields"][0]["transform"] == "bucket[4]"),
    "list": Case(("list",), lambda lab: [], "list", lambda lab: ["namespace", "db", "table", "db.t"],
                 check=lambda lab, d: d["tables"] == ["db.t"] and d["namespaces"] == ["db"]),
    "catalogs": Case(("catalogs",), lambda lab: [], "catalogs",
                     lambda lab: ["configuration file: none", "default", lab.warehouse, "--warehouse"],
                     check=lambda lab, d: d["resolved"] == "default" and d["catalogs"][0]["type"] == "hadoop"
                     and d["catalogs"][0]["warehouse"] == lab.warehouse),
    "describe": Case(("describe",), lambda lab: ["db.t"], "describe",
                     lambda lab: ["db.t", lab.location, "ts_day", "dev", "t1", str(lab.s5)],
                     check=lambda lab, d: d["schemas"][0]["fields"][0]["name"] == "id" and len(d["refs"]) == 4),
    "snapshots": Case(("snapshots",), lambda lab: ["db.t"], "snapshots",
                      lambda lab: [str(lab.s1), str(lab.dev), "append"],
                      check=lambda lab, d: d[0]["snapshot_id"] == lab.dev and len(d) == 6),
    "snapshots-tree": Case(("snapshots",), lambda lab: ["db.t", "--tree"], "snapshots --tree",
                           lambda lab: [str(lab.s1), "(branch main)", "(branch dev)", "tag t1"],
                           check=lambda lab, d: [s["snapshot_id"] for s in d["roots"][0]["snapshots"]]
                           == [lab.s1, lab.s2, lab.s3, lab.s4, lab.s5]),
    "files": Case(("files",), lambda lab: ["db.t"], "files",
                  lambda lab: ["position-deletes", "equality-deletes", "7 files"], check=lambda lab, d: len(d) == 7),
    "refs": Case(("refs",), lambda lab: ["db.t"], "refs", lambda lab: ["main", "dev", "old", "t1", "tag"],
                 check=lambda lab, d: [r["name"] for r in d] == ["main", "dev", "old", "t1"]),
    "validate": Case(("validate",), lambda lab: ["db.t"], "validate", lambda lab: ["valid", "db.t"],
                     check=lambda lab, d: d["ok"] is True),
    "expire": Case(("expire",), lambda lab: ["db.t", "--older-than", lab.future, "--explain"], "expire",
                   lambda lab: ["3 snapshots", "Why each retained snapshot stays", "manifest-list"], mutating=True,
                   check=lambda lab, d: d["expired_snapshot_ids"] == [lab.s2, lab.s3, lab.s4]
                   and bool(d["deleted_files"]) and d["explain"] is not None),
    "remove-orphans": Case(("remove-orphans",), lambda lab: ["db.t"], "remove-orphans",
                           lambda lab: ["orphan.parquet", "deleted 1 orphan files"], mutating=True,
                           check=lambda lab, d: d["orphan_files"] == [lab.orphan]),
    "remove-orphans-quarantine": Case(("remove-orphans",), lambda lab: ["db.t", "--quarantine", "quarantine"],
                                      QUARANTINE, lambda lab: ["orphan.parquet", "moved 1 files"], mutating=True,
                                      check=lambda lab, d: [f["original"] for f in d["files"]] == [lab.orphan]),
    "remove-orphans-restore-quarantine": Case(("remove-orphans",), lambda lab: ["db.t", "--restore-quarantine"],
                                              QUARANTINE, lambda lab: ["orphan.parquet", "restored 1 files"],
                                              mutating=True, setup=lambda lab: _quarantine(lab),
                                              check=lambda lab, d: [f["original"] for f in d["files"]] == [lab.orphan]),
    "remove-orphans-purge-quarantine": Case(("remove-orphans",), lambda lab: ["db.t", "--purge-quarantine",
                                                                             "--older-than", lab.future],
                                            QUARANTINE, lambda lab: ["orphan.parquet", "deleted 1 files"],
                                            mutating=True, setup=lambda lab: _quarantine(lab),
                                            check=lambda lab, d: [f["original"] for f in d["files"]] == [lab.orphan]),
    "rollback": Case(("rollback",), lambda lab: ["db.t", "--to-snapshot", str(lab.s4)], REF_CHANGE,
                     lambda lab: [f"main: {lab.s5} -> {lab.s4}", "leaving main's history"], mutating=True,
                     check=lambda lab, d: d["impact"]["leaving_history"] == [lab.s5]),
    "cherry-pick": Case(("cherry-pick",), lambda lab: ["db.t", str(lab.dev)], REF_CHANGE,
                        lambda lab: [f"cherry-pick snapshot {lab.dev} onto main", "committed"], mutating=True),
    "branch-create": Case(("branch", "create"), lambda lab: ["db.t", "b1", "--snapshot", str(lab.s2)], REF_CHANGE,
                          lambda lab: [f"b1: (none) -> {lab.s2}"], mutating=True),
    "branch-drop": Case(("branch", "drop"), lambda lab: ["db.t", "dev"], REF_CHANGE,
                        lambda lab: [f"dev: {lab.dev} -> (dropped)"], mutating=True),
    "branch-rename": Case(("branch", "rename"), lambda lab: ["db.t", "dev", "feature"], REF_CHANGE,
                          lambda lab: [f"feature: (none) -> {lab.dev}"], mutating=True),
    "branch-fast-forward": Case(("branch", "fast-forward"), lambda lab: ["db.t", "old", "--to", "main"], REF_CHANGE,
                                lambda lab: [f"old: {lab.s1} -> {lab.s5}", "joining its history"], mutating=True),
    "branch-retain": Case(("branch", "retain"), lambda lab: ["db.t", "dev", "--min-snapshots-to-keep", "3"],
                          REF_CHANGE, lambda lab: ["set retention of branch dev"], mutating=True),
    "tag-create": Case(("tag", "create"), lambda lab: ["db.t", "v1"], REF_CHANGE,
                       lambda lab: [f"v1: (none) -> {lab.s5}"], mutating=True),
    "tag-drop": Case(("tag", "drop"), lambda lab: ["db.t", "t1"], REF_CHANGE,
                     lambda lab: [f"t1: {lab.s1} -> (dropped)"], mutating=True),
    "compact-dry-run": Case(("compact",), lambda lab: ["db.t", "--min-input-files", "1", "--dry-run"],
                            "compact (plan)", lambda lab: ["groups", "spark-submit"],
                            check=lambda lab, d: bool(d["groups"]) and bool(d["spark_submit"]) and d["dry_run"]),
    # (A run that rewrites needs Spark: tests/spark/test_compact_cli.py checks the result's shape.)
    "compact-nothing": Case(("compact",), lambda lab: ["db.t", "--where", "ts >= '2099-01-01'"], "compact (plan)",
                            lambda lab: ["0 of 4 live data files", "nothing to compact"], mutating=True,
                            check=lambda lab, d: d["groups"] == []),
    "rewrite-deletes": Case(("rewrite-deletes",), lambda lab: ["db.t"], "rewrite-deletes",
                            lambda lab: ["2 position-delete files to merge in 1 partitions",
                                         "merged 2 position-delete files into 1"], mutating=True,
                            check=lambda lab, d: d["result"] is None or d["result"]["merged_inputs"] == 2),
    "upgrade-format": Case(("upgrade-format",), lambda lab: ["db.t", "--to", "3"], "upgrade-format",
                           lambda lab: ["format version 2 -> 3", "no blockers", "upgraded db.t"], mutating=True),
    "demo": Case(("demo",), lambda lab: ["play"], "demo", lambda lab: ["Built play.events", "Try these:"],
                 check=lambda lab, d: d["table"] == "play.events" and len(d["snapshots"]) > 5),
    "alter": Case(("alter",), lambda lab: ["db.t", "--add-column", "note string after name", "--rename-column",
                                           "name=label", "--add-partition-field", "bucket(4, id)", "--sort-by",
                                           "id desc", "--set-property", "k=v"], "alter, properties set, properties unset",
                  lambda lab: ["Alter db.t", "label string", "id_bucket_4", "altered db.t"], mutating=True,
                  check=lambda lab, d: [f["name"] for f in d["after"]["schema"]["fields"]] == ["id", "label", "note", "ts"]
                  and d["before"]["schema"]["fields"][1]["name"] == "name"
                  and d["commits"][0]["updates"][0]["action"] == "add-schema"),
    "properties": Case(("properties",), lambda lab: ["db.t"], "properties", lambda lab: ["db.t has no properties"],
                       check=lambda lab, d: d == {"table": "db.t", "properties": lab.table.metadata.properties}),
    "properties-set": Case(("properties",), lambda lab: ["db.t", "set", "a=1"], "alter, properties set, properties unset",
                           lambda lab: ["set property a=1", "altered db.t"], mutating=True,
                           check=lambda lab, d: d["after"]["properties"]["a"] == "1"),
    "drop": Case(("drop",), lambda lab: ["db.t", "--purge"], "drop",
                 lambda lab: ["db.t: to drop and purge", "manifest-list", "dropped db.t"], mutating=True,
                 catalog=SQL_CATALOG, setup=Lab.sql,
                 check=lambda lab, d: d["counts"]["data"] == 5 and d["purged_by"] == "icectl"
                 and lab.orphan not in {f["path"] for f in d["files"]}),
    "rename": Case(("rename",), lambda lab: ["db.t", "empty.u"], "rename",
                   lambda lab: ["rename db.t to empty.u", "renamed db.t to empty.u"], mutating=True,
                   catalog=SQL_CATALOG, setup=Lab.sql, check=lambda lab, d: d["location"] == lab.location),
    "namespace-list": Case(("namespace", "list"), lambda lab: [], "namespace list", lambda lab: ["namespace", "db"],
                           check=lambda lab, d: d["namespaces"] == ["db"]),
    "namespace-create": Case(("namespace", "create"), lambda lab: ["lake.raw", "--property", "owner=etl"],
                             "namespace create, namespace drop",
                             lambda lab: ["create namespace lake.raw", "owner", "created namespace lake.raw"],
                             mutating=True, catalog=SQL_CATALOG,
                             check=lambda lab, d: d["properties"] == {"owner": "etl"}),
    "namespace-drop": Case(("namespace", "drop"), lambda lab: ["empty"], "namespace create, namespace drop",
                           lambda lab: ["drop namespace empty", "dropped namespace empty"], mutating=True,
                           catalog=SQL_CATALOG, setup=Lab.sql),
    "namespace-properties": Case(("namespace", "properties"), lambda lab: ["empty", "--set", "tier=gold", "--remove",
                                                                            "owner"], "namespace properties",
                                 lambda lab: ["properties to change: set tier; removed owner", "gold",
                                              "properties changed"], mutating=True, catalog=SQL_CATALOG,
                                 setup=Lab.sql, check=lambda lab, d: d["properties"].get("tier") == "gold"
                                 and "owner" not in d["properties"]),
    "rewrite-manifests": Case(("rewrite-manifests",), lambda lab: ["db.t"], "rewrite-manifests",
                              lambda lab: ["manifests of spec 0", "rewrote"], mutating=True,
                              check=lambda lab, d: d["groups"][0]["content"] == "data" and d["groups"][0]["rewrite"]),
    "repair": Case(("repair",), lambda lab: ["db.t"], "repair", lambda lab: ["missing", "repaired main: delete"],
                   mutating=True, setup=lambda lab: os.unlink(lab.f4),
                   check=lambda lab, d: d["refs"][0]["removed_files"][0]["path"] == lab.f4 and d["records_lost"] == 2),
    "rewrite-table-path": Case(("rewrite-table-path",), lambda lab: ["db.t", "--from", lab.warehouse, "--to",
                                                                     f"{lab.root}/moved", "--copy"],
                               "rewrite-table-path", lambda lab: ["new metadata", "copy plan"], mutating=True,
                               check=lambda lab, d: d["metadata_location"].startswith(f"{lab.root}/moved/")
                               and d["copy_plan_rows"] == 6),
    "health": Case(("health",), lambda lab: ["db.t", "--orphans"], "health",
                   lambda lab: ["db.t: warning", "remove-orphans", f"fix: icectl --warehouse {lab.warehouse} "
                                "rewrite-deletes db.t --yes"], code=ExitCode.HEALTH_WARNING,
                   check=lambda lab, d: d["tables"][0]["steps"] == ["rewrite-deletes", "compact", "remove-orphans"]
                   and d["tables"][0]["metrics"]["orphan_files"] == 1 and d["exit_code"] == 13),
    "profile": Case(("profile",), lambda lab: ["db.t"], "profile",
                    lambda lab: ["Data file sizes, target", "Snapshots and data added per day", "Partition sizes",
                                 "Delete load per partition"],
                    check=lambda lab, d: d["profile"]["file_sizes"]["data_files"] == 4
                    and {r["name"] for r in d["profile"]["refs"]} == {"main", "dev", "old", "t1"}),
    "report": Case(("report",), lambda lab: ["db.t", "--html", str(lab.root / "r.html")], "report",
                   lambda lab: [f"wrote {lab.root / 'r.html'}: 5 charts of db.t, validate: "],
                   check=lambda lab, d: d["html"] == str(lab.root / "r.html") and len(d["charts"]) == 5
                   and (lab.root / "r.html").read_text().count('<figure class="chart"') == 5),
    "maintain": Case(("maintain",), lambda lab: ["db", "--policy", str(lab.root / "policy.yaml")], "maintain",
                     lambda lab: ["db.t: ", "rewrite-deletes", "remove-orphans: done"], mutating=True,
                     setup=lambda lab: (lab.root / "policy.yaml").write_text(
                         "defaults: {steps: [rewrite-deletes, rewrite-manifests, expire, remove-orphans]}\n"),
                     check=lambda lab, d: [s["step"] for s in d["tables"][0]["steps"]]
                     == ["rewrite-deletes", "remove-orphans"]),
    "compute-stats-dry-run": Case(("compute-stats",), lambda lab: ["db.t", "--columns", "id,name", "--dry-run"],
                                  "compute-stats", lambda lab: ["NDV statistics", "spark-submit"],
                                  check=lambda lab, d: [c["name"] for c in d["columns"]] == ["id", "name"]
                                  and d["dry_run"] and bool(d["spark_command"])
                                  and d["commits"][0]["updates"][0]["action"] == "set-statistics"),
    # (A run needs Spark: tests/interop/test_statistics_vs_java.py checks the result against Java.)
    "compute-partition-stats": Case(("compute-partition-stats",), lambda lab: ["db.t"], "compute-partition-stats",
                                    lambda lab: ["partition statistics of", "computed partition statistics",
                                                 "partition-stats-"], mutating=True,
                                    check=lambda lab, d: sum(p["data_file_count"] for p in d["partitions"]) == 4
                                    and d["commits"][0]["updates"][0]["action"] == "set-partition-statistics"),
    "migrate": Case(("migrate",), lambda lab: ["--from", f"sqlite:///{lab.root}/reg.db", "--to",
                                                f"sqlite:///{lab.root}/moved.db", "db"], "migrate",
                    lambda lab: ["db.t", "migrated", "1 migrated"], mutating=True, setup=lambda lab: lab.sql(),
                    check=lambda lab, d: [e["name"] for e in d["entries"]] == ["db.t"]),
    "register": Case(("register",), lambda lab: ["db.reg", lab.table.metadata_location], "register",
                     lambda lab: ["register db.reg", "registered db.reg"], mutating=True, catalog=SQL_CATALOG),
    "diff": Case(("diff",), lambda lab: ["db.t", "t1", "main"], "diff",
                 lambda lab: ["db.t: from t1", "partitions", "position-deletes", "equality-deletes"],
                 check=lambda lab, d: d["totals"]["data_files_added"] == 2 and d["totals"]["delete_files_added"] == 3
                 and d["a"]["snapshot_id"] == lab.s1 and d["b"]["snapshot_id"] == lab.s5),
    "restore": Case(("restore",), lambda lab: ["db.t", "--to-version", "3"], "restore",
                    lambda lab: ["db.t: restore to", "remove ref dev", "restored db.t"], mutating=True,
                    check=lambda lab, d: d["current_snapshot_id_after"] == lab.s2 and d["refs_after"] == {"main": lab.s2}
                    and any(u["action"] == "remove-snapshot-ref" for u in d["commits"][0]["updates"])),
}


def _leaf_commands() -> set[tuple[str, ...]]:
    out = set()
    stack = [((), typer.main.get_command(app))]
    while stack:
        path, cmd = stack.pop()
        subs = getattr(cmd, "commands", None)
        if subs:
            stack.extend((path + (n,), c) for n, c in subs.items() if not getattr(c, "hidden", False))
        elif path:
            out.add(path)
    return out


def test_every_command_has_a_case():
    missing = sorted(" ".join(p) for p in _leaf_commands() - {c.command for c in CASES.values()})
    assert not missing, f"commands without an output contract case in {__name__}: {missing}"


def _prepare(lab: Lab, case: Case) -> None:
    if case.setup is not None:
        case.setup(lab)


PROGRESS_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ icectl: ")


def _run(lab: Lab, case: Case, output: str, *extra: str) -> tuple[int, str, str]:
    return lab.run(*case.catalog(lab), "-o", output, *case.command, *case.args(lab), *extra)


@pytest.mark.parametrize("name", sorted(CASES))
def test_json_document_has_the_documented_shape(lab, name):
    """One document on stdout, nothing on stderr; a mutating command's --dry-run changes nothing
    and says so, then --yes applies the same plan."""
    case = CASES[name]
    _prepare(lab, case)
    for extra in (["--dry-run"], ["--yes"]) if case.mutating else ([],):
        before = lab.state()
        code, out, err = _run(lab, case, "json", *extra)
        assert code == case.code, err
        if name == "maintain":  # a long run says where it is on stderr, timestamped (issue 24), in every mode
            progress = [line for line in err.splitlines() if PROGRESS_LINE.match(line)]
            assert progress or extra == ["--dry-run"], err
            err = "".join(line + "\n" for line in err.splitlines() if not PROGRESS_LINE.match(line))
        assert err == "" or case.code and json.loads(err)["error"]["exit_code"] == case.code
        doc = json.loads(out)
        check_shape(doc, SHAPES[case.shape])
        if case.check is not None:
            assert case.check(lab, doc), doc
        if extra == ["--dry-run"]:
            assert doc["dry_run"] is True and doc["applied"] is False
            assert lab.state() == before, "a dry run changed something"
        elif extra == ["--yes"]:
            assert doc["dry_run"] is False
            assert doc["applied"] is (name != "compact-nothing")
            assert (lab.state() != before) is (name != "compact-nothing")


@pytest.mark.parametrize("name", sorted(CASES))
def test_text_output_when_piped(lab, name):
    """Meaningful text (the case's facts; a dry run shows the plan's), never a box-drawing character."""
    case = CASES[name]
    _prepare(lab, case)
    facts = case.text(lab)
    for extra in (["--dry-run"], ["--yes"]) if case.mutating else ([],):
        code, out, err = _run(lab, case, "table", *extra)
        assert code == case.code, err
        assert not BOX_DRAWING.search(out), f"box-drawing characters in piped output:\n{out}"
        assert not out.lstrip().startswith(("{", "[")), f"text output looks like JSON:\n{out}"
        for fact in facts[:1] if extra == ["--dry-run"] else facts:
            assert fact in out, f"{fact!r} not in the output of {' '.join(case.command)} {' '.join(extra)}:\n{out}"


@pytest.mark.parametrize("output", ["json", "table"])
@pytest.mark.parametrize("name", sorted(n for n, c in CASES.items() if c.mutating and n != "compact-nothing"))
def test_refusal_prints_the_plan_and_changes_nothing(lab, name, output):
    """No terminal, no --yes: exit 6 after the plan (as text, or as the plan document with
    ``applied`` false), a hint that says where the plan is, and nothing changed."""
    case = CASES[name]
    _prepare(lab, case)
    before = lab.state()
    code, out, err = _run(lab, case, output)
    assert code == ExitCode.REFUSED, err
    assert lab.state() == before
    if output == "json":
        doc = json.loads(out)
        check_shape(doc, SHAPES[case.shape])
        assert doc["dry_run"] is False and doc["applied"] is False
        error = json.loads(err)["error"]
        assert error["exit_code"] == ExitCode.REFUSED and "without --yes" in error["message"]
        assert "JSON document on stdout" in error["hint"]
    else:
        assert case.text(lab)[0] in out
        assert "without --yes" in err and "review the plan above" in err
        assert not BOX_DRAWING.search(out)


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("name", ["describe", "snapshots-tree", "refs", "expire", "diff", "restore"])
def test_a_terminal_gets_rich_tables_and_trees(lab, name, monkeypatch):
    """The other side of the piped check: at a terminal, rich draws the same facts with boxes
    and tree guides."""
    monkeypatch.setenv("COLUMNS", "200")
    case = CASES[name]
    env = Env(stdout=_Tty(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(["--warehouse", lab.warehouse, *case.command, *case.args(lab), *(["--dry-run"] if case.mutating else [])],
               env)
    out = env.stdout.getvalue()
    assert code == 0, env.stderr.getvalue()
    assert BOX_DRAWING.search(out), out
    plain = re.sub(r"\x1b\[[0-9;]*m", "", out)  # without colors
    assert case.text(lab)[0] in plain, plain


# -- docs/reference/json-output.md --------------------------------------------------------------------------

JSON_PAGE = REPO / "docs" / "reference" / "json-output.md"


def _parse_doc_shape(text: str) -> Any:
    """Keys of a documented shape: ``{a, b: {c}, d: [{e}] | null}`` -> {"a": None, "b": {"c": None}, "d": [{...}]}."""
    tokens = re.findall(r"[{}\[\],:|*]|[A-Za-z_][A-Za-z0-9_-]*|\.\.\.", text)
    pos = 0

    def value() -> Any:
        nonlocal pos
        tok = tokens[pos]
        if tok == "{" and tokens[pos + 1] == "*":  # {*: value}: any keys
            while tokens[pos] != "}":
                pos += 1
            pos += 1
            result: Any = None
        elif tok == "{":
            pos += 1
            obj: dict[str, Any] = {}
            while tokens[pos] != "}":
                key = tokens[pos]
                pos += 1
                obj[key] = None
                if tokens[pos] == ":":
                    pos += 1
                    obj[key] = value()
                if tokens[pos] == ",":
                    pos += 1
            pos += 1
            result = obj
        elif tok == "[":
            pos += 1
            inner = value()
            assert tokens[pos] == "]", text
            pos += 1
            result = [inner]
        else:  # a scalar's name (string, int, ...) or "..." for the same again
            pos += 1
            result = None
        while pos < len(tokens) and tokens[pos] == "|":  # "| null"
            pos += 2
        return result

    return value()


def _keys(spec: Any) -> Any:
    """The key structure of a shape, as _parse_doc_shape returns it for the page."""
    if isinstance(spec, Opt):
        return _keys(spec.spec)
    if isinstance(spec, dict) and spec is not SPEC_JSON:
        return {k: _keys(v) for k, v in spec.items()}
    if isinstance(spec, list):
        return [_keys(spec[0])]
    return None


def _documented_shapes(text: str) -> dict[str, Any]:
    """Each "## `name`" section's shape, the ```text block under it."""
    out = {}
    for m in re.finditer(r"^## `([^`]+)`\n.*?^```text\n(.*?)^```", text, re.M | re.S):
        out[m.group(1)] = _parse_doc_shape(m.group(2))
    return out


def _all_keys(spec: Any) -> set[str]:
    keys: set[str] = set()
    if isinstance(spec, dict):
        for k, v in spec.items():
            keys |= {k} | _all_keys(v)
    elif isinstance(spec, list) and spec:
        keys |= _all_keys(spec[0])
    return keys


NOT_KEYS = {"expire_snapshots"}  # Iceberg Java's procedure, named in expire's notes


def test_shape_notes_name_keys_of_their_shape():
    """A field a shape's notes name (in backquotes, with an underscore) is a key of that shape."""
    for name, note in NOTES.items():
        spec = _tree_keys() if name == "snapshots --tree" else _keys(SHAPES[name])
        for word in set(re.findall(r"`([a-z]+_[a-z_]+)`", note)) - NOT_KEYS:
            assert word in _all_keys(spec), f"the notes of {name} name {word}, which is not one of its keys"


def _tree_keys() -> Any:
    run: dict[str, Any] = {}
    snap = {k: _keys(v) for k, v in TREE_SNAPSHOT.items() if k != "forks"}
    snap["forks"] = [None]  # the page: "forks: [...]" (runs again)
    run["snapshots"] = [snap]
    return {"roots": [run]}


def _check_documented(documented: dict[str, Any]) -> None:
    assert set(documented) == set(SHAPES), f"the page documents {sorted(documented)}, the test {sorted(SHAPES)}"
    for name, spec in SHAPES.items():
        want = _tree_keys() if name == "snapshots --tree" else _keys(spec)
        assert documented[name] == want, f"the documented shape of {name} differs from the output's:\n" \
                                         f"{documented[name]}\n{want}"


def test_docs_document_these_shapes():
    """The checked-in page, and the page the result dataclasses generate, document exactly the
    shapes real output is checked against."""
    _check_documented(_documented_shapes(JSON_PAGE.read_text()))
    _check_documented(_documented_shapes(json_output_markdown()))


def test_a_changed_result_type_changes_the_page(monkeypatch):
    """The page follows the dataclasses: a field added to a result shows in the generated page
    (and so fails this contract until the checked shape has it too)."""
    from icectl.cli.views.refs import RefChange

    extra = dataclasses.make_dataclass("RefChange", [("extra_key", int, dataclasses.field(default=0))],
                                   bases=(RefChange,))
    monkeypatch.setitem(JSON_SHAPES, "rollback, cherry-pick, branch, tag", extra)
    documented = _documented_shapes(json_output_markdown())
    assert "extra_key" in documented["rollback, cherry-pick, branch, tag"]
    with pytest.raises(AssertionError, match="rollback"):
        _check_documented(documented)
