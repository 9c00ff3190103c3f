"""Every mutating command, failed at each of its I/O steps (tests/crash/crash_faults.py), on the
demo table: after each run the table loads, validates clean, every file a retained snapshot
reaches exists, and its rows per branch and tag are those of before or of after a successful run.

One successful run counts the steps (N); then for k = 1..N the k-th step crashes the command
(later steps have no effect, as after a kill) and, separately, fails with an I/O error that the
command must handle (exit code from the documented set, never an internal error); and each
pointer move that succeeded is reported as an unknown outcome (exit 12, nothing the table reaches
deleted). A long run of deletes (a purge's) is sampled unless
``ICECTL_CRASH_EVERY_STEP=1`` (see :func:`fault_points`).
"""
from __future__ import annotations

import hashlib
import json
import os
import pathlib
import sys
from typing import Any

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from crash_faults import COUNT, CRASH, ERROR, UNKNOWN, Crash, Injector, injecting  # noqa: E402
from crash_state import DemoWorkspace, observe  # noqa: E402

from icectl.errors import ExitCode  # noqa: E402
from icectl.ops.maintain import quarantine  # noqa: E402

pytestmark = pytest.mark.slow  # every step of every command, replayed: minutes (CI runs it)

EVENTS = "demo.events"
S8 = "9115177490179072159"  # tag before-overwrite, an ancestor of main
S11 = "6807948677818654560"  # the staged WAP snapshot

QUARANTINE = ["remove-orphans", EVENTS, "--quarantine", "quarantine", "-y"]
RESTORE = ["remove-orphans", EVENTS, "--restore-quarantine", "-y"]

# name -> (format version of the demo, argv, tables to observe[, commands run first])
COMMANDS: dict[str, tuple] = {
    "create": (2, ["create", "demo.t2", "-s", "id:long!, name:string", "-p", "bucket(4, id)", "-y"],
               [EVENTS, "demo.t2"]),
    "expire": (2, ["expire", EVENTS, "-y"], [EVENTS]),
    "expire-clean-metadata": (2, ["expire", EVENTS, "--older-than", "1h", "--clean-expired-metadata", "-y"],
                              [EVENTS]),
    "expire-v3": (3, ["expire", EVENTS, "-y"], [EVENTS]),
    "rollback": (2, ["rollback", EVENTS, "--to-snapshot", S8, "-y"], [EVENTS]),
    "cherry-pick": (2, ["cherry-pick", EVENTS, S11, "-y"], [EVENTS]),
    "branch-create": (2, ["branch", "create", EVENTS, "b1", "--snapshot", S8, "-y"], [EVENTS]),
    "branch-drop": (2, ["branch", "drop", EVENTS, "audit", "-y"], [EVENTS]),
    "tag-create": (2, ["tag", "create", EVENTS, "t1", "-y"], [EVENTS]),
    "tag-drop": (2, ["tag", "drop", EVENTS, "before-overwrite", "-y"], [EVENTS]),
    "remove-orphans": (2, ["remove-orphans", EVENTS, "-y"], [EVENTS]),
    "remove-orphans-quarantine": (2, QUARANTINE, [EVENTS], (("!plant-orphans",),)),
    "remove-orphans-restore-quarantine": (2, RESTORE, [EVENTS], (("!plant-orphans",), tuple(QUARANTINE))),
    "upgrade-format": (2, ["upgrade-format", EVENTS, "--to", "3", "-y"], [EVENTS]),
    "rewrite-deletes": (2, ["rewrite-deletes", EVENTS, "-y"], [EVENTS]),
    # position delete files of a table upgraded to v3 become deletion vectors
    "rewrite-deletes-to-dvs": (2, ["rewrite-deletes", EVENTS, "-y"], [EVENTS],
                               (("upgrade-format", EVENTS, "--to", "3", "-y"),)),
    "alter": (2, ["alter", EVENTS, "--add-column", "note string", "-y"], [EVENTS]),
    "properties-set": (2, ["properties", EVENTS, "set", "write.metadata.delete-after-commit.enabled=true",
                           "write.metadata.previous-versions-max=2", "-y"], [EVENTS]),
    "rewrite-manifests": (2, ["rewrite-manifests", EVENTS, "-y"], [EVENTS]),
    "drop-purge": (2, ["drop", EVENTS, "--purge", "-y"], [EVENTS]),
    "rename": (2, ["rename", EVENTS, "demo.renamed", "-y"], [EVENTS, "demo.renamed"]),
    # issue 15's commands: a restore is a commit on top of today's metadata; maintain takes its
    # lock file, runs the steps the table's policy allows (no compact here: no Spark), releases it
    # repair of a lost data file on every ref head that reaches it
    "repair": (2, ["repair", EVENTS, "--all-refs", "-y"], [EVENTS], (("!lose-data-file",),)),
    "restore": (2, ["restore", EVENTS, "--to-version", "10", "-y"], [EVENTS]),
    # issue 25: the current metadata file truncated; restore makes the newest good file current
    "restore-broken": (2, ["restore", EVENTS, "-y"], [EVENTS], (("!truncate-current-metadata",),)),
    "restore-broken-v3": (3, ["restore", EVENTS, "-y"], [EVENTS], (("!truncate-current-metadata",),)),
    # repair of file metrics that lie (a wrong bound, record count and size), in v2 and v3 (row lineage)
    "repair-metrics": (2, ["repair", EVENTS, "--metrics", "-y"], [EVENTS], (("!break-metrics",),)),
    "repair-metrics-v3": (3, ["repair", EVENTS, "--metrics", "-y"], [EVENTS], (("!break-metrics",),)),
    "repair-default-metrics": (2, ["repair", EVENTS, "-y"], [EVENTS], (("!break-metrics",),)),
    # issue 25 item 2: main's head's manifest list deleted; repair rebuilds it (v3: row lineage)
    "repair-manifest-list": (2, ["repair", EVENTS, "-y"], [EVENTS], (("!lose-manifest-list",),)),
    "repair-manifest-list-v3": (3, ["repair", EVENTS, "-y"], [EVENTS], (("!lose-manifest-list",),)),
    # issue 25 item 4: a data file live twice in main's head keeps one entry (v2; v3 with row lineage)
    "repair-duplicates": (2, ["repair", EVENTS, "--duplicates", "-y"], [EVENTS], (("!duplicate-data-file",),)),
    "repair-duplicates-v3": (3, ["repair", EVENTS, "--duplicates", "-y"], [EVENTS], (("!duplicate-data-file",),)),
    "repair-default-duplicates": (2, ["repair", EVENTS, "-y"], [EVENTS], (("!duplicate-data-file",),)),
    "maintain": (2, ["maintain", EVENTS, "-y"], [EVENTS],
                 (("properties", EVENTS, "set", "icectl.maintain.steps=rewrite-deletes,expire,remove-orphans",
                   "-y"),)),
}

