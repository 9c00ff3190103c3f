"""The one output path: every command hands a typed result (a dataclass) to :func:`render`.

- JSON (``--output json``): one document on stdout, serialized from the dataclass by
  :func:`write_json`. A dataclass becomes an object of its fields, in order; fields declared with
  ``repr=False`` hold what only the text renderer needs (parsed metadata, sizes) and are not part
  of the document. A result whose class sets ``json_root = "field"`` is that field's list itself
  (``snapshots``, ``files``, ``refs``), streamed one element per line so that millions of files
  print with the C encoder, without building one huge string; the field may be an iterator
  (``files``), consumed as it is written.
- JSON Lines (``--output jsonl``, for the commands whose entry in ``COMMANDS`` lists it): one
  compact JSON object a line, each element of a ``json_root`` result (``list --all``'s tables),
  written and flushed as it comes; any other result is its one document on one line. A command
  adopts it by listing ``jsonl`` in its ``outputs`` (and, to stream, giving its result a
  ``json_root``).
- A result whose class sets ``json_stream = True`` (``list --all``) is written as its rows come,
  each flushed, with no rows read ahead: its first row is out before its last is known (as JSON
  and as JSON Lines).
- A result whose class gives ``json_row`` (``files``: a row -> a plain dict of str, int, bool,
  None, lists and dicts of them, or None when the row holds something else) has its rows encoded
  by msgspec a batch at a time, to the same text the standard encoder writes (``, `` and ``: ``,
  ASCII); a batch that is not plain, or not ASCII, goes through the standard encoder. As JSON
  Lines its first row is written and flushed at once, then a batch at a time.
- Text: the renderer registered for the result's type with :func:`text_renderer`. On a terminal
  tables and trees are drawn by rich; piped, they are plain columns and an indented ASCII tree
  (no box-drawing characters), so output stays easy to grep, cut and diff.
"""
from __future__ import annotations

import dataclasses
import json
import os
import time
from enum import Enum
from itertools import islice
from typing import Any, Callable, Iterable, Iterator, Protocol, Sequence, TextIO, TypeVar

import msgspec

from icectl.cli.context import Env
from icectl.cli.options import JSONL
from icectl.errors import IcectlError
from icectl.secrets import found_in
from icectl.expr.duration import human_duration
from icectl.expr.size import human_size
from icectl.spec.temporal import millis_to_iso

# A JSON object in the spec's own form (a schema, partition spec or sort order as Appendix C writes
# it): its keys are the spec's, not ours.
SpecJson = dict[str, Any]

R = TypeVar("R")
TextRenderer = Callable[[Env, Any], None]
_TEXT_RENDERERS: dict[type, TextRenderer] = {}


def text_renderer(result_type: type[R]) -> Callable[[Callable[[Env, R], None]], Callable[[Env, R], None]]:
    """Register the function that prints ``result_type`` for people (``--output table``)."""
    def register(fn: Callable[[Env, R], None]) -> Callable[[Env, R], None]:
        _TEXT_RENDERERS[result_type] = fn
        return fn

    return register


def render(env: Env, result: Any) -> None:
    """Write ``result`` to stdout: one JSON document, JSON lines, or its registered text rendering."""
    if env.output == JSONL:
        write_jsonl(env.stdout, result)
        return
    if env.json:
        write_json(env.stdout, result)
        return
    fn = _TEXT_RENDERERS.get(type(result))
    if fn is None:
        raise TypeError(f"no text renderer is registered for {type(result).__name__}")
    fn(env, result)


# -- JSON: one serializer ---------------------------------------------------------------------------

_FIELDS: dict[type, tuple[str, ...]] = {}
_HIDDEN: dict[type, tuple[str, ...]] = {}


def json_fields(cls: type) -> tuple[str, ...]:
    """The names of the fields of dataclass ``cls`` that are part of its JSON form."""
    names = _FIELDS.get(cls)
    if names is None:
        fields = dataclasses.fields(cls)
        names = tuple(f.name for f in fields if f.repr)
        _FIELDS[cls] = names
        _HIDDEN[cls] = tuple(f.name for f in fields if not f.repr)
    return names


