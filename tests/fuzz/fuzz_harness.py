"""The fuzzer's harness: real tables of each format version, mutants of their files, the commands
run on each mutant (in-process, and a sample in a subprocess), and the rules every run must keep.

Rules (issue 14, section 1):
- an exit code from the documented set (:class:`icectl.errors.ExitCode`), never 1 (internal error);
- ``validate`` exits 0 or 8, and each error it reports names where it is (a file, a manifest, a
  snapshot) or the field;
- on an error, one line on stderr (``icectl: error: ...``, maybe one ``hint: ...``; with
  ``--output json`` exactly one line, a JSON object) and nothing on stdout (validate's report
  aside); on success nothing on stderr;
- never a traceback or a Rust panic's text, on any stream or file descriptor;
- never a write: the table's folder and its catalog database are the same after the commands;
- never a hang (a timeout per command).

Environment knobs: ``ICECTL_FUZZ_MUTANTS`` (mutants in all, spread over the base tables; default
:data:`DEFAULT_MUTANTS`), ``ICECTL_FUZZ_SEED`` (default 14), ``ICECTL_FUZZ_ONLY`` (comma-separated
mutant numbers, to replay failures), ``ICECTL_FUZZ_SUBPROCESS`` (one mutant in N also runs one
command in a subprocess; default 20; 0 turns it off), ``ICECTL_FUZZ_REPORT`` (a file to write every
run's outcome to, as JSON lines).
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Iterator

import fuzz_mutate

DEFAULT_MUTANTS = 300
TIMEOUT_S = 30.0  # a command on these tables takes well under a second
SUBPROCESS_TIMEOUT_S = 120.0
COMMANDS = ("describe", "snapshots", "files", "validate", "expire")
PANIC_TEXT = ("Traceback (most recent call last)", "panicked at", "PanicException", "RUST_BACKTRACE",
              "internal error")


def env_int(name: str, default: int) -> int:
    v = os.environ.get(name, "").strip()
    return int(v) if v else default


@dataclass
class Base:
    """A real table built by icectl, in a SQLite catalog named ``corpus`` under ``root``."""

    name: str
    root: str
    table: str
    format_version: int
    expire_args: tuple[str, ...]
    metadata: str = ""
    manifest_lists: list[str] = field(default_factory=list)  # current snapshot's first
    manifests: list[str] = field(default_factory=list)

    @property
    def catalog_args(self) -> list[str]:
        return ["-c", "corpus", "--uri", f"sqlite:///{self.root}/catalog.db", "--warehouse", f"{self.root}/warehouse"]

    def find_targets(self) -> None:
        """The files the commands read: the current metadata file, every manifest list (the
        current snapshot's first), every manifest (in manifest-list order)."""
        from icectl.catalog.sql import SqlCatalog
        from icectl.io import FileIO
        from icectl.table.identifier import parse_identifier
        from icectl.table.loaded import load_table

        cat = SqlCatalog("corpus", f"sqlite:///{self.root}/catalog.db", f"{self.root}/warehouse", FileIO())
        t = load_table(cat, parse_identifier(self.table))
        self.metadata = t.metadata_location
        current = t.metadata.current_snapshot
        snaps = sorted(t.metadata.snapshots, key=lambda s: (s is not current, s.sequence_number, s.timestamp_ms))
        for s in snaps:
            self.manifest_lists.append(t.resolve(s.manifest_list))
            for m in t.manifests(s):
                if m.manifest_path not in self.manifests:
                    self.manifests.append(m.manifest_path)


def build_bases(root: str) -> list[Base]:
    """Tables of format versions 1 to 4 (the validation corpus' table: appends, position and
    equality deletes in v2, a deletion vector from v3) and ``icectl demo``'s v2 and v3 tables (a
    history with deletes, an overwrite, a schema change, a branch, a tag, a staged snapshot)."""
    from validate_corpus import tables

    from icectl.cli.context import Env
    from icectl.cli.main import run

    bases = []
    for v in (1, 2, 3, 4):
        r = os.path.join(root, f"v{v}")
        os.makedirs(r)
        tables.build(r, v)
        bases.append(Base(f"v{v}", r, "db.t", v, ("--older-than", "0s")))
    for v in (2, 3):
        r = os.path.join(root, f"demo-v{v}")
        os.makedirs(r)
        b = Base(f"demo-v{v}", r, "demo.events", v, ())
        env = Env(stdout=io.StringIO(), stderr=io.StringIO())
        code = run(b.catalog_args + ["demo", "demo", "--format-version", str(v)], env)
        assert code == 0, env.stderr.getvalue()
        bases.append(b)
    for b in bases:
        b.find_targets()
    return bases


# -- mutants ------------------------------------------------------------------------------------

@dataclass
class Mutant:
    number: int
    base: Base
    kind: str  # metadata | manifest-list | manifest
    target: str
    mutation: str
    detail: str
    names: tuple[str, ...]
    data: bytes
    json_output: bool
    all_snapshots: bool
    lean_reader: bool = False  # ICECTL_AVRO_READER=lean: the fallback decoder reads every Avro file

    def describe(self) -> str:
        return f"#{self.number} {self.base.name} {self.kind} {self.mutation}: {self.detail}" + \
            (" (lean Avro reader)" if self.lean_reader else "")


def make_mutant(number: int, base: Base, seed: int, *, kind: str | None = None, only: str | None = None) -> Mutant:
    rng = random.Random(f"{seed}:{base.name}:{number}")
    kind = kind or rng.choices(["metadata", "manifest-list", "manifest"], weights=[4, 3, 3])[0]
    if kind == "metadata":
        target = base.metadata
    elif kind == "manifest-list":
        target = base.manifest_lists[0] if rng.random() < 0.6 else rng.choice(base.manifest_lists)
    else:
        target = rng.choice(base.manifests)
    with open(target, "rb") as f:
        original = f.read()
    mutation, data, detail, names = fuzz_mutate.mutate(rng, original, target, kind, only=only)
    return Mutant(number, base, kind, target, mutation, detail, names, data, json_output=rng.random() < 0.5,
                  all_snapshots=rng.random() < 0.5, lean_reader=rng.random() < 0.25)


@contextlib.contextmanager
def applied(m: Mutant) -> Iterator[None]:
    """The mutant written over its target, the original put back afterwards."""
    with open(m.target, "rb") as f:
        original = f.read()
    with open(m.target, "wb") as f:
        f.write(m.data)
    try:
        yield
    finally:
        with open(m.target, "wb") as f:
            f.write(original)


def tree(root: str) -> dict[str, tuple[int, int]]:
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_size, st.st_mtime_ns)
    return out


