"""The crash suite's fault points (tests/crash/crash_faults.py) on the Hive Metastore's and Glue's
commits: the demo table in a real Hive Metastore (Hive 2.3.9's own, ``../shared/oracle``) and in
moto's Glue, its files on local disk; every mutating command below runs once to count its steps
(storage writes and deletes, and every metastore call: ``lock``, ``get_table``,
``alter_table_with_environment_context``, ``unlock`` ...; ``GetTable``, ``UpdateTable`` ...),
then fails at each of them:

- ``crash``: the process dies before the call (nothing after it happens, not even ``unlock``);
- ``error``: the connection breaks before the call was sent; the command handles it (a retry,
  or a documented exit code);
- at each metastore call, ``lost``: the call took effect and its answer was lost. The Hive
  catalog recovers from each (a read made again, its lock found by its agent info, a commit
  found by reading the table again: exit 0, the state after); the Glue catalog from a lost
  ``UpdateTable`` answer (exit 0, the state after), other lost answers being botocore's to
  retry (here: a documented exit code);
- at the pointer move (``alter_table*``, ``UpdateTable``), ``unknown``: its answer lost and the
  metastore unreachable from then on (exit 12, the new metadata file kept: the table is the one
  after, whole).

After each run the table loads, validates clean, every file a retained snapshot reaches exists,
its rows are those of before or after, and no Hive lock is left that the next writer cannot take
(a dead writer's lock is cleared after ``iceberg.hive.lock-heartbeat-interval-ms``); a command that
lived through its fault with the metastore answering (``error``, ``lost``) released its lock.
"""
from __future__ import annotations

import os
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from crash_catalogs import GlueWorkspace, HiveWorkspace, RemoteWorkspace  # noqa: E402
from crash_faults import COUNT, CRASH, ERROR, LOST, UNKNOWN, Crash, Injector, injecting  # noqa: E402
from crash_state import observe  # noqa: E402
from test_fault_points import fault_points  # noqa: E402

from icectl.errors import ExitCode  # noqa: E402

pytestmark = pytest.mark.slow

S8 = "9115177490179072159"  # tag before-overwrite, an ancestor of main
DOCUMENTED = {int(c) for c in ExitCode} - {int(ExitCode.ERROR)}
MOVES = ("thrift alter_table", "thrift alter_table_with_environment_context", "glue UpdateTable")

# name -> argv, with {t} the table
COMMANDS = {
    "expire": ["expire", "{t}", "-y"],
    "tag-create": ["tag", "create", "{t}", "t1", "-y"],
    "rollback": ["rollback", "{t}", "--to-snapshot", S8, "-y"],
    "properties-set": ["properties", "{t}", "set", "write.metadata.delete-after-commit.enabled=true",
                       "write.metadata.previous-versions-max=2", "-y"],
}

