"""The Python environment the executors run: the job's runtime packages in a virtualenv, packed
with venv-pack and shipped with ``--archives``, so the nodes of a cluster need only a Python of
the same version at the same path, and none of icectl's dependencies.

The requirement set is what the executors import at run time (``icectl.spark.rewrite`` and the
modules it reaches), pinned to the versions installed beside icectl, plus the file system of
each storage scheme the job touches, plus what the driver needs when it runs on the cluster
(deploy mode cluster). An archive is built once per requirement set and Python, and cached
under ``$ICECTL_CACHE_DIR`` (default ``$XDG_CACHE_HOME/icectl`` or ``~/.cache/icectl``).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Iterable

from icectl.errors import ExternalCommandError, UsageError, install_hint
from icectl.io import scheme_of

# What the executors import: Parquet and Arrow (pyarrow), numpy (positions, row lineage), fsspec
# (FileIO), mmh3 (the bucket transform, when files of older specs are repartitioned), pyroaring
# (deletion vectors).
EXECUTOR_REQUIREMENTS = ("pyarrow", "numpy", "fsspec", "mmh3", "pyroaring", "datasketches")
# The fsspec file system of each storage scheme (hdfs:// goes through pyarrow, already there).
SCHEME_REQUIREMENTS = {"s3": "s3fs", "s3a": "s3fs", "s3n": "s3fs", "gs": "gcsfs", "gcs": "gcsfs",
                       "abfs": "adlfs", "abfss": "adlfs", "az": "adlfs"}
# In deploy mode cluster the driver runs from the archive too: pyspark's mapInArrow (the sort
# path) insists on pandas on the driver.
DRIVER_REQUIREMENTS = ("pandas",)
ARCHIVE_ALIAS = "environment"
EXECUTOR_PYTHON = f"./{ARCHIVE_ALIAS}/bin/python"
_LAYOUT = 1  # bump when the way archives are built changes


@dataclass(frozen=True)
class PackedEnvironment:
    """Where the archive of a requirement set is (or will be) and what goes into it."""

    archive: str
    requirements: tuple[str, ...]
    python: str

    @property
    def exists(self) -> bool:
        return os.path.exists(self.archive)


def cache_dir() -> str:
    if os.environ.get("ICECTL_CACHE_DIR"):
        return os.environ["ICECTL_CACHE_DIR"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "icectl")


def requirements(*, locations: Iterable[str], driver: bool) -> tuple[str, ...]:
    """The pinned requirement set for a job touching ``locations`` (sorted, so it hashes the same)."""
    names = set(EXECUTOR_REQUIREMENTS)
    names.update(SCHEME_REQUIREMENTS[s] for s in (scheme_of(p) for p in locations if p) if s in SCHEME_REQUIREMENTS)
    if driver:
        names.update(DRIVER_REQUIREMENTS)
    return tuple(sorted(_pinned(n) for n in names))


def _pinned(name: str) -> str:
    """``name==version`` of the distribution installed here: the executors run what the driver
    was tested with. A package not installed here is left unpinned."""
    try:
        return f"{name}=={version(name)}"
    except PackageNotFoundError:
        return name


def python_version(python: str | None) -> str:
    """``major.minor.micro`` of ``python`` (None: this interpreter)."""
    if python is None:
        return ".".join(map(str, sys.version_info[:3]))
    try:
        out = subprocess.run([python, "-c", "import sys; print('.'.join(map(str, sys.version_info[:3])))"],
                             capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise UsageError(f"pack_python {python!r} cannot be run: {e}") from None
    if out.returncode != 0:
        raise UsageError(f"pack_python {python!r} cannot be run: exit code {out.returncode}")
    return out.stdout.strip()


def packed_environment(reqs: tuple[str, ...], *, python: str | None = None,
                       cache: str | None = None) -> PackedEnvironment:
    """Where the archive for ``reqs`` built from ``python`` lives (nothing is built here)."""
    exe = python or sys.executable
    # The archive's bin/python links to the base interpreter: the nodes need it at that path.
    base = os.path.abspath(python) if python else os.path.realpath(getattr(sys, "_base_executable", sys.executable))
    key = json.dumps({"layout": _LAYOUT, "python": base,
                      "version": python_version(python), "platform": sys.platform, "requirements": list(reqs)},
                     sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return PackedEnvironment(os.path.join(cache or cache_dir(), f"executor-env-{digest}.tar.gz"), reqs, exe)


def build(env: PackedEnvironment, *, log_file: str | None = None) -> str:
    """Build the archive unless it is cached: a virtualenv without pip from ``env.python``, the
    requirements installed into it by this Python's pip, packed by venv-pack. One build at a
    time per cache folder (a lock); the archive appears whole or not at all (rename)."""
    if env.exists:
        return env.archive
    try:
        import venv_pack
    except ImportError:
        raise ExternalCommandError("pack_environment needs venv-pack on the machine that submits the job",
                                   hint=install_hint("cluster")) from None
    folder = os.path.dirname(env.archive)
    os.makedirs(folder, exist_ok=True)
    with _lock(os.path.join(folder, ".lock")):
        if env.exists:  # another run built it while this one waited
            return env.archive
        work = tempfile.mkdtemp(prefix="executor-env-", dir=folder)
        try:
            prefix = os.path.join(work, "venv")
            _run([env.python, "-m", "venv", "--without-pip", prefix], log_file, what="create the virtualenv")
            _run([sys.executable, "-m", "pip", "--python", os.path.join(prefix, "bin", "python"), "install",
                  "--no-input", "--disable-pip-version-check", "--only-binary=:all:", *env.requirements],
                 log_file, what="install the executors' packages")
            out = os.path.join(work, "environment.tar.gz")
            try:
                venv_pack.pack(prefix=prefix, output=out, compress_level=1, force=True)
            except Exception as e:  # venv-pack raises its own VenvPackException and OSError
                raise ExternalCommandError(f"venv-pack could not pack the executors' environment: {e}") from None
            os.chmod(out, 0o644)
            os.replace(out, env.archive)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return env.archive


def _run(argv: list[str], log_file: str | None, *, what: str) -> None:
    log = open(log_file, "ab") if log_file else subprocess.DEVNULL
    try:
        proc = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT if log_file else subprocess.PIPE,
                              stdin=subprocess.DEVNULL, timeout=1800)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise ExternalCommandError(f"cannot {what}: {e}") from None
    finally:
        if log_file:
            log.close()
    if proc.returncode != 0:
        where = f" (log: {log_file})" if log_file else ""
        detail = (proc.stderr or b"").decode(errors="replace").strip().splitlines()[-1:] if proc.stderr else []
        raise ExternalCommandError(f"cannot {what}: {' '.join(argv[:3])}... exited with {proc.returncode}"
                                   f"{': ' + detail[0] if detail else ''}{where}")


class _lock:
    """An exclusive lock on a file (flock), so two runs do not build the same archive at once."""

    def __init__(self, path: str):
        self.path = path
        self.fd = -1

    def __enter__(self) -> "_lock":
        self.fd = os.open(self.path, os.O_CREAT | os.O_RDWR, 0o644)
        try:
            import fcntl

            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except ImportError:  # pragma: no cover - not POSIX: no lock, the rename still keeps archives whole
            pass
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)