def _default(obj: Any) -> Any:
    """What ``json`` calls for a value it cannot encode itself (it recurses into the result)."""
    cls = type(obj)
    if hasattr(cls, "__dataclass_fields__"):
        names = json_fields(cls)
        d = getattr(obj, "__dict__", None)
        if d is not None and len(d) == len(names) + len(_HIDDEN[cls]):
            # The instance dict holds the fields in order: copying it is the fast path (files).
            if not _HIDDEN[cls]:
                return d
            d = dict(d)
            for name in _HIDDEN[cls]:
                del d[name]
            return d
        return {name: getattr(obj, name) for name in names}
    if isinstance(obj, Enum):
        return obj.value if isinstance(obj.value, str) else obj.name.lower()
    if isinstance(obj, (bytes, bytearray)):
        return obj.hex()
    if isinstance(obj, (set, frozenset)):
        return sorted(obj)
    return str(obj)  # Decimal, UUID, date: their canonical text


def json_text(value: Any) -> str:
    """``value`` as the compact text of every JSON row and line (the standard encoder's: ``, ``
    and ``: ``, ASCII with ``\\u`` escapes, dataclasses as their JSON fields)."""
    return _COMPACT(value)


def write_json(out: TextIO, result: Any) -> None:
    root = getattr(type(result), "json_root", None)
    if root is None:
        out.write(_indented(result) + "\n")
        return
    runs = result.json_texts(",\n") if hasattr(result, "json_texts") else None
    if runs is not None:
        _write_json_runs(out, runs)
        return
    rows = iter(getattr(result, root))  # a list, or an iterator streamed as it is consumed
    if getattr(type(result), "json_stream", False):
        _stream_json_array(out, rows)
        return
    first = head(rows)
    if not first:
        out.write("[]\n")
        return
    texts = row_texts(type(result))
    out.write("[\n")
    out.write(texts(first, ",\n"))
    while True:
        batch = head(rows)
        if not batch:
            break
        out.write(",\n")
        out.write(texts(batch, ",\n"))
    out.write("\n]\n")


def _indented(result: Any) -> str:
    """``json.dumps(result, default=_default, indent=2)``: the C encoder's compact text, indented
    by msgspec (the standard encoder indents in pure Python, ten times slower); a text msgspec
    does not take (NaN, Infinity) goes through the standard encoder. A long list of rows of a
    type registered with :func:`plain_rows` (``diff``'s files) is encoded by msgspec in one call
    (:func:`_plain_array`) and put in the text where the encoder wrote a placeholder for it."""
    arrays: dict[str, str] = {}  # a placeholder's JSON text -> the array's
    mark = f"\x00{os.urandom(8).hex()}:"  # no value holds it (a NUL and 64 random bits)

    def default(obj: Any) -> Any:
        d = _default(obj)
        if type(d) is dict and _PLAIN_ROWS:
            spliced = {}
            for k, v in d.items():
                if type(v) is list and len(v) >= PLAIN_ARRAY_MIN and type(v[0]) in _PLAIN_ROWS:
                    text = _plain_array(v)
                    if text is not None:
                        spliced[k] = f"{mark}{len(arrays)}"
                        arrays[json.dumps(spliced[k])] = text
            if spliced:
                d = {**d, **spliced}  # not the instance's own dict, which _default may give
        return d

    text = json.JSONEncoder(default=default).encode(result)
    for placeholder, array in arrays.items():
        text = text.replace(placeholder, array, 1)
    try:
        return _FORMAT(text, indent=2)
    except msgspec.DecodeError:
        return json.dumps(result, default=_default, indent=2)


# A row type -> its JSON object as a plain dict (str keys; str, int, bool, None, and lists and dicts
# of them), or None when it holds something else (a float: the standard encoder writes 1e+16 where
# msgspec writes 1e16).
_PLAIN_ROWS: dict[type, Callable[[Any], dict[str, Any] | None]] = {}
PLAIN_ARRAY_MIN = 64  # a shorter list is left to the standard encoder


def plain_rows(row_type: type) -> Callable[[Callable[[Any], Any]], Callable[[Any], Any]]:
    """Register the plain-dict form of ``row_type``'s JSON object (see :func:`_indented`)."""
    def register(fn: Callable[[Any], Any]) -> Callable[[Any], Any]:
        _PLAIN_ROWS[row_type] = fn
        return fn

    return register