DOCUMENTED = {int(c) for c in ExitCode} - {int(ExitCode.ERROR)}
# after each fault, running the command again finishes it (the tables of after): these run in
# test_a_rerun_after_each_fault_finishes, which checks every fault as the test of the rest does too
RERUN = ["repair-manifest-list", "repair-manifest-list-v3"]


@pytest.fixture(scope="module")
def workspaces(tmp_path_factory):
    made: dict[tuple, DemoWorkspace] = {}

    def get(fv: int, setup: tuple = (), *, kind: str = "sql") -> DemoWorkspace:
        key = (fv, setup, kind)
        if key not in made:
            made[key] = DemoWorkspace(tmp_path_factory.mktemp(f"crash-{kind}-v{fv}") / "ws", fv, setup, kind).build()
        made[key].reset()
        return made[key]

    return get


def _run(ws: DemoWorkspace, argv: list[str], injector: Injector) -> tuple[int | None, str]:
    with injecting(injector):
        try:
            code, _, err = ws.run(*argv)
        except Crash:
            return None, "crashed"
    return code, err


def fault_points(steps: list[str]) -> list[int]:
    """The steps (1-based) to fault: every one with ``ICECTL_CRASH_EVERY_STEP=1``; by default, in
    a run of more than five deletes (after a commit or a purge's drop, each leaves the table in the
    same state), its first two, middle and last two."""
    if os.environ.get("ICECTL_CRASH_EVERY_STEP") == "1":
        return list(range(1, len(steps) + 1))
    out: list[int] = []
    i = 0
    while i < len(steps):
        j = i
        while j + 1 < len(steps) and _kind(steps[j + 1]) == _kind(steps[i]):
            j += 1
        run = list(range(i + 1, j + 2))
        out += run if len(run) <= 5 or _kind(steps[i]) != "delete" else sorted({*run[:2], run[len(run) // 2], *run[-2:]})
        i = j + 1
    return out


def _kind(step: str) -> str:
    """``write``, ``delete``, ``sql update`` ...: what a step does (paths have random names)."""
    words = step.split()
    return " ".join(words[:2] if words[0] == "sql" else words[:1])


@pytest.mark.parametrize("name", sorted(set(COMMANDS) - set(RERUN)))
def test_a_fault_at_each_step_leaves_the_table_before_or_after(name, workspaces):
    fv, argv, names, *setup = COMMANDS[name]
    fault_every_step(workspaces(fv, *setup), name, argv, names)


# The file-system catalog: its pointer is vN.metadata.json, renamed into place without replacing,
# then version-hint.text.
HADOOP = ["expire", "rollback", "rewrite-manifests", "rewrite-deletes", "alter", "tag-create", "restore-broken"]



@pytest.mark.parametrize("name", RERUN)
def test_a_rerun_after_each_fault_finishes(name, workspaces):
    fv, argv, names, *setup = COMMANDS[name]
    fault_every_step(workspaces(fv, *setup), name, argv, names, rerun=True)


@pytest.mark.parametrize("name", HADOOP)
def test_file_system_catalog(name, workspaces):
    fv, argv, names, *setup = COMMANDS[name]
    fault_every_step(workspaces(fv, *setup, kind="hadoop"), name, argv, names)


def fault_every_step(ws: DemoWorkspace, name: str, argv: list[str], names: list[str], *,
                     rerun: bool = False) -> None:
    """With ``rerun``, each fault (crash, I/O error, unknown outcome) is followed by the same
    command without faults, which must finish: exit 0 and the tables of after."""
    before = observe(ws, names)
    counted = Injector(COUNT)
    code, err = _run(ws, argv, counted)
    assert code == 0, err
    after = observe(ws, names)
    assert after != before or name.startswith(("expire", "remove-orphans", "rewrite-", "maintain")), \
        f"{name} changed nothing that the state shows"
    steps = counted.steps
    assert steps, f"{name} performed no I/O step"
    runs = []
    untouched = 0
    for mode in (CRASH, ERROR):
        for k in fault_points(steps):
            ws.reset()
            inj = Injector(mode, k)
            code, err = _run(ws, argv, inj)
            assert inj.fired, f"{mode} at step {k} of {name} never came (steps: {steps})"
            assert _kind(inj.fired) == _kind(steps[k - 1]), \
                f"step {k} of {name} is not the one counted: {inj.fired} / {steps[k - 1]}"
            if mode == ERROR:
                assert code in DOCUMENTED, f"{name}, I/O error at step {k} ({inj.fired}): exit {code}: {err}"
                assert "Traceback" not in err
            runs.append((mode, k))
            if ws.untouched():
                untouched += 1  # only new files, referenced by nothing: the tables are those of before
            else:
                state = observe(ws, names)
                assert state in (before, after), f"{name}, {mode} at step {k} ({inj.fired}): the tables are " \
                                                 f"neither those of before nor of after"
            if rerun:
                _rerun(ws, name, argv, names, after, f"{mode} at step {k} ({inj.fired})")
    for k in range(1, counted.moves + 1):
        ws.reset()
        inj = Injector(UNKNOWN, k)
        code, err = _run(ws, argv, inj)
        assert inj.fired
        if name == "maintain":  # a failed step is the table's failure (15); no later step runs after it
            assert code == ExitCode.MAINTENANCE_FAILED and "the commit's outcome is unknown" in err, err
            assert not any(f"{s}: done" in err for s in ("expire", "remove-orphans")[k - 1:]), err
        else:
            assert code == ExitCode.COMMIT_STATE_UNKNOWN, f"{name}, unknown outcome of pointer move {k}: exit {code}: {err}"
        state = observe(ws, names)
        assert state in (before, after)
        if rerun:
            _rerun(ws, name, argv, names, after, f"unknown outcome of pointer move {k}")
    print(f"{name}: {len(steps)} steps ({len(fault_points(steps))} faulted), {counted.moves} pointer moves, {len(runs) + counted.moves} faulted runs "
          f"({untouched} left every file as it was)")


def _rerun(ws: DemoWorkspace, name: str, argv: list[str], names: list[str], after: Any, what: str) -> None:
    """The command, run again after a fault, finishes: exit 0 and the tables of after."""
    code, err = _run(ws, argv, Injector(COUNT))
    assert code == 0, f"{name}, run again after {what}: exit {code}: {err}"
    assert observe(ws, names) == after, f"{name}, run again after {what}: the tables are not those of after"
RECOVERIES = ["restore-broken", "restore-broken-v3", "repair-metrics", "repair-metrics-v3", "repair-duplicates"]


@pytest.mark.parametrize("name", RECOVERIES)
def test_a_recovery_crashed_at_each_step_finishes_when_run_again(name, workspaces):
    """issue 25: a restore from a broken current metadata file, a metrics repair and a duplicates
    repair, crashed at each I/O step, then run again without faults: the second run succeeds and
    leaves the table as one uninterrupted run does (loading, validating clean), and no file outside
    the table's location changed (the SQL catalog's database aside: the pointer lives there)."""
    fv, argv, names, *setup = COMMANDS[name]
    ws = workspaces(fv, *setup)
    outside = _outside(ws)
    counted = Injector(COUNT)
    code, err = _run(ws, argv, counted)
    assert code == 0, err
    after = observe(ws, names)
    assert _outside(ws) == outside
    for k in fault_points(counted.steps):
        ws.reset()
        inj = Injector(CRASH, k)
        assert _run(ws, argv, inj)[0] is None and inj.fired
        code, err = _run(ws, argv, Injector(COUNT))
        assert code == 0, f"{name}, run again after a crash at step {k} ({inj.fired}): exit {code}: {err}"
        assert observe(ws, names) == after, f"{name}, run again after a crash at step {k} ({inj.fired})"
        assert _outside(ws) == outside, f"{name}, crash at step {k}: a file outside the table changed"
    print(f"{name}: {len(fault_points(counted.steps))} crashes, each run again")


def _outside(ws) -> dict[str, str]:
    """Every file under the workspace but the table's folder and the catalog database: path -> sha256."""
    table_dir = os.path.join(ws.warehouse, "demo", "events")
    out = {}
    for d, _, fs in os.walk(ws.root):
        for f in fs:
            p = os.path.join(d, f)
            if p.startswith(table_dir + os.sep) or f.startswith("catalog.db"):
                continue
            out[p] = hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest()
    return out


@pytest.mark.parametrize("name", ["remove-orphans-quarantine", "remove-orphans-restore-quarantine"])
def test_quarantine_fault_at_each_step_loses_no_orphan(name, workspaces, monkeypatch):
    """Quarantine (13 orphans in manifests of 5) and its restore, crashed or failed at every I/O
    step: each orphan is at its original path or in quarantine with a manifest entry, bytes
    unchanged; a restore afterwards puts every one back byte for byte and leaves no entry."""
    monkeypatch.setattr(quarantine, "BATCH", 5)
    fv, argv, names, setup = COMMANDS[name]
    ws = workspaces(fv, setup)
    assert len(ws.orphans) == 13
    counted = Injector(COUNT)
    code, err = _run(ws, argv, counted)
    assert code == 0, err
    assert any(s.startswith("move ") for s in counted.steps), counted.steps
    for mode in (CRASH, ERROR):
        for k in range(1, len(counted.steps) + 1):
            ws.reset()
            inj = Injector(mode, k)
            code, err = _run(ws, argv, inj)
            assert inj.fired and "Traceback" not in err
            where = f"{name}, {mode} at step {k} ({inj.fired})"
            entries = _entries(ws)
            for path, digest in ws.orphans.items():
                homes = [path] + [e["quarantine"] for e in entries if e["original"] == path]
                assert digest in {_sha(p) for p in homes if os.path.exists(p)}, f"{where}: {path} is lost"
            code, _, err = ws.run(*RESTORE)
            assert code == 0, f"{where}, then restore: {err}"
            assert {p: _sha(p) for p in ws.orphans if os.path.exists(p)} == ws.orphans, where
            assert _entries(ws) == [], where
            left = [p for p in ws.files() if "/quarantine/" in p]
            assert left == [], f"{where}: left in quarantine: {left}"


def _entries(ws) -> list[dict]:
    return [json.loads(line) for p in sorted(ws.files()) if p.endswith(".jsonl") and "/quarantine/" in p
            for line in pathlib.Path(p).read_text().splitlines() if line.strip()]


def _sha(path: str) -> str:
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()
