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


_WORDS = (("day", 86_400_000), ("hour", 3_600_000), ("minute", 60_000), ("second", 1000))


def human_duration(ms: int) -> str:
    """``ms`` for a person: ``5 days``, ``36 hours``, ``1 day 12 hours``, ``90 minutes``, ``500 ms``:
    the two largest units that are whole, weeks shown as days (retention is set in days). JSON
    keeps the milliseconds."""
    if ms < 1000:
        return f"{ms} ms"
    parts: list[str] = []
    rest = ms
    for unit, size in _WORDS:
        if rest >= size:
            k, rest = divmod(rest, size)
            parts.append(f"{k} {unit}{'s' if k != 1 else ''}")
            if len(parts) == 2:
                break
        elif parts:
            break  # the next unit is not adjacent: 1 day 0 hours 5 minutes reads as 1 day
    return " ".join(parts)