def _plain_array(rows: list[Any]) -> str | None:
    """The compact JSON text msgspec writes for ``rows`` (all of one registered type), or None
    when a row is not plain or the text is not what the standard encoder writes (not ASCII, or
    holding DEL, which it escapes)."""
    cls = type(rows[0])
    plain = _PLAIN_ROWS[cls]
    dicts = []
    for r in rows:
        d = plain(r) if type(r) is cls else None
        if d is None:
            return None
        dicts.append(d)
    try:
        data = _ENCODE(dicts)
    except (TypeError, ValueError, OverflowError):  # a value msgspec does not take (UnicodeEncodeError too)
        return None
    if not data.isascii() or b"\x7f" in data:
        return None
    return data.decode()


_COMPACT = json.JSONEncoder(default=_default).encode
_ENCODE = msgspec.json.Encoder().encode
_FORMAT = msgspec.json.format
ROW_BOUNDARY = b"}, {"


def row_texts(cls: type) -> Callable[[list[Any], str], str]:
    """A batch of rows -> their JSON texts as ``json.JSONEncoder(default=_default).encode``
    writes each, joined by ``sep``; by msgspec for a result class with ``json_row`` (see the
    module's docstring)."""
    dumps = json.JSONEncoder(default=_default).encode  # compact, C-accelerated
    plain = getattr(cls, "json_row", None)
    if plain is None:
        return lambda batch, sep: sep.join(map(dumps, batch))

    def texts(batch: list[Any], sep: str) -> str:
        dicts = list(map(plain, batch))
        if None not in dicts:
            try:
                data: bytes | None = _ENCODE(dicts)
            except UnicodeEncodeError:  # a lone surrogate, which msgspec cannot write as UTF-8
                data = None
            n = len(dicts)
            del dicts  # each intermediate is let go as soon as the next is made: memory stays as it was
            # the standard encoder writes the rest as \\u escapes, and DEL (0x7f) as \\u007f
            if data is not None and data.isascii() and b"\x7f" not in data:
                # the batch as one array on one line; indent=0 puts the standard encoder's spaces
                # after ',' and ':' back. Rows are objects, so "}, {" sits between each two; when
                # it is found nowhere else (not inside a string), it is where to cut.
                flat = _FORMAT(data, indent=0)
                del data
                if flat.count(ROW_BOUNDARY) == n - 1:
                    body = flat[1:-1]  # "[" and "]" of the array off
                    del flat
                    return body.replace(ROW_BOUNDARY, ("}" + sep + "{").encode()).decode()
        return sep.join(map(dumps, batch))

    return texts


def _write_json_runs(out: TextIO, runs: Iterator[tuple[bytes, int]]) -> None:
    """The array of a result that gives ``json_texts``: runs of row texts (ASCII), already joined
    by ``,\\n``; nothing is written before ``BATCH`` rows are rendered (or the last)."""
    pending: list[bytes] = []
    rows = 0
    started = False
    for text, n in runs:
        if not n:
            continue
        pending.append(text)
        rows += n
        if started or rows >= BATCH:
            for text in pending:
                out.write(",\n" if started else "[\n")
                write_ascii(out, text)
                started = True
            pending = []
    for text in pending:
        out.write(",\n" if started else "[\n")
        write_ascii(out, text)
        started = True
    out.write("\n]\n" if started else "[]\n")


def write_ascii(out: TextIO, data: bytes) -> None:
    """ASCII text given as bytes (a buffer polars rendered) to a text stream: straight to the
    stream's byte buffer when no known secret occurs in it (the redaction would change nothing
    then, and ASCII holds no surrogate to escape), else decoded and written as text, through the
    redaction. Either way the bytes on stdout are the same."""
    buffer = getattr(out, "buffer", None)
    if buffer is not None and not found_in(data):
        out.flush()
        buffer.write(data)
    else:
        out.write(str(data, "ascii"))


def _stream_json_array(out: TextIO, rows: Iterator[Any]) -> None:
    """One JSON array, each element written and flushed as it comes (``json_stream``)."""
    dumps = json.JSONEncoder(default=_default).encode
    sep = "[\n"
    try:
        for row in rows:
            out.write(sep + dumps(row))
            out.flush()
            sep = ",\n"
    except IcectlError:  # the listing failed midway: what was printed stays one document
        out.write("[]\n" if sep == "[\n" else "\n]\n")
        raise
    out.write("[]\n" if sep == "[\n" else "\n]\n")


