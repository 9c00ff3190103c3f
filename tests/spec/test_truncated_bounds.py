"""Truncated bounds of the ``truncate(N)`` metrics mode (Java's UnicodeUtil.truncateStringMin/Max,
BinaryUtil.truncateBinaryMin/Max) and the metrics mode of each column (Java's MetricsConfig)."""
from __future__ import annotations

from icectl.spec.conversions import truncate_lower, truncate_upper
from icectl.spec.properties import column_metrics_modes, truncate_length
from icectl.spec.types import PrimitiveType

S, B, L = PrimitiveType("string"), PrimitiveType("binary"), PrimitiveType("long")


def test_short_values_are_kept():
    assert truncate_upper(S, "abc", 3) == "abc" and truncate_lower(S, "abc", 3) == "abc"
    assert truncate_upper(B, b"\xff\xff", 2) == b"\xff\xff"
    assert truncate_upper(L, 12345, 1) == 12345 and truncate_lower(L, 12345, 1) == 12345


def test_a_cut_upper_bound_increments_its_last_character():
    assert truncate_lower(S, "abcdef", 2) == "ab" and truncate_upper(S, "abcdef", 2) == "ac"
    assert truncate_upper(S, "イロハニホヘト", 4) == "イロハヌ"  # counted in characters, not bytes
    assert truncate_upper(S, "a\U0010ffffz", 2) == "b"  # U+10FFFF cannot grow: the one before it does
    assert truncate_upper(S, "\U0010ffff\U0010ffffz", 2) is None
    assert truncate_upper(S, "a\ud7ffz", 2) == "a\ue000"  # never into the surrogates
    assert truncate_upper(S, "a\ud7ffz", 2) > "a\ud7ffz"


def test_a_cut_binary_upper_bound_increments_its_last_byte():
    assert truncate_lower(B, b"\x01\x02\x03", 2) == b"\x01\x02"
    assert truncate_upper(B, b"\x01\x02\x03", 2) == b"\x01\x03"
    assert truncate_upper(B, b"\x01\xff\x03", 2) == b"\x02"
    assert truncate_upper(B, b"\xff\xff\x03", 2) is None


def test_metrics_modes_as_java_resolves_them():
    leaves = [(i, f"c{i}") for i in range(1, 103)]
    modes = column_metrics_modes({}, leaves)
    assert modes[1] == modes[100] == "truncate(16)" and modes[101] == modes[102] == "none"  # 100 inferred
    modes = column_metrics_modes({"write.metadata.metrics.default": "counts",
                                  "write.metadata.metrics.column.c2": "full",
                                  "write.metadata.metrics.column.c3": "Truncate(4)"}, leaves[:4], {4})
    assert modes == {1: "counts", 2: "full", 3: "truncate(4)", 4: "truncate(16)"}
    assert column_metrics_modes({"write.metadata.metrics.default": "bogus"}, leaves[:1]) == {1: "truncate(16)"}
    assert truncate_length("truncate(7)") == 7 and truncate_length("full") is None