_AWS_ENV = {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing", "AWS_SESSION_TOKEN": "testing",
            "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1", "AWS_EC2_METADATA_DISABLED": "true",
            "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}


@pytest.fixture(scope="module")
def quick_status_check():
    """The Hive catalog waits a second before each re-read of a commit's status (Java's
    min-wait); here a twentieth."""
    from icectl.catalog import hive

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(hive, "STATUS_CHECK_WAIT_S", 0.05)
        yield


@pytest.fixture(scope="module")
def metastore(tmp_path_factory, quick_status_check):
    pytest.importorskip("hive_metastore")
    d = pathlib.Path(os.environ.get("ICECTL_ORACLE_DIR") or pathlib.Path(__file__).resolve().parents[3]
                     / "shared" / "oracle")
    if not (d / "hms_server.py").exists():
        pytest.skip(f"no Hive Metastore oracle at {d}")
    sys.path.insert(0, str(d))
    import hms_server

    uri, stop = hms_server.start(str(tmp_path_factory.mktemp("hms")))
    try:
        yield uri
    finally:
        stop()


@pytest.fixture(scope="module")
def hive_workspace(tmp_path_factory, metastore):
    ws = HiveWorkspace(tmp_path_factory.mktemp("crash-hive") / "ws", 2, namespace="crash", props={"uri": metastore})
    return ws.build()


@pytest.fixture(scope="module")
def hive_locked_workspace(tmp_path_factory, metastore):
    """The table's lock held by a writer that died: the next writer clears it at once (a heartbeat
    interval of 0 ms), after a first check_lock."""
    ws = HiveWorkspace(tmp_path_factory.mktemp("crash-hive-locked") / "ws", 2, namespace="crashlocked",
                       props={"uri": metastore}, dead_lock=True, heartbeat_ms=0)
    return ws.build()


@pytest.fixture(scope="module")
def glue_workspace(tmp_path_factory):
    pytest.importorskip("moto.server")
    from moto.server import ThreadedMotoServer

    with pytest.MonkeyPatch.context() as mp:
        for k, v in _AWS_ENV.items():
            mp.setenv(k, v)
        mp.delenv("AWS_PROFILE", raising=False)
        mp.setenv("NO_PROXY", "127.0.0.1,localhost")
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        try:
            ws = GlueWorkspace(tmp_path_factory.mktemp("crash-glue") / "ws", 2, namespace="crash",
                               props={"glue.endpoint": f"http://{host}:{port}", "glue.region": "us-east-1",
                                      "glue.access-key-id": "testing", "glue.secret-access-key": "testing",
                                      "glue.max-retries": "0"})
            yield ws.build()
        finally:
            server.stop()


@pytest.mark.hive
@pytest.mark.spark  # the metastore is a JVM
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_hive_commit_fault_points(name, hive_workspace):
    fault_every_call(hive_workspace, name)


@pytest.mark.hive
@pytest.mark.spark
@pytest.mark.parametrize("name", ["tag-create", "properties-set"])
def test_hive_commit_fault_points_behind_a_dead_writers_lock(name, hive_locked_workspace):
    steps = fault_every_call(hive_locked_workspace, name)
    assert {"thrift check_lock", "thrift show_locks"} <= {_kind(s) for s in steps}, steps


@pytest.mark.s3
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_glue_commit_fault_points(name, glue_workspace):
    fault_every_call(glue_workspace, name)


def _kind(step: str) -> str:
    """``write``, ``thrift lock``, ``glue UpdateTable`` ...: what a step does."""
    words = step.split()
    return " ".join(words[:2] if words[0] in ("sql", "thrift", "glue") else words[:1])


def _run(ws: RemoteWorkspace, argv: list[str], injector: Injector) -> tuple[int | None, str]:
    ws.reset()
    with injecting(injector):
        try:
            code, _, err = ws.run(*argv)
        except Crash:
            return None, "crashed"
    return code, err


def _check(ws: RemoteWorkspace, before, after, what: str, *, expect=None) -> None:
    """The state is before or after (``expect`` when given), and a lock left behind is cleared
    by the next writer."""
    state = observe(ws, [ws.events])
    assert state in ((before, after) if expect is None else (expect,)), \
        f"{what}: the table is {'neither before nor after' if expect is None else 'not as expected'}"
    if ws.locks_left():
        ws.check_lock_expires()
        assert not ws.locks_left(), f"{what}: the dead writer's lock is still there"


def fault_every_call(ws: RemoteWorkspace, name: str) -> list[str]:
    argv = [a.format(t=ws.events) for a in COMMANDS[name]]
    ws.reset()
    before = observe(ws, [ws.events])
    counted = Injector(COUNT)
    code, err = _run(ws, argv, counted)
    assert code == 0, err
    after = observe(ws, [ws.events])
    assert after != before or name == "expire", f"{name} changed nothing that the state shows"
    assert not ws.locks_left(), "a successful commit left its lock"
    steps = counted.steps
    remote = [s for s in steps if s.startswith(("thrift ", "glue "))]
    assert remote and counted.moves == 1, (counted.moves, steps)
    runs = leaked = 0
    for mode in (CRASH, ERROR):
        for k in fault_points(steps):
            inj = Injector(mode, k)
            code, err = _run(ws, argv, inj)
            assert inj.fired, f"{mode} at step {k} of {name} never came (steps: {steps})"
            assert _kind(inj.fired) == _kind(steps[k - 1]), (inj.fired, steps[k - 1])
            if mode == ERROR:
                assert code in DOCUMENTED, f"{name}, error at step {k} ({inj.fired}): exit {code}: {err}"
                assert "Traceback" not in err
                # the command lived and the metastore answers: it released its lock
                assert not ws.locks_left(), f"{name}, error at step {k} ({inj.fired}): the lock was not released"
            leaked += bool(ws.locks_left())
            runs += 1
            if not ws.untouched():
                _check(ws, before, after, f"{name}, {mode} at step {k} ({inj.fired})")
            elif ws.locks_left():
                _check(ws, before, after, f"{name}, {mode} at step {k} ({inj.fired})", expect=before)
    for k, step in enumerate(steps, 1):
        if step not in remote:
            continue
        inj = Injector(LOST, k)
        code, err = _run(ws, argv, inj)
        assert inj.fired, f"lost answer at step {k} of {name} never came (steps: {steps})"
        move = _kind(step) in MOVES
        what = f"{name}, the answer of step {k} ({inj.fired}) lost: exit {code}: {err}"
        if move or ws.recovers_lost_answers:
            assert code == 0, what
        assert code in DOCUMENTED and "Traceback" not in err, what
        assert not ws.locks_left(), f"{what}: the lock was not released"
        runs += 1
        _check(ws, before, after, what, expect=after if code == 0 else None)
    inj = Injector(UNKNOWN, 1)
    code, err = _run(ws, argv, inj)
    assert inj.fired, f"{name}: no pointer move"
    assert code == ExitCode.COMMIT_STATE_UNKNOWN, f"{name}, unknown outcome of {inj.fired}: exit {code}: {err}"
    leaked += bool(ws.locks_left())
    runs += 1
    # the new metadata file kept: the table is the one after, whole
    _check(ws, before, after, f"{name}, unknown outcome of {inj.fired}", expect=after)
    print(f"{ws.props.get('uri') and 'hive' or 'glue'} {name}: {len(steps)} steps ({len(remote)} catalog calls: "
          f"{' '.join(s.split()[1] for s in remote)}), {runs} faulted runs, {leaked} left the lock behind")
    return steps