def write_jsonl(out: TextIO, result: Any) -> None:
    """JSON Lines: each element of a ``json_root`` result on its own line, as it comes (flushed
    with ``json_stream``); another result, its document on one line."""
    dumps = json.JSONEncoder(default=_default).encode
    root = getattr(type(result), "json_root", None)
    if root is None:
        out.write(dumps(result) + "\n")
        return
    runs = result.json_texts("\n") if hasattr(result, "json_texts") else None
    if runs is not None:  # the first row at once, then each run, flushed
        first = True
        for text, n in runs:
            if not n:
                continue
            if first:
                cut = bytes(text[:65536]).find(b"\n")  # a JSON text holds no newline: the encoder escapes it
                if cut < 0:  # a first row of over 64 KiB
                    cut = bytes(text).find(b"\n") % (len(text) + 1)
                write_ascii(out, text[:cut])
                out.write("\n")
                out.flush()
                text = text[cut + 1:]
                first = False
                if not len(text):
                    continue
            write_ascii(out, text)
            out.write("\n")
            out.flush()
        return
    flush = getattr(type(result), "json_stream", False)
    rows = getattr(result, root)
    if flush or getattr(type(result), "json_row", None) is None:
        for row in rows:
            out.write(dumps(row) + "\n")
            if flush:
                out.flush()
        return
    # the first row at once, then a batch at a time, each flushed: a reader sees rows as they are decoded
    texts = row_texts(type(result))
    rows = iter(rows)
    size = 1
    while True:
        batch = list(islice(rows, size))
        if not batch:
            return
        out.write(texts(batch, "\n") + "\n")
        out.flush()
        size = JSONL_BATCH


def write_json_line(out: TextIO, record: Any) -> None:
    """One record as one compact JSON line, flushed (``-o jsonl`` written as a run goes)."""
    out.write(json.JSONEncoder(default=_default).encode(record) + "\n")
    out.flush()


def progress_writer(env: Env) -> Callable[[str], None]:
    """Progress lines on stderr, each with its UTC time (``2026-05-01T03:10:04Z icectl: db.t: expire:
    done``), written and flushed as a long run goes, in every output mode: a task log or a cron
    stderr file shows where the run is."""
    def write(message: str) -> None:
        env.stderr.write(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} icectl: {message}\n")
        env.stderr.flush()

    return write


BATCH = 10_000  # rows written at once; the first batch is read before anything is written
JSONL_BATCH = 1_000  # rows of a -o jsonl listing written (and flushed) at once, after the first


def head(rows: Iterator[Any], n: int = BATCH) -> list[Any]:
    """The first ``n`` rows of a stream: a listing that fails early (a corrupt manifest) fails
    before anything reaches stdout, and a short listing is known whole before it is printed."""
    out = []
    for row in rows:
        out.append(row)
        if len(out) >= n:
            break
    return out


# -- text: values --------------------------------------------------------------------------------------

def fmt_ts(ms: int | None) -> str:
    if ms is None:
        return ""
    return millis_to_iso(ms, sep=" ", zone=" UTC")


def iso_ts(ms: int | None) -> str | None:
    if ms is None:
        return None
    return millis_to_iso(ms)


def fmt_bytes(n: int | None) -> str:
    """A size for a person (``384 MiB``); JSON keeps the bytes."""
    return "?" if n is None else human_size(n)


def fmt_duration_ms(ms: int | None) -> str:
    """A duration for a person (``5 days``, ``36 hours``); JSON keeps the milliseconds."""
    return "" if ms is None else human_duration(ms)


def num(n: int | None) -> str:
    return "" if n is None else f"{n:,}"


def opt(v: Any) -> str:
    return "" if v is None else str(v)


def nums(values: Iterable[int | None]) -> list[str]:
    """:func:`num` of each value of a column (written out: a long listing makes no call a value)."""
    return ["" if n is None else f"{n:,}" for n in values]


def opts(values: Iterable[Any]) -> list[str]:
    """:func:`opt` of each value of a column."""
    return ["" if v is None else str(v) for v in values]


