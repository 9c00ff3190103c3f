"""A duration: a whole number and a unit, ``7d``, ``36h``, ``90m``, ``30s``, ``500ms``, ``2w``.
The unit is required: a bare number is refused, as it could mean any of them."""
from __future__ import annotations

import re

from icectl.errors import UsageError

UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
UNITS = "ms, s, m, h, d or w"
_DURATION = re.compile(r"(\d+)\s*(ms|s|m|h|d|w)")


def match_duration_ms(text: str) -> int | None:
    """The milliseconds of ``text`` when it is a duration with a unit, else None."""
    m = _DURATION.fullmatch(text.strip())
    return int(m.group(1)) * UNIT_MS[m.group(2)] if m else None


def parse_duration_ms(text: str, *, what: str) -> int:
    """A duration in milliseconds; ``what`` names the option or key in the error."""
    s = str(text).strip()
    ms = match_duration_ms(s)
    if ms is not None:
        return ms
    if s.isdigit():
        raise UsageError(f"{what} {s!r} has no unit: write e.g. {s}d or {s}h (a duration's unit is one of {UNITS})")
    raise UsageError(f"invalid {what} {s!r}: a duration is a whole number and a unit ({UNITS}), e.g. 7d, 36h, 90m, "
                     "30s, 500ms")


def duration_text(ms: int) -> str:
    """``ms`` with the largest unit (up to days) that divides it: ``7d``, ``90m``, ``1500ms``."""
    for unit in ("d", "h", "m", "s"):
        if ms and ms % UNIT_MS[unit] == 0:
            return f"{ms // UNIT_MS[unit]}{unit}"
    return f"{ms}ms"


def describe_duration(ms: int) -> str:
    """In words and in milliseconds: ``7d (604800000 ms)``."""
    return f"{duration_text(ms)} ({ms} ms)"
