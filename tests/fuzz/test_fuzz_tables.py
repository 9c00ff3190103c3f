"""Seeded mutants of real tables' metadata JSON, manifest lists and manifests: describe, snapshots,
files, validate and ``expire --dry-run`` on each keep the rules of :mod:`fuzz_harness` (a
documented exit code and never 1, one line on stderr, no traceback or panic, no write, no hang;
validate reports with 0 or 8 and names where).

The full run is marked ``slow`` (CI runs it); the fast suite runs a sample of
:data:`FAST_SAMPLE` mutants of each table, so the inner loop still exercises the fuzzer.
``ICECTL_FUZZ_MUTANTS=5000 python -m pytest tests/fuzz`` runs more (default 300, 50 per table);
``ICECTL_FUZZ_SEED`` another sequence; ``ICECTL_FUZZ_ONLY=3,17`` only those mutant numbers.
"""
from __future__ import annotations

import os

import pytest

import fuzz_harness

BASES = ("v1", "v2", "v3", "v4", "demo-v2", "demo-v3")
FAST_SAMPLE = 4  # mutants of each table in the fast suite: 24 in all (0 and 20 also in a subprocess)


@pytest.mark.slow
@pytest.mark.parametrize("base", BASES)
def test_mutants_keep_the_rules(fuzz_bases, base):
    total = fuzz_harness.env_int("ICECTL_FUZZ_MUTANTS", fuzz_harness.DEFAULT_MUTANTS)
    only = {int(x) for x in os.environ.get("ICECTL_FUZZ_ONLY", "").split(",") if x.strip()}
    per_base = max(1, total // len(BASES))
    _check(fuzz_bases, base, sorted(only) if only else range(per_base))


@pytest.mark.parametrize("base", BASES)
def test_a_sample_of_mutants_keeps_the_rules(fuzz_bases, base):
    """The fast suite's share of the fuzzer: consecutive mutant numbers of the seed's sequence, a
    different slice for each table (mutants 0 to 23 in all; the full run covers them)."""
    start = BASES.index(base) * FAST_SAMPLE
    _check(fuzz_bases, base, range(start, start + FAST_SAMPLE))


def _check(fuzz_bases, base: str, numbers) -> None:
    seed = fuzz_harness.env_int("ICECTL_FUZZ_SEED", 14)
    every = fuzz_harness.env_int("ICECTL_FUZZ_SUBPROCESS", 20)
    report_path = os.environ.get("ICECTL_FUZZ_REPORT")
    report = open(report_path, "a") if report_path else None
    failures, runs, kinds = [], 0, set()
    try:
        for n in numbers:
            m = fuzz_harness.make_mutant(n, fuzz_bases[base], seed)
            kinds.add(m.mutation)
            sub = fuzz_harness.COMMANDS[(n // every) % len(fuzz_harness.COMMANDS)] if every and n % every == 0 else None
            f, r = fuzz_harness.check_mutant(m, subprocess_command=sub, report=report)
            failures += f
            runs += r
    finally:
        if report:
            report.close()
    print(f"\n{base}: {len(numbers)} mutants ({len(kinds)} kinds of mutation), {runs} runs, {len(failures)} failures")
    assert not failures, f"{len(failures)} of {runs} runs broke a rule (seed {seed}):\n" + \
        "\n".join(f.line() for f in failures[:40])
