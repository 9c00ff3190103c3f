"""Durations: a unit is required."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from icectl.errors import ExitCode, UsageError
from icectl.expr.duration import describe_duration, duration_text, parse_duration_ms

HOUR = 3_600_000
DAY = 24 * HOUR


def test_parse_duration():  # moved from tests/ops/test_refs.py with the parser
    assert parse_duration_ms("7d", what="--max-ref-age") == 7 * DAY
    assert parse_duration_ms("36h", what="--max-ref-age") == 36 * HOUR
    assert parse_duration_ms("500ms", what="--max-ref-age") == 500
    assert parse_duration_ms("2w", what="--max-ref-age") == 14 * DAY
    # A bare number was milliseconds here (and a usage error in the maintenance policy): now an
    # error everywhere, as `--max-snapshot-age 3` committed max-snapshot-age-ms: 3 (issue 20).
    with pytest.raises(UsageError):
        parse_duration_ms("1234", what="--max-ref-age")
    with pytest.raises(UsageError):
        parse_duration_ms("7 days", what="--max-ref-age")


@pytest.mark.parametrize("text, ms", [("90m", 90 * 60_000), ("30s", 30_000), ("0s", 0), (" 3 d ", 3 * DAY),
                                      ("1ms", 1), ("100000w", 100000 * 7 * DAY)])
def test_units(text, ms):
    assert parse_duration_ms(text, what="x") == ms


def test_bare_number_is_a_usage_error_naming_the_units():
    with pytest.raises(UsageError) as e:
        parse_duration_ms("3", what="--max-snapshot-age")
    assert e.value.exit_code == ExitCode.USAGE == 2
    assert e.value.message == ("--max-snapshot-age '3' has no unit: write e.g. 3d or 3h (a duration's unit is one of "
                               "ms, s, m, h, d or w)")
    assert "\n" not in e.value.message


@pytest.mark.parametrize("bad", ["", "d", "7D", "1.5h", "-3d", "7 days", "3y", "7d2h"])
def test_refused(bad):
    with pytest.raises(UsageError, match=r"ms, s, m, h, d or w"):
        parse_duration_ms(bad, what="--budget")


def test_printed():
    assert duration_text(7 * DAY) == "7d"
    assert duration_text(36 * HOUR) == "36h"
    assert duration_text(1500) == "1500ms"
    assert duration_text(0) == "0ms"
    assert describe_duration(7 * DAY) == "7d (604800000 ms)"


@given(st.integers(0, 10 ** 15))
def test_round_trip(ms):
    assert parse_duration_ms(duration_text(ms), what="x") == ms
