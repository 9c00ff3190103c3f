"""expire killed at each of its I/O steps (tests/crash/crash_faults.py), then run again: after the
kill the table loads and validates clean (``validate --deep``: every file a retained snapshot
reaches is there), and the re-run finishes the job: exactly the files a run that was never killed
deletes are gone, and no record of pending deletes is left (issue 26: "a kill mid-way leaves a
valid table and a re-run continues").
"""
from __future__ import annotations

import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from crash_faults import COUNT, CRASH, Crash, Injector, injecting  # noqa: E402
from crash_state import DemoWorkspace  # noqa: E402

from icectl.ops.maintain.expire_pending import PENDING_NAME  # noqa: E402

pytestmark = pytest.mark.slow  # a kill at every step, then a re-run: a minute

EVENTS = "demo.events"
RESCUE = ["expire", EVENTS, "--older-than", "0d", "--retain-last", "1", "--clean-expired-metadata", "-y"]


def _gone(ws: DemoWorkspace) -> set[str]:
    return {os.path.relpath(p, ws.pristine) for p in (os.path.join(d, f) for d, _, fs in os.walk(ws.pristine)
                                                       for f in fs)} - {os.path.relpath(p, ws.root) for p in ws.files()}


@pytest.mark.parametrize("kind", ["sql", "hadoop"])
def test_a_killed_expire_leaves_a_valid_table_and_a_rerun_finishes_it(kind, tmp_path):
    ws = DemoWorkspace(tmp_path / "ws", 2, (), kind).build()
    counted = Injector(COUNT)
    with injecting(counted):
        code, _, err = ws.run(*RESCUE)
    assert code == 0, err
    expected = _gone(ws)
    deletes = [s for s in counted.steps if s.startswith("delete ")]
    assert len(deletes) >= 10 and any(s.startswith("write ") and PENDING_NAME in s for s in counted.steps)
    assert not any(PENDING_NAME in p for p in ws.files())
    killed_after_commit = 0
    for k in range(1, len(counted.steps) + 1):
        ws.reset()
        inj = Injector(CRASH, k)
        with injecting(inj):
            try:
                ws.run(*RESCUE)
            except Crash:
                pass
        assert inj.fired, f"step {k} never came"
        where = f"killed at step {k} ({inj.fired})"
        code, out, err = ws.run("validate", EVENTS, "--deep")
        assert code == 0, f"{where}: the table does not validate: {out}{err}"
        left = [p for p in ws.files() if p.endswith(PENDING_NAME)]
        if inj.fired.startswith("delete "):
            killed_after_commit += 1
            assert left, f"{where}: no record of the deletes still owed"
            assert _gone(ws) < expected, where
        code, _, err = ws.run(*RESCUE)
        assert code == 0, f"{where}, then again: {err}"
        assert _gone(ws) == expected, f"{where}, then again: {sorted(expected ^ _gone(ws))[:3]}"
        assert not any(p.endswith(PENDING_NAME) for p in ws.files()), where
        code, out, err = ws.run("validate", EVENTS, "--deep")
        assert code == 0, f"{where}, then again: {out}{err}"
    assert killed_after_commit == len(deletes)
