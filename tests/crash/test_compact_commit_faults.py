"""``compact`` faulted at each I/O step of its commit phase (tests/crash/crash_faults.py), on the
demo table. The Spark job runs once, for real (spark-submit, local[*]); the fault runs replay its
output (the Parquet files it wrote and its report, byte for byte) instead of starting Spark again,
so each run exercises icectl's side: reading the report, writing manifests, the manifest list and
the metadata file, moving the pointer, and cleaning up after a failure.
"""
from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from crash_faults import COUNT, CRASH, ERROR, UNKNOWN, Crash, Injector, injecting  # noqa: E402
from crash_state import DemoWorkspace, observe  # noqa: E402

from icectl.errors import ExitCode  # noqa: E402
from icectl.spark import protocol  # noqa: E402
from icectl.spark.protocol import RewriteResult  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # one real job, then every commit step replayed

EVENTS = "demo.events"
ARGV = ["compact", EVENTS, "-y"]
DOCUMENTED = {int(c) for c in ExitCode} - {int(ExitCode.ERROR)}


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    return tmp_path


def test_compact_commit_phase_faults(isolated, monkeypatch):
    from icectl.ops.maintain import compact
    from icectl.spark import submit

    ws = DemoWorkspace(isolated / "ws", 2).build()
    before = observe(ws, [EVENTS])

    # The real job, once: keep its report and the bytes of every file it wrote.
    real_read = compact.read_result
    recorded: dict = {}

    def recording(table, job):
        report = real_read(table, job)
        recorded["report"] = report
        recorded["files"] = {f.path: pathlib.Path(f.path).read_bytes() for f in report.files}
        return report

    monkeypatch.setattr(compact, "read_result", recording)
    code, out, err = ws.run(*ARGV)
    assert code == 0, err
    assert recorded["report"].files and not recorded["report"].error
    after = observe(ws, [EVENTS])

    # Replays: the job "runs" by putting its files back; the report is the one it wrote.
    def replay_job(argv, template, *, log_file=None, **kw):
        for path, data in recorded["files"].items():
            pathlib.Path(path).write_bytes(data)

    monkeypatch.setattr(submit, "run_command", replay_job)
    monkeypatch.setattr(compact, "read_result", lambda table, job: protocol.loads(RewriteResult, protocol.dumps(recorded["report"])))

    def faulted(inj: Injector, argv: list[str] = ARGV) -> tuple[int | None, str]:
        ws.reset()
        with injecting(inj):
            try:
                code, _, err = ws.run(*argv)
            except Crash:
                return None, "crashed"
        return code, err

    counted = Injector(COUNT)
    code, err = faulted(counted)
    assert code == 0, err
    assert observe(ws, [EVENTS]) == after
    steps = counted.steps
    assert steps and counted.moves == 1
    runs = 0
    for mode in (CRASH, ERROR):
        for k in range(1, len(steps) + 1):
            inj = Injector(mode, k)
            code, err = faulted(inj)
            assert inj.fired
            if mode == ERROR:
                assert code in DOCUMENTED, f"I/O error at step {k} ({inj.fired}): exit {code}: {err}"
            state = observe(ws, [EVENTS])
            assert state in (before, after), f"{mode} at step {k} ({inj.fired})"
            runs += 1
    inj = Injector(UNKNOWN, 1)
    code, err = faulted(inj)
    assert inj.fired and code == ExitCode.COMMIT_STATE_UNKNOWN, err
    # The commit landed: the files the job wrote are the table's now and must all be there.
    assert observe(ws, [EVENTS]) == after
    runs += 1
    # With --partial-progress a failed batch's files are removed and the next batch goes on; an
    # unknown outcome is not a failure to clean up after: it stops the run and keeps the files.
    inj = Injector(UNKNOWN, 1)
    code, err = faulted(inj, [*ARGV, "--partial-progress"])
    assert inj.fired and code == ExitCode.COMMIT_STATE_UNKNOWN, err
    assert observe(ws, [EVENTS]) == after
    runs += 1
    print(f"compact: {len(steps)} steps, {counted.moves} pointer move, {runs} faulted runs")
