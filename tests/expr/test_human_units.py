"""Sizes and durations for a person (text output); JSON keeps bytes and milliseconds."""
from __future__ import annotations

import pytest

from icectl.expr.duration import human_duration
from icectl.expr.size import human_size


@pytest.mark.parametrize("n, text", [(0, "0 B"), (100, "100 B"), (1024, "1 KiB"), (42_700, "41.7 KiB"),
                                     (14_410, "14.1 KiB"), (402_653_184, "384 MiB"), (536_870_912, "512 MiB"),
                                     (3 * 1024 ** 3 // 2, "1.5 GiB"), (3 * 1024 ** 4, "3 TiB"),
                                     (5000 * 1024 ** 4, "5000 TiB")])
def test_human_size(n, text):
    assert human_size(n) == text


@pytest.mark.parametrize("ms, text", [(0, "0 ms"), (500, "500 ms"), (1000, "1 second"), (90_000, "1 minute 30 seconds"),
                                      (5_400_000, "1 hour 30 minutes"), (129_600_000, "1 day 12 hours"),
                                      (432_000_000, "5 days"), (604_800_000, "7 days"), (86_400_000, "1 day"),
                                      (86_400_000 + 300_000, "1 day")])
def test_human_duration(ms, text):
    assert human_duration(ms) == text
