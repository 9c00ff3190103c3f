"""The in-process crash of tests/crash/test_fault_points.py checked against the real thing: the
command runs as ``python -m icectl``'s entry point in a subprocess whose k-th I/O step calls
``os._exit(137)`` (no clean-up, no ``finally``, no atexit), then the table is checked the same way.
The subprocess counts the same steps as the in-process run."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from crash_faults import COUNT, ENV, Crash, Injector, injecting  # noqa: E402
from crash_state import DemoWorkspace, observe  # noqa: E402
from test_fault_points import COMMANDS, _kind, fault_points  # noqa: E402

pytestmark = pytest.mark.slow  # a subprocess for every step of five commands (CI runs it)

KILLED = 137
BOOT = ("import sys; sys.path.insert(0, sys.argv.pop(1)); import crash_faults; crash_faults.install_from_env(); "
        "from icectl.cli.main import run; run()")


def _subprocess(ws: DemoWorkspace, argv: list[str], fault: str, log: pathlib.Path) -> subprocess.CompletedProcess:
    env = {**os.environ, ENV: fault, ENV + "_LOG": str(log)}
    return subprocess.run([sys.executable, "-c", BOOT, str(HERE), *ws.catalog_args, *argv], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", ["expire", "rewrite-manifests", "rollback", "create", "drop-purge"])
def test_killed_at_each_step(name, tmp_path):
    fv, argv, names, *setup = COMMANDS[name]
    ws = DemoWorkspace(tmp_path / "ws", fv, *setup).build()
    before = observe(ws, names)
    inproc = Injector(COUNT)
    with injecting(inproc):
        try:
            code, _, err = ws.run(*argv)
        except Crash:
            raise AssertionError("a count run crashed") from None
    assert code == 0, err
    after = observe(ws, names)
    ws.reset()
    log = tmp_path / "steps.log"
    p = _subprocess(ws, argv, "count:0", log)
    assert p.returncode == 0, p.stderr
    steps = log.read_text().splitlines()
    assert [_kind(s) for s in steps] == [_kind(s) for s in inproc.steps]
    assert observe(ws, names) == after
    for k in fault_points(steps):
        ws.reset()
        p = _subprocess(ws, argv, f"crash:{k}", tmp_path / "unused.log")
        assert p.returncode == KILLED, f"step {k} ({steps[k - 1]}): exit {p.returncode}: {p.stderr}"
        state = observe(ws, names)
        assert state in (before, after), f"{name} killed at step {k} ({steps[k - 1]})"
    print(f"{name}: killed at {len(fault_points(steps))} of {len(steps)} steps")