# -- text: lines, tables and trees -----------------------------------------------------------------------

# A line of text in styled pieces: ("text", rich style or None). Plain output joins the texts.
Line = list[tuple[str, "str | None"]]

RICH_ROW_LIMIT = 300


def use_plain(env: Env, rows: int = 0) -> bool:
    """Rich tables for a person at a terminal; plain columns for pipes and for long listings
    (drawing thousands of rows with rich takes seconds)."""
    return not env.is_terminal() or rows > RICH_ROW_LIMIT


def _rich_text(line: Line) -> Any:
    from rich.text import Text  # rich is heavy: loaded only to draw on a terminal

    return Text.assemble(*((t, s) if s else t for t, s in line))


def say(env: Env, *pieces: tuple[str, str | None] | str) -> None:
    """One line on stdout; styled pieces are colored on a terminal only. No markup is parsed, so
    paths with brackets print as they are."""
    line: Line = [(p, None) if isinstance(p, str) else p for p in pieces]
    if not env.is_terminal():
        env.stdout.write("".join(t for t, _ in line) + "\n")
        return
    text = _rich_text(line)
    indent = len(text.plain) - len(text.plain.lstrip(" "))
    if indent and text.plain.strip():
        from rich.padding import Padding  # rich: on a terminal only

        # a long indented line wraps under its own indentation, not at the left edge
        env.console().print(Padding(text[indent:], (0, 0, 0, indent), expand=False))
        return
    env.console().print(text)


def say_verbatim(env: Env, text: str) -> None:
    """``text`` as one line, never wrapped to the terminal's width (a command to paste)."""
    env.stdout.write(text + "\n")
    env.stdout.flush()


def warn(env: Env, message: str) -> None:
    env.stderr.write(f"icectl: warning: {message}\n")


def _widen(widths: list[int], rows: list[list[str]]) -> None:
    """Each column's width grown, in place, to the widest of its cells in ``rows``."""
    for r in rows:
        for i, cell in enumerate(r):
            if len(cell) > widths[i]:
                widths[i] = len(cell)


def _aligned(cells: list[str], widths: list[int], headers: list[str], right: set[str]) -> str:
    """One line of a plain table: each cell padded to its column's width, two spaces apart."""
    return "  ".join(c.rjust(w) if h in right else c.ljust(w) for c, w, h in zip(cells, widths, headers)).rstrip()


def _line_format(headers: list[str], widths: list[int], right: set[str]) -> str:
    """The format of a plain table's line: each cell padded to its column's width, two spaces apart."""
    return "  ".join(f"{{:{'>' if h in right else '<'}{w}}}" for h, w in zip(headers, widths))


def plain_table(env: Env, headers: list[str], rows: list[list[str]], *, right: Iterable[str] = frozenset(),
                show_header: bool = True) -> None:
    """Fixed-width columns, two spaces apart, header first: fast and easy to grep or cut."""
    if headers and all(len(r) == len(headers) for r in rows):  # whole columns, one format call a row
        plain_columns(env, headers, list(zip(*rows)) or [[] for _ in headers], right=right, show_header=show_header)
        return
    right = set(right)
    widths = [len(h) if show_header else 0 for h in headers]
    _widen(widths, rows)
    out = env.stdout
    if show_header:
        out.write(_aligned(headers, widths, headers, right) + "\n")
    out.write("\n".join(_aligned(r, widths, headers, right) for r in rows))
    if rows:
        out.write("\n")


PLAIN_LINES = 10_000  # lines of a plain table joined and written at a time (plain_columns)


def plain_columns(env: Env, headers: list[str], columns: Sequence[Sequence[str]], *,
                  right: Iterable[str] = frozenset(), show_header: bool = True) -> None:
    """:func:`plain_table` of the rows ``zip(*columns)``, its cells given a column at a time (a
    long listing makes each column in one pass, and holds no list a row), written a batch of lines
    at a time."""
    right = set(right)
    widths = [max(len(h) if show_header else 0, max(map(len, c), default=0)) for h, c in zip(headers, columns)]
    fmt = _line_format(headers, widths, right).format
    out = env.stdout
    if show_header:
        out.write(fmt(*headers).rstrip() + "\n")
    n = len(columns[0]) if columns else 0
    for start in range(0, n, PLAIN_LINES):
        end = start + PLAIN_LINES
        out.write("\n".join([line.rstrip() for line in map(fmt, *(c[start:end] for c in columns))]) + "\n")


