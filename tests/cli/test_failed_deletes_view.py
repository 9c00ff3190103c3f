"""Failed deletes in text output: the first few by name and a count, all of them with --verbose."""
from __future__ import annotations

import io

from icectl.cli.context import Env
from icectl.cli.views.common import FAILED_LISTED, warn_failed_deletes
from icectl.cli.views.expire import FailedDelete


def _warnings(n: int, *, verbose: bool) -> list[str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    env.verbose = verbose
    warn_failed_deletes(env, [FailedDelete(f"s3://b/t/data/f{i}.parquet", "AccessDenied: no") for i in range(n)])
    assert env.stdout.getvalue() == ""  # diagnostics go to stderr
    return env.stderr.getvalue().splitlines()


def test_a_few_failures_are_each_named():
    assert _warnings(2, verbose=False) == [
        "icectl: warning: could not delete s3://b/t/data/f0.parquet: AccessDenied: no",
        "icectl: warning: could not delete s3://b/t/data/f1.parquet: AccessDenied: no"]
    assert _warnings(0, verbose=False) == []


def test_many_failures_are_counted_and_listed_with_verbose():
    lines = _warnings(2500, verbose=False)
    assert len(lines) == FAILED_LISTED + 1
    assert lines[-1] == (f"icectl: warning: could not delete {2500 - FAILED_LISTED} more files (2500 in all; "
                         f"--verbose lists them, -o json too)")
    lines = _warnings(2500, verbose=True)
    assert len(lines) == 2500 and lines[-1].endswith("f2499.parquet: AccessDenied: no")
