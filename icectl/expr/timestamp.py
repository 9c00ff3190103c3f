"""A point in time, in one of three forms:

- ISO 8601: a date (``2026-01-31``, its midnight) or a date and time (``2026-01-31T12:00:00``,
  ``2026-01-31 12:00:00.250``), with a zone (``Z``, ``+02:00``, `` UTC``) or without one, which
  means UTC: Iceberg's ``timestamp-ms`` fields are UTC, and a cut-off that moved with the
  machine's zone would select other snapshots on another machine;
- epoch milliseconds, as ``timestamp-ms`` holds them: a whole number of at least 12 digits
  (``1763589600000``). A shorter number is refused, not read as milliseconds after 1970: ``7``
  is far more likely a forgotten unit than a moment in January 1970;
- an age: a duration with its unit (:mod:`icectl.expr.duration`), ``60h`` is 60 hours before now.
"""
from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass

from icectl.errors import UsageError
from icectl.expr.duration import UNITS, match_duration_ms
from icectl.spec.temporal import millis_to_iso

# The smallest bare number read as epoch milliseconds (1973-03-03): any snapshot is younger.
MIN_EPOCH_MS = 10 ** 11
FORMS = (f"an ISO 8601 time (2026-01-31T12:00:00Z; no zone: UTC), epoch milliseconds (13 digits), or an age "
         f"with a unit ({UNITS}, e.g. 7d)")


@dataclass(frozen=True)
class Cutoff:
    """A time as the user gave it and as resolved: ``age_ms`` is set for the relative form."""

    text: str
    timestamp_ms: int
    age_ms: int | None = None

    def describe(self) -> str:
        """``older than 7d (604800000 ms): before 2025-11-19 22:00:00 UTC (1763589600000)``."""
        when = f"before {timestamp_text(self.timestamp_ms)} ({self.timestamp_ms})"
        if self.age_ms is not None:
            return f"older than {self.text} ({self.age_ms} ms): {when}"
        return when


def now_ms() -> int:
    return int(time.time() * 1000)


def parse_cutoff(text: str, *, what: str, now: int | None = None) -> Cutoff:
    """A time in any of the three forms, resolved against ``now`` (epoch ms; default: the clock)."""
    s = str(text).strip()
    age = match_duration_ms(s)
    if age is not None:
        return Cutoff(s, (now if now is not None else now_ms()) - age, age)
    if s.isdigit():
        if int(s) >= MIN_EPOCH_MS:
            return Cutoff(s, int(s))
        raise UsageError(f"{what} {s!r} has no unit: an age needs one ({UNITS}, e.g. {s}d), epoch milliseconds "
                         "have 13 digits")
    iso = s[:-4] + "+00:00" if s.upper().endswith(" UTC") else s.replace("Z", "+00:00").replace("z", "+00:00")
    try:
        d = dt.datetime.fromisoformat(iso)
    except ValueError:
        raise UsageError(f"invalid {what} {s!r}: use {FORMS}") from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=dt.timezone.utc)
    delta = d - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    return Cutoff(s, delta // dt.timedelta(milliseconds=1))


def parse_timestamp_ms(text: str, *, what: str, now: int | None = None) -> int:
    """A time in any of the three forms, in epoch milliseconds."""
    return parse_cutoff(text, what=what, now=now).timestamp_ms


def timestamp_text(ms: int) -> str:
    """``2025-11-19 22:00:00 UTC`` (with ``.250`` when the milliseconds are not 0), for any
    integer (a cutoff far in the past has a signed year); :func:`parse_timestamp_ms` reads back
    the years 1 to 9999."""
    return millis_to_iso(ms, timespec="milliseconds" if ms % 1000 else "seconds", sep=" ", zone=" UTC")