class ColumnCells(Protocol):
    """A batch of table cells held as columns (``files``: polars strings), for
    :func:`plain_table_stream`: the widest cell of each column, and the batch's lines for
    given column widths, as :func:`plain_table` writes them (joined by newlines, none after the last)."""

    def widths(self) -> list[int]: ...

    def lines(self, widths: list[int], right: list[bool]) -> str: ...


def plain_table_stream(env: Env, headers: list[str], batches: Iterable[list[list[str]] | ColumnCells], *,
                       right: Iterable[str] = frozenset()) -> None:
    """:func:`plain_table` for a listing too long to hold: the header and the first batch take
    the first batch's widths, and a later batch widens a column only if one of its cells is
    wider (rows of one batch always line up; paths of one table are usually the same length).
    A batch is a list of rows, or :class:`ColumnCells`."""
    right = set(right)
    widths = [len(h) for h in headers]
    out = env.stdout
    started = False
    for rows in batches:
        if not isinstance(rows, list):  # ColumnCells: a batch held as columns
            widths = [max(w, c) for w, c in zip(widths, rows.widths())]
            if not started:
                out.write("  ".join(h.rjust(w) if h in right else h.ljust(w)
                                    for h, w in zip(headers, widths)).rstrip() + "\n")
                started = True
            text = rows.lines(widths, [h in right for h in headers])
            if text:
                out.write(text + "\n")
            continue
        _widen(widths, rows)

        def line(cells: list[str]) -> str:
            return _aligned(cells, widths, headers, right)

        if not started:
            out.write(line(headers) + "\n")
            started = True
        if rows:
            out.write("\n".join(line(r) for r in rows))
            out.write("\n")


# A table on a terminal fits its width (the console's, which honours COLUMNS). Each column is one
# of: an identifier or a number (``ids``, and every right-aligned column), never wrapped or cut; a
# path (``paths``), shown relative to ``base`` and shortened in the middle when it must be; or
# text, wrapped at word boundaries. Columns named in ``drop`` (the least important first) are left
# out while the table does not fit; ``--wide`` keeps every column and every path whole.
BOX_EDGES = 1  # the left edge of rich's default box
BOX_PER_COLUMN = 3  # a rule and a space of padding on each side
MIN_PATH = 24  # a path is not shortened below this (its head and its file name stay readable)
MIN_TEXT = 10
MAX_WORD = 20  # a word of text longer than this may be broken to fit
FLOOR = 8  # no path or text column is made narrower than this
ELLIPSIS = "\u2026"


def relative_path(path: str, base: str | None) -> str:
    """``path`` relative to ``base`` (a table location) when it lies below it, else as it is."""
    if base:
        root = base.rstrip("/") + "/"
        if path.startswith(root):
            return path[len(root):]
    return path


