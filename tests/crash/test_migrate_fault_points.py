"""``migrate`` under the crash suite's fault points (tests/crash/crash_faults.py): four tables and two
views moved from a SQLite catalog to another one, and to a Hive Metastore; the steps counted (each SQL catalog
statement that writes: the target's namespace, table and view inserts, the source's deletes; every call of
the metastore's Thrift client; any FileIO write or delete, of which a migration must make none), then
the run failed at each step:

- ``crash`` in-process (later steps have no effect) and, SQL to SQL, a real ``os._exit(137)`` in a
  subprocess;
- ``error``: the step fails with its layer's error (the database's, a broken metastore connection);
  the command reports it with a documented exit code;
- Hive: ``lost``, each metastore call takes effect and its answer is lost.

To the metastore, the calls repeat table by table: the first and the last step of each kind are
faulted, unless ``ICECTL_CRASH_EVERY_STEP=1`` (every step; see :func:`metastore_fault_points`).

After each: every table and view is in at least one catalog, at its metadata file (never in none), no file
was written or deleted; then a re-run (no fault) ends with every table in exactly one catalog, the
target, at the metadata file it had in the source."""
from __future__ import annotations

import io
import os
import pathlib
import shutil
import subprocess
import sys
from typing import Any

import pytest
import yaml

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
from crash_faults import COUNT, CRASH, ENV, ERROR, LOST, Crash, Injector, injecting  # noqa: E402
from test_metastore_fault_points import metastore, quick_status_check  # noqa: E402,F401 (fixtures)
from migrate_tables import build_namespace, build_views, files_under, where  # noqa: E402

from icectl.catalog import CatalogConfig, build_catalog  # noqa: E402
from icectl.catalog.sql import SqlCatalog  # noqa: E402
from icectl.cli.context import Env  # noqa: E402
from icectl.cli.main import run  # noqa: E402
from icectl.errors import ExitCode, NotFoundError  # noqa: E402
from icectl.io import FileIO  # noqa: E402

pytestmark = pytest.mark.slow  # every step replayed, in-process and in subprocesses (CI runs it)

DOCUMENTED = {int(c) for c in ExitCode} - {int(ExitCode.ERROR)}
ARGV = ["migrate", "--from", "src", "--to", "dst", "db", "-y"]
KILLED = 137
BOOT = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import crash_faults; crash_faults.install_from_env(); "
        "from icectl.cli.main import run; run()")


class Workspace:
    def __init__(self, root: pathlib.Path, target: dict[str, str] | None = None):
        self.root = root
        root.mkdir(parents=True)
        self.target = target or {"uri": f"sqlite:///{root / 'dst.db'}", "warehouse": str(root / "wh-dst")}
        self.src_db, self.dst_db = root / "src.db", root / "dst.db"
        self.idents = build_namespace(self.catalogs()[0], "db", 4) + build_views(self.catalogs()[0], "db", 2,
                                                                                   str(root / "wh"))
        self.pristine = root / "src.db.pristine"
        shutil.copyfile(self.src_db, self.pristine)
        self.before = where(*self.catalogs(), self.idents)
        self.files = files_under(str(root / "wh"))
        self.config = root / "icectl.yaml"
        self.config.write_text(yaml.safe_dump({"catalog": {
            "src": {"uri": f"sqlite:///{self.src_db}", "warehouse": str(root / "wh")},
            "dst": self.target}}))

    def catalogs(self) -> tuple[Any, Any]:
        return (SqlCatalog("src", f"sqlite:///{self.src_db}", str(self.root / "wh"), FileIO()),
                build_catalog(CatalogConfig("dst", dict(self.target))))

    def reset(self) -> None:
        """The source as built; the target without the namespace (its entries removed, no file)."""
        shutil.copyfile(self.pristine, self.src_db)
        if self.dst_db.exists():
            self.dst_db.unlink()
        target = self.catalogs()[1]
        if target.kind != "sql":
            try:
                for ident in target.list_tables(("db",)):
                    target.drop_table(ident)
                for ident in target.list_views(("db",)):
                    target.drop_view(ident)
                target.drop_namespace(("db",))
            except NotFoundError:
                pass

    def run(self) -> tuple[int, str]:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
        return run(ARGV, env), env.stderr.getvalue()

    def run_faulted(self, mode: str, k: int, steps: list[str]) -> tuple[str, int | None, str]:
        """From the built state, run with ``mode`` injected at step ``k`` (which must fire):
        (what, exit code or None when it crashed, stderr)."""
        self.reset()
        what = f"{mode} at step {k} ({steps[k - 1]})"
        inj = Injector(mode, k)
        with injecting(inj):
            try:
                code, err = self.run()
            except Crash:
                code, err = None, ""
        assert inj.fired, f"{what}: did not fire"
        return what, code, err

    def subprocess(self, fault: str, log: pathlib.Path) -> subprocess.CompletedProcess:
        env = {**os.environ, ENV: fault, ENV + "_LOG": str(log), "ICECTL_CONFIG": str(self.config)}
        return subprocess.run([sys.executable, "-c", BOOT, str(HERE), *ARGV], env=env, capture_output=True,
                              text=True, timeout=120)

    def check_reachable(self, what: str) -> None:
        """Each table in the source or the target (or both) at its metadata file; never in none."""
        for ident, (src, dst) in where(*self.catalogs(), self.idents).items():
            original = self.before[ident][0]
            assert src is not None or dst is not None, f"{what}: {ident} is in no catalog"
            assert {src, dst} - {None} == {original}, f"{what}: {ident} at {src}, {dst}"
        assert files_under(str(self.root / "wh")) == self.files, f"{what}: a file was written or deleted"

    def check_rerun_finishes(self, what: str) -> None:
        code, err = self.run()
        assert code == 0, f"{what}: the re-run: {err}"
        assert where(*self.catalogs(), self.idents) == {i: (None, src) for i, (src, _) in self.before.items()}, what