def argv_for(m: Mutant, command: str) -> list[str]:
    args = list(m.base.catalog_args) + (["-o", "json"] if m.json_output else [])
    if command == "expire":
        return args + ["expire", "--dry-run", *m.base.expire_args, m.base.table]
    if command == "validate" and m.all_snapshots:
        return args + ["validate", "--all-snapshots", m.base.table]
    return args + [command, m.base.table]


# -- running ------------------------------------------------------------------------------------

@dataclass
class Outcome:
    command: str
    code: int | None  # None: it did not finish in time
    stdout: str
    stderr: str
    seconds: float
    how: str = "in-process"


class FuzzTimeout(BaseException):
    """Raised by the alarm in a command that runs too long (a BaseException: icectl's handler of
    unexpected errors must not turn it into an exit code)."""


@contextlib.contextmanager
def _fd_captured(fd: int) -> Iterator[Any]:
    """Whatever is written to the file descriptor itself (a Rust panic message, C library output)."""
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(fd)
        os.dup2(tmp.fileno(), fd)
        try:
            yield tmp
        finally:
            os.dup2(saved, fd)
            os.close(saved)


def run_in_process(argv: list[str], command: str, *, timeout: float = TIMEOUT_S) -> Outcome:
    """``icectl argv`` in this process, its output captured as a terminal-less run writes it:
    UTF-8 with strict errors on stdout (as Python's stdout), what reaches file descriptors 1 and 2
    directly (a Rust panic) counted as stderr."""
    from icectl.cli.context import Env
    from icectl.cli.main import run

    out_b, err_b = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_b, encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(err_b, encoding="utf-8", errors="backslashreplace", write_through=True)
    env = Env(stdout=out, stderr=err)

    def alarm(signum: int, frame: Any) -> None:
        raise FuzzTimeout()

    started = time.monotonic()
    code: int | None
    old_handler = signal.signal(signal.SIGALRM, alarm)
    saved_streams = sys.stdout, sys.stderr
    with _fd_captured(1) as fd1, _fd_captured(2) as fd2:
        sys.stdout, sys.stderr = out, err
        signal.setitimer(signal.ITIMER_REAL, timeout)
        try:
            code = run(argv, env)
        except FuzzTimeout:
            code = None
        except UnicodeEncodeError as e:  # stdout could not take what icectl printed
            code = -1
            err.write(f"[fuzz] output not encodable as UTF-8: {e}\n")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old_handler)
            sys.stdout, sys.stderr = saved_streams
        out.flush()
        err.flush()
        fd1.seek(0)
        fd2.seek(0)
        stray = fd1.read() + fd2.read()
    stderr = err_b.getvalue().decode("utf-8", "backslashreplace") + stray.decode("utf-8", "backslashreplace")
    return Outcome(command, code, out_b.getvalue().decode("utf-8", "replace"), stderr, time.monotonic() - started)


