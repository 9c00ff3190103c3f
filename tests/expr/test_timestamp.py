"""Timestamps: ISO 8601 (no zone: UTC), epoch milliseconds of 12 digits or more, or an age."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from icectl.errors import ExitCode, UsageError
from icectl.expr.timestamp import Cutoff, parse_cutoff, parse_timestamp_ms, timestamp_text

NOW = 1_764_194_400_000  # 2025-11-26 22:00:00 UTC
DAY = 86_400_000


@pytest.mark.parametrize("text, ms", [
    ("2025-11-19", 1_763_510_400_000),
    ("2025-11-19T22:00:00", 1_763_589_600_000),
    ("2025-11-19 22:00:00", 1_763_589_600_000),
    ("2025-11-19T22:00:00Z", 1_763_589_600_000),
    ("2025-11-19T22:00:00 UTC", 1_763_589_600_000),
    ("2025-11-19 22:00:00.250 UTC", 1_763_589_600_250),
    ("2025-11-20T00:00:00+02:00", 1_763_589_600_000),
    ("1763589600000", 1_763_589_600_000),
    ("100000000000", 100_000_000_000),
    ("7d", NOW - 7 * DAY),
    ("60h", NOW - 60 * 3_600_000),
    ("0s", NOW),
])
def test_forms(text, ms):
    assert parse_timestamp_ms(text, what="--older-than", now=NOW) == ms


def test_a_short_bare_number_is_a_usage_error_naming_the_units():
    with pytest.raises(UsageError) as e:
        parse_timestamp_ms("7", what="--older-than", now=NOW)
    assert e.value.exit_code == ExitCode.USAGE
    assert e.value.message == ("--older-than '7' has no unit: an age needs one (ms, s, m, h, d or w, e.g. 7d), "
                               "epoch milliseconds have 13 digits")
    with pytest.raises(UsageError, match="has no unit"):
        parse_timestamp_ms("99999999999", what="--since", now=NOW)


@pytest.mark.parametrize("bad", ["", "yesterday", "last tuesday", "2026-13-01", "7 days", "-5d", "1.5h"])
def test_refused(bad):
    with pytest.raises(UsageError, match=r"ISO 8601 .*epoch milliseconds .* age"):
        parse_timestamp_ms(bad, what="--since", now=NOW)


def test_cutoff_in_words_and_milliseconds():
    c = parse_cutoff("7d", what="--older-than", now=1_763_589_600_000 + 7 * DAY)
    assert c == Cutoff("7d", 1_763_589_600_000, 604_800_000)
    assert c.describe() == "older than 7d (604800000 ms): before 2025-11-19 22:00:00 UTC (1763589600000)"
    assert parse_cutoff("2025-11-19T22:00:00Z", what="x").describe() == "before 2025-11-19 22:00:00 UTC (1763589600000)"


def test_printed():
    assert timestamp_text(1_763_589_600_000) == "2025-11-19 22:00:00 UTC"
    assert timestamp_text(1_763_589_600_007) == "2025-11-19 22:00:00.007 UTC"
    assert timestamp_text(-2 ** 62)  # a cutoff from a huge max-snapshot-age-ms is still printed


@given(st.integers(0, 253_402_300_799_999))  # to 9999-12-31
def test_round_trip(ms):
    assert parse_timestamp_ms(timestamp_text(ms), what="x", now=NOW) == ms
