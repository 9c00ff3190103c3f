"""Sizes: binary multiples, a unit is required."""
from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from icectl.errors import ExitCode, UsageError
from icectl.expr.size import parse_size, size_text

MiB = 1024 ** 2


@pytest.mark.parametrize("text, n", [
    ("256MB", 256 * MiB), ("256MiB", 256 * MiB), ("256mb", 256 * MiB), ("128m", 128 * MiB), ("1GiB", 1024 * MiB),
    ("1g", 1024 * MiB), ("512KiB", 512 * 1024), ("2KB", 2048), ("1.5GB", 1536 * MiB), ("1TB", 1024 ** 4),
    ("4000B", 4000), ("4000b", 4000), (" 64 MB ", 64 * MiB)])
def test_sizes(text, n):
    assert parse_size(text, what="--target-file-size") == n


def test_bare_number_is_a_usage_error_naming_the_units():
    with pytest.raises(UsageError) as e:
        parse_size("12", what="--target-file-size")
    assert e.value.exit_code == ExitCode.USAGE
    assert e.value.message.startswith("--target-file-size '12' has no unit: write e.g. 12MB (units: B, KB, MB, GB, TB")
    assert "1 KB = 1 KiB = 1024 B" in e.value.message


@pytest.mark.parametrize("bad", ["", "MB", "12 parsecs", "-1MB", "1PB", "12bytes"])
def test_refused(bad):
    with pytest.raises(UsageError, match="units: B, KB, MB, GB, TB"):
        parse_size(bad, what="--max-file-group-size")


def test_printed():
    assert size_text(256 * MiB) == "256MiB"
    assert size_text(1024 ** 3) == "1GiB"
    assert size_text(1000) == "1000B"
    assert size_text(0) == "0B"


@given(st.integers(0, 2 ** 62))
def test_round_trip(n):
    assert parse_size(size_text(n), what="x") == n
