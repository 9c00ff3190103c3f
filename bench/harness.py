"""The benchmarks' shared harness: timing a whole command (wall clock and the CPU of its process
tree, reaping a JVM that outlives its parent), the Iceberg Java side as a ``java_call.py``
script, copying and listing table folders, tool versions, and updating bench/RESULTS.md between
a benchmark's markers. Used by bench_expire.py, bench_compact.py, bench_read.py and
bench_validate.py.
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import textwrap
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
ORACLE_DIR = os.environ.get("ICEBERG_ORACLE_DIR", "/work/shared/oracle")
if ROOT not in sys.path:  # tests.helpers: the shortcuts that set tables up (create_table, append_files)
    sys.path.insert(0, ROOT)

# The Iceberg Java side, run as `python java_call.py WAREHOUSE SQL [SQL ...]`: a session of Iceberg
# Java in local Spark (catalog `hc` over WAREHOUSE), each statement's rows printed as JSON, then
# the JVM stopped and waited for (so that its CPU time is counted with this process's).
JAVA_CALL = textwrap.dedent('''\
    import json, os, sys, time
    sys.path.insert(0, os.environ.get("ICEBERG_ORACLE_DIR", "/work/shared/oracle"))
    from iceberg_java import session

    t0 = time.perf_counter()
    spark = session(sys.argv[1], extra_conf={"spark.sql.session.timeZone": "UTC",
                                              "spark.driver.bindAddress": "127.0.0.1",
                                              "spark.driver.host": "127.0.0.1"})
    t1 = time.perf_counter()
    out = {"session_seconds": round(t1 - t0, 3), "statements": []}
    for sql in sys.argv[2:]:
        s0 = time.perf_counter()
        rows = [r.asDict() for r in spark.sql(sql).collect()]
        out["statements"].append({"sql": sql, "rows": rows, "seconds": round(time.perf_counter() - s0, 3)})
    from pyspark import SparkContext
    gateway = SparkContext._gateway
    spark.stop()
    proc = getattr(gateway, "proc", None)
    if proc is not None:  # the JVM exits when its stdin closes; wait for it, so its CPU is ours
        try:
            gateway.shutdown()
        except Exception:
            pass
        proc.stdin.close()
        proc.wait()
    out["total_seconds"] = round(time.perf_counter() - t0, 3)
    print(json.dumps(out, default=str))
    ''')


# ---------------------------------------------------------------------------------------------
# Timing a whole command: wall clock and the CPU of its process tree

_SUBREAPER = False


def become_subreaper() -> bool:
    """prctl(PR_SET_CHILD_SUBREAPER): orphaned descendants (a JVM outliving pyspark's Python) are
    re-parented to us, so we reap them and their CPU time lands in RUSAGE_CHILDREN."""
    global _SUBREAPER
    if not _SUBREAPER and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            _SUBREAPER = libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
        except OSError:
            _SUBREAPER = False
    return _SUBREAPER


def _reap_all(timeout: float = 120.0) -> int:
    """Wait for every remaining child (orphans re-parented to us); how many were reaped."""
    n = 0
    deadline = time.monotonic() + timeout
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return n
        if pid:
            n += 1
            continue
        if time.monotonic() > deadline:
            return n
        time.sleep(0.05)


def wait_for_quiet(max_load: float, max_wait: float) -> tuple[float, float]:
    """Wait (up to max_wait s) for the 1-minute load average to drop below max_load."""
    t0 = time.monotonic()
    while os.getloadavg()[0] >= max_load and time.monotonic() - t0 < max_wait:
        time.sleep(5)
    return os.getloadavg()[0], time.monotonic() - t0


class TreeSampler:
    """CPU of a process tree from /proc, sampled every ``interval`` s: each process's own
    utime + stime when last seen. It catches what RUSAGE_CHILDREN cannot: PySpark's worker
    daemon sets SIGCHLD to SIG_IGN, so its workers are reaped by the kernel and their CPU time
    is added to no parent. It misses up to ``interval`` s of each process's last moments (and
    processes shorter than that)."""

    def __init__(self, root: int, interval: float = 0.2):
        import threading

        self.tree = {root}
        self.seen: dict[int, tuple[int, int]] = {}
        self.peak_rss = 0  # bytes: the largest sum of the tree's resident sets seen in one scan
        self.page = os.sysconf("SC_PAGE_SIZE")
        self.interval = interval
        self.hz = os.sysconf("SC_CLK_TCK")
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _scan(self) -> None:
        procs = {}
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open(f"/proc/{d}/stat", "rb") as fh:
                        s = fh.read()
                except OSError:
                    continue
                f = s[s.rindex(b")") + 2:].split()
                procs[int(d)] = (int(f[1]), int(f[11]), int(f[12]), int(f[21]))
        grew = True
        while grew:
            grew = False
            for pid, (ppid, *_) in procs.items():
                if pid not in self.tree and ppid in self.tree:
                    self.tree.add(pid)
                    grew = True
        rss = 0
        for pid in self.tree:
            if pid in procs:
                self.seen[pid] = procs[pid][1:3]
                rss += procs[pid][3] * self.page
        self.peak_rss = max(self.peak_rss, rss)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._scan()
            except Exception:
                pass
            self._stop.wait(self.interval)

    def stop(self) -> tuple[float, float, int]:
        self._stop.set()
        self._thread.join()
        user = sum(u for u, _ in self.seen.values()) / self.hz
        system = sum(s for _, s in self.seen.values()) / self.hz
        return user, system, len(self.seen)


def run_timed(argv: list[str], *, stdout_path: str, stderr_path: str, env: dict[str, str] | None = None,
              cwd: str | None = None) -> dict:
    """Run a whole command; wall seconds, CPU (user, system) of its process tree, load average.

    CPU is the larger of two measures: RUSAGE_CHILDREN (exact for every process reaped by a
    waiting parent; this script is a child subreaper, so orphans count too) and /proc sampling of
    the tree (which also sees processes whose parent ignores SIGCHLD, as PySpark's daemon does)."""
    import resource

    become_subreaper()
    _reap_all(0)
    load_before = os.getloadavg()
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    with open(stdout_path, "wb") as out, open(stderr_path, "wb") as err:
        p = subprocess.Popen(argv, stdout=out, stderr=err, env=env, cwd=cwd, stdin=subprocess.DEVNULL)
        sampler = TreeSampler(p.pid)
        rc = p.wait()
    wall = time.perf_counter() - t0
    stragglers = _reap_all()
    wall_all = time.perf_counter() - t0
    s_user, s_sys, n_procs = sampler.stop()
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    user, system = r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime
    source = "rusage"
    if s_user + s_sys > user + system:
        user, system, source = s_user, s_sys, "sampled"
    return {"argv": argv, "rc": rc, "wall": round(wall, 3), "wall_with_stragglers": round(wall_all, 3),
            "user": round(user, 3), "sys": round(system, 3), "cpu": round(user + system, 3), "cpu_source": source,
            "cpu_rusage": round(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime, 3),
            "cpu_sampled": round(s_user + s_sys, 3), "processes_seen": n_procs,
            "max_rss_mb": round(r1.ru_maxrss / 1024, 1), "stragglers_reaped": stragglers,
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()]}