def shorten_middle(text: str, width: int) -> str:
    """``text`` in ``width`` characters: its head, an ellipsis and its tail (the file name, the
    part that tells files apart, keeps two thirds)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    tail = (width - 1) * 2 // 3
    return text[:width - 1 - tail] + ELLIPSIS + text[len(text) - tail:]


def _longest_word(text: str) -> int:
    return max((len(w) for w in text.split()), default=0)


@dataclasses.dataclass
class Fit:
    """Which columns a terminal table shows, and how wide each is."""

    keep: list[int]
    widths: dict[int, int]


def fit_columns(headers: list[str], rows: list[list[str]], width: int, *, ids: set[str], paths: set[str],
                drop: list[str], wide: bool) -> Fit:
    """The columns that fit in ``width`` and their widths (see above): identifiers at their full
    width, paths and text shrunk down to a minimum, lesser columns dropped while that is not
    enough; the space left goes to paths and text, up to their natural width."""
    n = len(headers)
    # a header wraps at its spaces, except over an identifier column (as wide as its values anyway)
    header_min = [len(h) if h in ids else _longest_word(h) for h in headers]
    natural = [max([len(headers[j]), *(len(r[j]) for r in rows)]) for j in range(n)]
    cells = [max([header_min[j], *(len(r[j]) for r in rows)]) for j in range(n)]
    # text wraps at its spaces: a word up to MAX_WORD long is never broken
    words = [max([_longest_word(h), *(_longest_word(r[j]) for r in rows)]) for j, h in enumerate(headers)]
    minimum = []
    for j, h in enumerate(headers):
        if h in ids:
            minimum.append(cells[j])
        elif h in paths:
            minimum.append(max(header_min[j], min(cells[j], MIN_PATH)))
        else:
            minimum.append(max(header_min[j], min(cells[j], max(MIN_TEXT, min(words[j], MAX_WORD)))))
    keep = list(range(n))
    if wide:
        return Fit(keep, {j: natural[j] for j in keep})

    def room(cols: list[int]) -> int:
        return width - BOX_EDGES - BOX_PER_COLUMN * len(cols)

    for name in drop:
        if sum(minimum[j] for j in keep) <= room(keep):
            break
        keep = [j for j in keep if headers[j] != name]
    if sum(minimum[j] for j in keep) > room(keep):
        # still too wide: the headers of identifier columns wrap at their spaces too, then the
        # widest path or text column gives up a character at a time, down to FLOOR
        for j in keep:
            if headers[j] in ids:
                minimum[j] = max([_longest_word(headers[j]), *(len(r[j]) for r in rows)])
        excess = sum(minimum[j] for j in keep) - room(keep)
        while excess > 0:
            flexible = [j for j in keep if headers[j] not in ids and minimum[j] > FLOOR]
            if not flexible:
                break  # only identifiers left: rich squeezes them as a last resort
            widest = max(flexible, key=lambda j: minimum[j])
            minimum[widest] -= 1
            excess -= 1
    widths = {j: minimum[j] for j in keep}
    spare = room(keep) - sum(widths.values())
    # paths first (whole paths are the most useful), then text, each up to its natural width
    for group in ([j for j in keep if headers[j] in paths], [j for j in keep if headers[j] not in paths]):
        for j in group:
            if spare <= 0:
                break
            extra = min(spare, natural[j] - widths[j])
            widths[j] += extra
            spare -= extra
    return Fit(keep, widths)


def print_table(env: Env, headers: list[str], rows: list[list[str]], *, title: str | None = None,
                right: Iterable[str] = frozenset(), empty: str | None = None, ids: Iterable[str] = frozenset(),
                paths: Iterable[str] = frozenset(), base: str | None = None, drop: Iterable[str] = ()) -> None:
    """A table with a header: rich on a terminal, fitted to its width (see :func:`fit_columns`);
    plain columns otherwise, every column and every path whole (one record a line)."""
    right = set(right)
    if use_plain(env, len(rows)):
        if title:
            env.stdout.write(title + "\n")
        if not rows and empty is not None:
            env.stdout.write(f"  {empty}\n")
            return
        plain_table(env, headers, rows, right=right)
        return
    from rich.table import Table  # rich: on a terminal only
    from rich.text import Text

    paths = set(paths)
    if base:
        cols = [j for j, h in enumerate(headers) if h in paths]
        rows = [[relative_path(c, base) if j in cols else c for j, c in enumerate(r)] for r in rows]
        title = f"{title} (paths under {base})" if title else f"paths under {base}"
    console = env.console()
    fit = fit_columns(headers, rows, console.width, ids=set(ids) | right, paths=paths, drop=list(drop),
                      wide=env.wide)
    if env.wide:
        console = env.console(width=max(console.width, sum(fit.widths.values()) + BOX_EDGES
                                        + BOX_PER_COLUMN * len(fit.keep)))
    if title:  # its own line, as wide as the terminal (a rich title wraps to the table's width)
        console.print(Text(title))
    t = Table()
    for j in fit.keep:
        h = headers[j]
        # an identifier's or path's cell fits its width (fit_columns and shorten_middle see to it),
        # so only a header wraps there, at its spaces
        fixed = h in right or h in ids or h in paths
        t.add_column(h, justify="right" if h in right else "left", width=fit.widths[j],
                     overflow="ellipsis" if fixed else "fold")
    for r in rows:
        t.add_row(*(Text(shorten_middle(r[j], fit.widths[j]) if headers[j] in paths else r[j]) for j in fit.keep))
    if not rows and empty is not None:
        t.add_row(Text(empty, style="dim"), *([""] * (len(fit.keep) - 1)))
    console.print(t)
    dropped = [headers[j] for j in range(len(headers)) if j not in fit.keep]
    if dropped:
        console.print(Text(f"({', '.join(dropped)} left out to fit the terminal: --wide shows them)", style="dim"))


def print_columns(env: Env, headers: list[str], columns: list[list[str]], *, right: Iterable[str] = frozenset(),
                  ids: Iterable[str] = frozenset(), drop: Iterable[str] = ()) -> None:
    """:func:`print_table` of the rows ``zip(*columns)``: plain columns straight from the columns
    (:func:`plain_columns`), rich on a terminal from the rows."""
    rows = len(columns[0]) if columns else 0
    if use_plain(env, rows) and rows:
        plain_columns(env, headers, columns, right=right)
        return
    print_table(env, headers, [list(r) for r in zip(*columns)], right=right, ids=ids, drop=drop)


def print_kv(env: Env, rows: list[tuple[str, Any]], *, title: str | None = None,
             paths: Iterable[str] = frozenset()) -> None:
    """Key-value pairs, keys aligned: never boxed, rich only for the bold keys on a terminal. The
    values of the keys in ``paths`` are shortened in the middle to fit the terminal, not wrapped."""
    cells = [[k, opt(v)] for k, v in rows]
    if not env.is_terminal():
        if title:
            env.stdout.write(title + "\n")
        plain_table(env, ["key", "value"], cells, show_header=False)
        return
    from rich.table import Table  # rich: on a terminal only
    from rich.text import Text

    paths = set(paths)
    console = env.console()
    key_width = max((len(k) for k, _ in cells), default=0)
    room = max(MIN_PATH, console.width - key_width - 2)  # the columns are two spaces apart
    t = Table(title=title, show_header=False, title_justify="left", box=None, pad_edge=False)
    t.add_column(style="bold", no_wrap=True)
    t.add_column(overflow="fold")  # long text wraps; never cut to "..."
    for k, v in cells:
        t.add_row(Text(k), Text(shorten_middle(v, room) if k in paths and not env.wide else v))
    console.print(t)


@dataclasses.dataclass
class Node:
    """A line of a text tree and what hangs below it. Each of ``children`` is a run: nodes drawn
    one under the other at one indentation, the first after a guide (``|--``); a run's line
    follows the line above it (a snapshot's parent), and hangs its own children below itself."""

    line: Line
    children: list[list["Node"]] = dataclasses.field(default_factory=list)


def print_tree(env: Env, title: str, runs: list[list[Node]]) -> None:
    """A rich Tree on a terminal; an indented ASCII tree (``|--``, ``` `-- ```) when piped."""
    if not env.is_terminal():
        out = env.stdout
        out.write(title + "\n")
        # (run, index of the next node, prefix of its first line, prefix of the others)
        stack: list[tuple[list[Node], int, str, str]] = []

        def push(children: list[list[Node]], prefix: str) -> None:
            for i in range(len(children) - 1, -1, -1):
                last = i == len(children) - 1
                stack.append((children[i], 0, prefix + ("`-- " if last else "|-- "), prefix + ("    " if last else "|   ")))

        push(runs, "")
        while stack:  # depth first, without recursion
            run, j, first, rest = stack.pop()
            if j == len(run):
                continue
            node = run[j]
            out.write((first if j == 0 else rest) + "".join(t for t, _ in node.line) + "\n")
            stack.append((run, j + 1, first, rest))  # the run goes on below this node's children
            push(node.children, rest)
        return
    from rich.console import Group  # rich: on a terminal only
    from rich.tree import Tree

    def renderable(run: list[Node]) -> Any:
        parts = []
        for node in run:
            if node.children:
                t = Tree(_rich_text(node.line))
                for child in node.children:
                    t.add(renderable(child))
                parts.append(t)
            else:
                parts.append(_rich_text(node.line))
        return parts[0] if len(parts) == 1 else Group(*parts)

    tree = Tree(title)
    for run in runs:
        tree.add(renderable(run))
    env.console().print(tree)