@pytest.fixture(scope="module")
def ws(tmp_path_factory, monkeypatch_module) -> Workspace:
    w = Workspace(tmp_path_factory.mktemp("crash-migrate") / "ws")
    monkeypatch_module.setenv("ICECTL_CONFIG", str(w.config))
    monkeypatch_module.delenv("ICECTL_CATALOG", raising=False)
    return w


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


@pytest.fixture(scope="module")
def steps(ws) -> list[str]:
    ws.reset()
    inj = Injector(COUNT)
    with injecting(inj):
        code, err = ws.run()
    assert code == 0, err
    ws.check_rerun_finishes("the count run")
    assert not [s for s in inj.steps if not s.startswith(("sql ", "thrift "))], f"a migration wrote a file: {inj.steps}"
    # the target's namespace (a row per property), 4 tables and 2 views, the source's 6 deletes
    kinds = [s.split()[1] for s in inj.steps]
    assert kinds.count("delete") == 6 and sum(".metadata.json" in s for s in inj.steps) == 6, inj.steps
    return inj.steps


@pytest.mark.parametrize("mode", [CRASH, ERROR])
def test_failed_at_each_step_every_table_stays_reachable_and_a_rerun_finishes(ws, steps, mode):
    for k in range(1, len(steps) + 1):
        what, code, err = ws.run_faulted(mode, k, steps)
        if mode == CRASH:
            assert code is None, f"{what}: the crash did not stop the command"
        else:
            assert code in DOCUMENTED, f"{what}: exit {code}: {err}"
        ws.check_reachable(what)
        ws.check_rerun_finishes(what)


def test_killed_at_each_step_in_a_subprocess(ws, steps, tmp_path):
    ws.reset()
    log = tmp_path / "steps.log"
    p = ws.subprocess("count:0", log)
    assert p.returncode == 0, p.stderr
    assert [s.split()[:2] for s in log.read_text().splitlines()] == [s.split()[:2] for s in steps]
    for k in range(1, len(steps) + 1):
        ws.reset()
        p = ws.subprocess(f"crash:{k}", tmp_path / "unused.log")
        what = f"killed at step {k} ({steps[k - 1]})"
        assert p.returncode == KILLED, f"{what}: exit {p.returncode}: {p.stderr}"
        ws.check_reachable(what)
        ws.check_rerun_finishes(what)


# -- to a Hive Metastore ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def hive_ws(tmp_path_factory, monkeypatch_module, metastore) -> Workspace:
    root = tmp_path_factory.mktemp("crash-migrate-hive") / "ws"
    w = Workspace(root, {"type": "hive", "uri": metastore, "warehouse": str(root.parent / "hive-wh")})
    monkeypatch_module.setenv("ICECTL_CONFIG", str(w.config))
    return w


def metastore_fault_points(steps: list[str]) -> set[int]:
    """The steps (1-based) to fault on the way to a metastore: every one with
    ``ICECTL_CRASH_EVERY_STEP=1``; by default the first and the last of each kind (its first two words:
    ``thrift create_table``, ``sql delete`` ...). The migration makes the same calls for each table
    and view in turn, so a fault between the first and the last of a kind meets the same state
    (some objects moved, the others not yet) as those two."""
    if os.environ.get("ICECTL_CRASH_EVERY_STEP") == "1":
        return set(range(1, len(steps) + 1))
    first: dict[str, int] = {}
    last: dict[str, int] = {}
    for k, step in enumerate(steps, 1):
        kind = " ".join(step.split()[:2])
        first.setdefault(kind, k)
        last[kind] = k
    return set(first.values()) | set(last.values())


@pytest.mark.hive
@pytest.mark.spark  # the metastore is a JVM
def test_to_a_metastore_failed_at_each_call_every_table_stays_reachable(hive_ws):
    ws = hive_ws
    ws.reset()
    counted = Injector(COUNT)
    with injecting(counted):
        code, err = ws.run()
    assert code == 0, err
    ws.check_rerun_finishes("the count run")
    steps = counted.steps
    assert {"thrift create_table", "thrift create_database"} <= {" ".join(s.split()[:2]) for s in steps}, steps
    assert not [s for s in steps if not s.startswith(("sql ", "thrift "))], f"a migration wrote a file: {steps}"
    runs = 0
    points = metastore_fault_points(steps)
    for mode in (CRASH, ERROR, LOST):
        for k in range(1, len(steps) + 1):
            if k not in points or (mode == LOST and not steps[k - 1].startswith("thrift ")):
                continue
            what, code, err = ws.run_faulted(mode, k, steps)
            assert (code is None) if mode == CRASH else (code in DOCUMENTED and "Traceback" not in err), \
                f"{what}: exit {code}: {err}"
            ws.check_reachable(what)
            ws.check_rerun_finishes(what)
            runs += 1
    print(f"migrate to hive: {len(steps)} steps ({len(points)} faulted), {runs} faulted runs: {steps}")
