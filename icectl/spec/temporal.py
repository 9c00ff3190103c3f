"""Dates, times and timestamps as Iceberg counts them (days from 1970-01-01, micro- or
nanoseconds), and their ISO-8601 text (Appendix D's JSON forms).

Calendar arithmetic is on the proleptic Gregorian calendar without ``datetime`` (H. Hinnant's
civil_from_days / days_from_civil), so every value of the underlying int/long converts,
including years before 1 and after 9999.
"""
from __future__ import annotations

import functools
import re
from typing import Any

from icectl.errors import InvalidMetadataError

MICROS_PER_DAY = 86_400_000_000
NANOS_PER_DAY = MICROS_PER_DAY * 1000


def _bad(msg: str) -> InvalidMetadataError:
    return InvalidMetadataError(msg)



def civil_from_days(days: int) -> tuple[int, int, int]:
    """(year, month, day) of a day count from 1970-01-01, for any integer."""
    z = days + 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    y = yoe + era * 400 + (1 if m <= 2 else 0)
    return y, m, d


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days from 1970-01-01 of a proleptic Gregorian date."""
    y = year - (1 if month <= 2 else 0)
    era = y // 400
    yoe = y - era * 400
    mp = month - 3 if month > 2 else month + 9
    doy = (153 * mp + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146_097 + doe - 719_468


def _iso_year(y: int) -> str:
    # ISO-8601 / java.time: four digits, a sign when negative or longer than four digits.
    return f"-{-y:04d}" if y < 0 else f"+{y}" if y > 9999 else f"{y:04d}"


def days_to_iso(days: int) -> str:
    """``2017-11-16`` for 17486 (Appendix D JSON ``date``)."""
    y, m, d = civil_from_days(days)
    return f"{_iso_year(y)}-{m:02d}-{d:02d}"


# The date of each day once: 100,000 snapshot timestamps fall on a few hundred days.
_day_text = functools.lru_cache(maxsize=4096)(days_to_iso)


_DATE = r"([+-]?\d{4,})-(\d{2})-(\d{2})"
_TIME = r"(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?"
_DATE_RE = re.compile(_DATE)
TIME_RE = re.compile(_TIME)
_TS_RE = re.compile(_DATE + r"[Tt]" + _TIME + r"([Zz]|[+-]\d{2}:\d{2}(?::\d{2})?)?")


def _date_parts(y: str, mo: str, d: str, text: str) -> int:
    ymd = (int(y), int(mo), int(d))
    days = days_from_civil(*ymd)
    if not 1 <= ymd[1] <= 12 or civil_from_days(days) != ymd:  # e.g. 2017-02-29 or day 32
        raise _bad(f"invalid date {text!r}")
    return days


def time_nanos(h: str, mi: str, s: str | None, frac: str | None, text: str) -> int:
    hour, minute, second = int(h), int(mi), int(s or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise _bad(f"invalid time {text!r}")
    nanos = int((frac or "").ljust(9, "0"))
    return ((hour * 60 + minute) * 60 + second) * 1_000_000_000 + nanos


def iso_to_days(text: str) -> int:
    """Days from 1970-01-01 of an ISO-8601 date such as ``2017-11-16``."""
    m = _DATE_RE.fullmatch(text) if isinstance(text, str) else None
    if not m:
        raise _bad(f"invalid date {text!r}: expected an ISO-8601 date like 2017-11-16")
    return _date_parts(*m.groups(), text)


def _fraction(nanos: int, digits: int, trim: bool) -> str:
    """The fraction of a second for ``nanos`` (0..999_999_999), ``digits`` wide or trimmed."""
    if trim:
        return "." + f"{nanos:09d}".rstrip("0") if nanos else ""
    return "." + f"{nanos:09d}"[:digits]


def _time_of_day(nanos_of_day: int, digits: int, trim: bool) -> str:
    secs, nanos = divmod(nanos_of_day, 1_000_000_000)
    h, rem = divmod(secs, 3600)
    mi, s = divmod(rem, 60)
    return f"{h:02d}:{mi:02d}:{s:02d}{_fraction(nanos, digits, trim)}"


def micros_to_iso_time(micros: int, *, trim: bool = False) -> str:
    """``22:31:08.123456`` (microsecond precision; ``trim`` drops trailing zeros as Java)."""
    if not 0 <= micros < MICROS_PER_DAY:
        raise _bad(f"time value {micros} is not within a day (0 <= micros < {MICROS_PER_DAY})")
    return _time_of_day(micros * 1000, 6, trim)


def timestamp_to_iso(value: int, *, nanos: bool, tz: bool, trim: bool) -> str:
    per_day = NANOS_PER_DAY if nanos else MICROS_PER_DAY
    days, of_day = divmod(value, per_day)
    text = days_to_iso(days) + "T" + _time_of_day(of_day if nanos else of_day * 1000, 9 if nanos else 6, trim)
    return text + "+00:00" if tz else text


def millis_to_iso(ms: int, *, timespec: str = "milliseconds", sep: str = "T", zone: str = "Z") -> str:
    """Epoch milliseconds (a snapshot's ``timestamp-ms``, ``last-updated-ms``) as ISO-8601 UTC text,
    ``2026-01-31T12:00:00.000Z``, for any integer: a timestamp past year 9999 (or before year 1)
    is written with a signed year as java.time writes it, never refused. ``timespec`` is
    ``milliseconds`` or ``seconds``; ``sep`` goes between date and time, ``zone`` after it."""
    days, of_day = divmod(int(ms), 86_400_000)
    secs, millis = divmod(of_day, 1000)
    h, rem = divmod(secs, 3600)
    mi, s = divmod(rem, 60)
    # %-formatting: half the time of the f-string's format specs (snapshots writes one a snapshot)
    if timespec == "milliseconds":
        return "%s%s%02d:%02d:%02d.%03d%s" % (_day_text(days), sep, h, mi, s, millis, zone)
    return "%s%s%02d:%02d:%02d%s" % (_day_text(days), sep, h, mi, s, zone)


def iso_to_timestamp(text: Any, *, nanos: bool, tz: bool, type_name: str) -> int:
    m = _TS_RE.fullmatch(text) if isinstance(text, str) else None
    if not m:
        example = "2017-11-16T22:31:08.123456" + ("+00:00" if tz else "")
        raise _bad(f"invalid {type_name} value {text!r}: expected ISO-8601 like {example}")
    y, mo, d, h, mi, s, frac, offset = m.groups()
    if tz and offset is None:
        raise _bad(f"invalid {type_name} value {text!r}: a zone offset (+00:00) is required")
    if not tz and offset is not None:
        raise _bad(f"invalid {type_name} value {text!r}: must not include a zone offset")
    if offset is not None and offset.upper() != "Z" and offset[1:].replace(":", "").strip("0"):
        raise _bad(f"invalid {type_name} value {text!r}: the zone offset must be +00:00 (UTC)")
    total = _date_parts(y, mo, d, text) * NANOS_PER_DAY + time_nanos(h, mi, s, frac, text)
    if nanos:
        return total
    # java.time's ChronoUnit.MICROS.between truncates extra nanosecond digits toward zero.
    q = abs(total) // 1000
    return q if total >= 0 else -q
