"""Known secret values (tokens, client secrets, storage keys), so that no output shows them.

Whatever learns a secret (the catalog configuration, an OAuth2 token response, a table's vended
credentials) calls :func:`remember`; the CLI passes everything it writes, errors and ``--verbose``
tracebacks included, through :func:`redact`. Redacting known values, rather than guessing at
shapes, also covers a secret that ends up inside a server's error message or a URL.
"""
from __future__ import annotations

import re
import threading
from typing import Iterable, Mapping

MASK = "****"
# Property names whose values are secret, in PyIceberg's and Iceberg Java's spelling.
_SECRET_KEY = re.compile(r"(^|[.\-_])(credential|token|secret|password|session-token|access-key-id|"
                         r"secret-access-key|authorization|sas|api-key|private-key|account-key|connection-string)"
                         r"([.\-_]|$)", re.IGNORECASE)
_URI_PASSWORD = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://[^/@:]*:([^/@]+)@")
MIN_LENGTH = 6  # shorter values would mask ordinary words (and are no secret worth the name)

_LOCK = threading.Lock()
_VALUES: set[str] = set()
_PATTERN: re.Pattern[str] | None = None


def is_secret_key(key: str) -> bool:
    """Whether a property of this name holds a secret (``credential``, ``token``,
    ``s3.secret-access-key``, ``header.Authorization`` ...)."""
    return bool(_SECRET_KEY.search(key))


def remember(*values: str | None) -> None:
    """Never show these values in any output."""
    global _PATTERN
    new = {v for v in values if isinstance(v, str) and len(v) >= MIN_LENGTH and v not in _VALUES}
    if not new:
        return
    with _LOCK:
        _VALUES.update(new)
        # Longest first, so a secret that contains another is masked whole.
        _PATTERN = re.compile("|".join(re.escape(v) for v in sorted(_VALUES, key=len, reverse=True)))


def remember_properties(properties: Mapping[str, str]) -> None:
    """Remember the secret values of a property map: values of secret keys, the secret half of a
    ``client_id:client_secret`` credential, passwords inside URIs."""
    found: list[str] = []
    for k, v in properties.items():
        if not isinstance(v, str):
            continue
        if is_secret_key(k):
            found.append(v)
            if k.split(".")[-1] == "credential" and ":" in v:
                found.append(v.split(":", 1)[1])
            if v.lower().startswith("bearer "):
                found.append(v[7:])
        m = _URI_PASSWORD.match(v)
        if m:
            found.append(m.group(1))
    remember(*found)


def redact(text: str) -> str:
    """``text`` with every known secret replaced by ``****``."""
    pattern = _PATTERN
    if pattern is None or not text:
        return text
    return pattern.sub(MASK, text)


def found_in(data: bytes | bytearray | memoryview) -> bool:
    """Whether a known secret occurs in ``data`` (UTF-8 text): when none does, :func:`redact` of
    its text changes nothing."""
    values = tuple(_VALUES)
    if not values:
        return False
    if not isinstance(data, bytes):
        data = bytes(data)  # a memoryview's ``in`` compares single bytes, not a run of them
    return any(v.encode("utf-8", "surrogatepass") in data for v in values)


def redact_properties(properties: Mapping[str, str]) -> dict[str, str]:
    """A copy of a property map fit to show: secret values masked."""
    return {k: (MASK if is_secret_key(k) else redact(v)) for k, v in properties.items()}


def known() -> Iterable[str]:
    """The secrets remembered so far (for tests that grep outputs for them)."""
    return tuple(_VALUES)


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _escape_surrogate(m: re.Match[str]) -> str:
    return "\\u%04x" % ord(m.group())


class RedactingStream:
    """A text stream that masks known secrets in everything written to it, and writes a lone
    surrogate (a string from a corrupt metadata file may hold one; no encoding can write it) as its
    ``\\ud800`` escape; every other attribute (``isatty``, ``flush``, ``encoding`` ...) is the
    wrapped stream's."""

    def __init__(self, stream):  # noqa: ANN001 - any text stream
        self._stream = stream

    def write(self, text: str) -> int:
        out = redact(text)
        if not out.isascii() and _SURROGATE.search(out):  # a surrogate is not ASCII: most text skips the search
            out = _SURROGATE.sub(_escape_surrogate, out)
        self._stream.write(out)
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str):  # noqa: ANN204
        return getattr(self._stream, name)
