"""Fixtures of the fuzzer (tests/fuzz): the base tables, built once a session.

  fuzz_bases  (session) list of fuzz_harness.Base: real tables of format versions 1 to 4 and the
              v2 and v3 demo tables, each in its own SQLite catalog under a temporary folder,
              with HOME pointed there and no icectl configuration in the environment.
"""
from __future__ import annotations

import pathlib
import sys

import pytest

TESTS = pathlib.Path(__file__).resolve().parents[1]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))  # validate_corpus, the tables' builder


@pytest.fixture(scope="session")
def fuzz_bases(tmp_path_factory):
    import fuzz_harness

    root = tmp_path_factory.mktemp("fuzz")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(root))
        for name in ("ICECTL_CONFIG", "ICECTL_CATALOG", "AWS_PROFILE", "AWS_CONFIG_FILE"):
            mp.delenv(name, raising=False)
        bases = fuzz_harness.build_bases(str(root))
        yield {b.name: b for b in bases}
