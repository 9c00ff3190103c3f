"""A size in bytes: a number and a unit, ``256MB``, ``1GiB``, ``512KiB``, ``128m``, ``1.5g``,
``4096b``. The multiples are binary, as Spark's and Iceberg's size settings read them:
``K``/``KB``/``KiB`` = 1024, ``M``/``MB``/``MiB`` = 1024², ``G``/``GB``/``GiB`` = 1024³,
``T``/``TB``/``TiB`` = 1024⁴ (case does not matter). The unit is required: a bare number is refused
(``12`` is more likely a forgotten ``MB`` than twelve bytes); bytes are ``B``."""
from __future__ import annotations

import re
from fractions import Fraction

from icectl.errors import UsageError

_MULTIPLE = {"b": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3, "t": 1024 ** 4}
UNITS = "B, KB, MB, GB, TB (binary: 1 KB = 1 KiB = 1024 B; KiB, MiB, GiB, TiB and K, M, G, T read too)"
_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*(b|[kmgt](?:i?b)?)", re.I)


def parse_size(text: str, *, what: str) -> int:
    """A size in bytes (a fraction rounds down to whole bytes); ``what`` names the option."""
    s = str(text).strip()
    m = _SIZE.fullmatch(s)
    if m:
        return int(Fraction(m.group(1)) * _MULTIPLE[m.group(2)[0].lower()])
    if re.fullmatch(r"\d+(\.\d+)?", s):
        raise UsageError(f"{what} {s!r} has no unit: write e.g. {s}MB (units: {UNITS})")
    raise UsageError(f"invalid {what} {s!r}: a size is a number and a unit, e.g. 256MB or 1GiB (units: {UNITS})")


def size_text(n: int) -> str:
    """``n`` bytes with the largest binary unit that divides it: ``256MiB``, ``1GiB``, ``100B``;
    :func:`parse_size` reads it back."""
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        mult = _MULTIPLE[unit[0].lower()]
        if n and n % mult == 0:
            return f"{n // mult}{unit}"
    return f"{n}B"


def human_size(n: int) -> str:
    """``n`` bytes for a person, in binary units: ``384 MiB``, ``41.7 KiB``, ``100 B`` (a whole
    number of units has no decimals; JSON keeps the bytes)."""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            if unit == "B":
                return f"{n} B"
            text = f"{size:.1f}"
            return f"{text.removesuffix('.0')} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover (TiB ends the loop)