def run_subprocess(argv: list[str], command: str, *, timeout: float = SUBPROCESS_TIMEOUT_S) -> Outcome:
    """``python -m icectl argv`` (the worktree's code: PYTHONPATH is kept), with a 4 GiB address
    space limit so that a runaway allocation fails instead of taking the machine."""
    import resource

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    started = time.monotonic()
    env = dict(os.environ, COLUMNS="200", PYTHONIOENCODING="utf-8:strict")
    try:
        p = subprocess.run([sys.executable, "-m", "icectl", *argv], capture_output=True, timeout=timeout,
                           env=env, preexec_fn=limit, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        return Outcome(command, None, (e.stdout or b"").decode("utf-8", "replace"),
                       (e.stderr or b"").decode("utf-8", "replace"), time.monotonic() - started, "subprocess")
    return Outcome(command, p.returncode, p.stdout.decode("utf-8", "replace"),
                   p.stderr.decode("utf-8", "backslashreplace"), time.monotonic() - started, "subprocess")


# -- the rules ----------------------------------------------------------------------------------

def violations(o: Outcome, *, json_output: bool, names: tuple[str, ...] = ()) -> list[str]:
    """What the run broke of the rules in the module docstring (empty: it kept them all)."""
    from icectl.errors import ExitCode

    if o.code is None:
        return [f"hang: no exit after {o.seconds:.0f} s"]
    bad = []
    documented = {int(c) for c in ExitCode} - {int(ExitCode.ERROR)}
    if o.code == int(ExitCode.ERROR):
        bad.append("exit 1 (internal error)")
    elif o.code not in documented:
        bad.append(f"exit {o.code}, not a documented exit code")
    if o.command == "validate" and o.code not in (0, 8):
        bad.append(f"validate exited {o.code} (must report: 0 or 8)")
    for text in PANIC_TEXT:
        if text in o.stderr or text in o.stdout:
            bad.append(f"{text!r} in the output")
    lines = o.stderr.splitlines()
    if o.code == 0:
        if o.stderr:
            bad.append(f"stderr on success: {o.stderr[:200]!r}")
    elif json_output:
        if len(lines) != 1:
            bad.append(f"{len(lines)} lines on stderr, not one JSON line")
        else:
            try:
                doc = json.loads(lines[0])
                if doc["error"]["exit_code"] != o.code or not doc["error"]["message"]:
                    bad.append("the JSON error's exit_code or message is wrong")
            except (ValueError, KeyError, TypeError):
                bad.append(f"stderr is not a JSON error object: {lines[0][:200]!r}")
    else:
        if not lines or not lines[0].startswith("icectl: error: ") or len(lines[0]) <= len("icectl: error: "):
            bad.append(f"stderr is not one 'icectl: error:' line: {o.stderr[:200]!r}")
        elif len(lines) > 2 or (len(lines) == 2 and not lines[1].startswith("hint: ")):
            bad.append(f"{len(lines)} lines on stderr: {o.stderr[:300]!r}")
    if o.code not in (0, 8) and o.stdout:
        bad.append(f"stdout on an error: {o.stdout[:200]!r}")
    if o.command == "validate" and o.code == 8:
        bad += _unnamed_findings(o.stdout, json_output=json_output, names=names)
    return bad


def _unnamed_findings(stdout: str, *, json_output: bool, names: tuple[str, ...]) -> list[str]:
    """validate's errors must say where: a file, a manifest or a snapshot, or the field by name."""
    if not json_output:
        return [] if stdout.strip() else ["validate exited 8 with no report on stdout"]
    try:
        report = json.loads(stdout)
    except ValueError:
        return [f"validate's JSON report does not parse: {stdout[:200]!r}"]
    errors = [f for f in report.get("findings", []) if f.get("severity") == "error"]
    if not errors:
        return ["validate exited 8 and reported no error"]
    out = []
    for f in errors:
        where = f.get("file") or f.get("manifest") or f.get("snapshot_id") is not None
        if not where and not any(n and n in f.get("message", "") for n in names):
            out.append(f"validate's {f.get('code')} names no file, snapshot or field: {f.get('message', '')[:150]!r}")
    return out


# -- one mutant ---------------------------------------------------------------------------------

@dataclass
class Failure:
    mutant: str
    command: str
    how: str
    code: int | None
    problems: list[str]
    stderr: str

    def line(self) -> str:
        first = self.stderr.strip().splitlines()[-1][:160] if self.stderr.strip() else ""
        return f"{self.mutant} | {self.how} {self.command} -> {self.code}: {'; '.join(self.problems)} | {first}"


@contextlib.contextmanager
def _reader(lean: bool) -> Iterator[None]:
    """icectl's Avro reader choice for the mutant's runs (subprocesses inherit it)."""
    from icectl.formats.avro import READER_ENV

    saved = os.environ.get(READER_ENV)
    if lean:
        os.environ[READER_ENV] = "lean"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(READER_ENV, None)
        else:
            os.environ[READER_ENV] = saved


def check_mutant(m: Mutant, *, subprocess_command: str | None = None,
                 report: Any = None) -> tuple[list[Failure], int]:
    """Every command on the mutant (and one in a subprocess, when asked); the failures and the
    number of runs."""
    failures: list[Failure] = []
    runs = 0
    with applied(m), _reader(m.lean_reader):
        before = tree(m.base.root)
        outcomes = [run_in_process(argv_for(m, c), c) for c in COMMANDS]
        if subprocess_command:
            outcomes.append(run_subprocess(argv_for(m, subprocess_command), subprocess_command))
        after = tree(m.base.root)
    for o in outcomes:
        runs += 1
        problems = violations(o, json_output=m.json_output, names=m.names)
        if problems:
            failures.append(Failure(m.describe(), o.command, o.how, o.code, problems, o.stderr))
        if report is not None:
            report.write(json.dumps({"mutant": m.number, "base": m.base.name, "kind": m.kind, "mutation": m.mutation,
                                     "detail": m.detail, "command": o.command, "how": o.how, "code": o.code,
                                     "seconds": round(o.seconds, 3), "problems": problems,
                                     "stderr": o.stderr[-400:]}) + "\n")
    if before != after:
        changed = sorted(set(before.items()) ^ set(after.items()))
        problem = f"files changed: {[c[0] for c in changed][:5]}"
        failures.append(Failure(m.describe(), "all", "in-process", None, [problem], ""))
        if report is not None:
            report.write(json.dumps({"mutant": m.number, "base": m.base.name, "kind": m.kind, "mutation": m.mutation,
                                     "detail": m.detail, "command": "all", "how": "tree", "code": None,
                                     "seconds": 0, "problems": [problem], "stderr": ""}) + "\n")
    return failures, runs
