"""Start-up of ``icectl --help`` and ``icectl describe demo.events``: a git ref (``--before``) against
the working tree, as ratios (issue 20: the lazy command group must not make either slower; the
ratio to before must stay <= 1.05).

    python bench/bench_startup.py --before 6acf133 [--runs 7] [--write]

The ``--before`` ref is checked out with ``git worktree add`` into a temporary folder and run with
``PYTHONPATH`` pointing at it; the working tree is run the same way. Both read one demo table
(built once by the working tree, ``icectl demo``, in a temporary file-system warehouse). Each
command runs once to warm the file cache, then ``--runs`` times per checkout, the two checkouts
interleaved so that a change in the machine's load touches both alike. CPU is the child's user +
system time (``resource.getrusage(RUSAGE_CHILDREN)`` around ``subprocess.run``), steadier than
wall clock on a shared machine; both are medians. ``--write`` records the table in
bench/RESULTS.md between its markers.
"""
from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone

from harness import ROOT, fmt_load, update_results

BEGIN, END = "<!-- startup:begin -->", "<!-- startup:end -->"
TITLE = "# Start-up: `icectl --help` and `icectl describe` (lazy command group, issue 20)"
LIMIT = 1.05


def run_once(checkout: str, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of ``python -m icectl ARGS`` with ``checkout`` first on the path."""
    child_env = {**env, "PYTHONPATH": checkout}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "icectl", *args], env=child_env, cwd=env["BENCH_CWD"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"icectl {' '.join(args)} failed in {checkout}: {proc.stderr.strip()}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def which_icectl(checkout: str, env: dict[str, str]) -> str:
    """The icectl package a child with ``checkout`` on its path imports (it must be the checkout's)."""
    out = subprocess.run([sys.executable, "-c", "import icectl, os; print(os.path.dirname(icectl.__file__))"],
                         env={**env, "PYTHONPATH": checkout}, cwd=env["BENCH_CWD"], capture_output=True, text=True,
                         check=True).stdout.strip()
    if not os.path.realpath(out).startswith(os.path.realpath(checkout)):
        raise SystemExit(f"a child with PYTHONPATH={checkout} imports icectl from {out}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="6acf133", help="git ref to compare with (default 6acf133)")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--write", action="store_true", help="record the result in bench/RESULTS.md")
    a = ap.parse_args(argv)

    tmp = tempfile.mkdtemp(prefix="icectl-startup-")
    before_tree = os.path.join(tmp, "before")
    rev = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", a.before], capture_output=True, text=True,
                         check=True).stdout.strip()
    head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--", "icectl"], capture_output=True,
                                text=True, check=True).stdout.strip())
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", before_tree, a.before], check=True,
                   capture_output=True)
    try:
        warehouse = os.path.join(tmp, "warehouse")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ICECTL_", "PYTHONPATH"))}
        env["BENCH_CWD"] = tmp  # no ./warehouse or config of the caller's folder
        checkouts = {"before": before_tree, "now": ROOT}
        for c in checkouts.values():
            which_icectl(c, env)
        subprocess.run([sys.executable, "-m", "icectl", "--warehouse", warehouse, "demo"], env={**env, "PYTHONPATH": ROOT},
                       cwd=tmp, check=True, capture_output=True)
        commands = {"icectl --help": ["--help"],
                    "icectl describe demo.events": ["--warehouse", warehouse, "describe", "demo.events"]}
        load0 = os.getloadavg()
        results: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for label, args in commands.items():
            for c in checkouts.values():
                run_once(c, args, env)  # warm-up
            for _ in range(a.runs):
                for name, c in checkouts.items():
                    results.setdefault((label, name), []).append(run_once(c, args, env))
        load1 = os.getloadavg()
    finally:
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", before_tree], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)

    def med(label: str, name: str, i: int) -> float:
        return statistics.median(r[i] for r in results[(label, name)])

    rows = []
    ok = True
    for label in commands:
        cpu_b, cpu_n = med(label, "before", 0), med(label, "now", 0)
        wall_b, wall_n = med(label, "before", 1), med(label, "now", 1)
        ratio = cpu_n / cpu_b
        ok &= ratio <= LIMIT
        rows.append(f"| `{label}` | {cpu_b:.3f} | {cpu_n:.3f} | {ratio:.2f} | {wall_b:.3f} | {wall_n:.3f} | "
                    f"{wall_n / wall_b:.2f} | {'yes' if ratio <= LIMIT else 'no'} |")
    now = f"{head}{' + uncommitted changes' if dirty else ''}"
    block = "\n".join([
        f"## Run of {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
        "",
        f"- before: `{rev}`; now: `{now}`; {a.runs} runs each (medians), after one warm-up, the two interleaved",
        f"- machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}; load average "
        f"{fmt_load(list(load0))} before, {fmt_load(list(load1))} after (other processes share the cores)",
        "- CPU = the child's user + system time (getrusage RUSAGE_CHILDREN around subprocess.run); target: CPU "
        f"ratio now / before <= {LIMIT}",
        "",
        "| command | before CPU (s) | now CPU (s) | CPU ratio | before wall (s) | now wall (s) | wall ratio | met |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        *rows,
    ])
    print(block)
    if a.write:
        update_results(os.path.join(ROOT, "bench", "RESULTS.md"), BEGIN, END, block, TITLE)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