def icectl_cmd() -> list[str]:
    """The console script of this interpreter's environment (not a pyenv shim, ~50 ms more)."""
    p = os.path.join(os.path.dirname(sys.executable), "icectl")
    return [p] if os.path.exists(p) else [sys.executable, "-m", "icectl"]


def write_java_call(folder: str) -> str:
    path = os.path.join(folder, "java_call.py")
    with open(path, "w") as fh:
        fh.write(JAVA_CALL)
    return path


def java_env(driver_memory: str) -> dict[str, str]:
    env = dict(os.environ)
    env["ICEBERG_ORACLE_DIR"] = ORACLE_DIR
    env.setdefault("ICEBERG_ORACLE_MASTER", "local[2]")
    env["ICEBERG_ORACLE_DRIVER_MEMORY"] = driver_memory
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    return env


def walk(root: str) -> dict[str, int]:
    """Relative path -> size of every file under root."""
    out: dict[str, int] = {}
    stack = [root]
    n = len(root.rstrip("/")) + 1
    while stack:
        d = stack.pop()
        with os.scandir(d) as it:
            for e in it:
                if e.is_dir(follow_symlinks=False):
                    stack.append(e.path)
                else:
                    out[e.path[n:]] = e.stat(follow_symlinks=False).st_size
    return out


def restore(pristine: str, work: str) -> float:
    t0 = time.perf_counter()
    if os.path.exists(work):
        shutil.rmtree(work)
    subprocess.run(["cp", "-a", pristine, work], check=True)
    return time.perf_counter() - t0


def versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for name in ("icectl", "fastavro", "pyarrow", "pyspark", "fsspec"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
        out["java"] = java.strip()
    except (OSError, IndexError):
        pass
    return out


def update_results(path: str, begin: str, end: str, block: str, title: str) -> None:
    """Replace the text between the markers (or append a section with them); keep the rest."""
    text = open(path).read() if os.path.exists(path) else ""
    body = f"{begin}\n{block.rstrip()}\n{end}"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = head + body + tail
    else:
        text = (text.rstrip() + "\n\n" if text.strip() else "") + f"{title}\n\n{body}\n"
    with open(path, "w") as fh:
        fh.write(text)


def fmt_load(x: list[float]) -> str:
    return "/".join(f"{v:.1f}" for v in x)
