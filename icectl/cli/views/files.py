"""What ``files`` prints. A listing read by polars is rendered column by column (JSON rows and
table lines built by polars expressions, a manifest's rows at a time), with no Python object per
row; rows read entry by entry are rendered one by one. Both give the same text."""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from typing import Any, ClassVar, Iterable, Iterator

import polars as pl  # the listing's frames are polars' (files is the one command that loads this module)

from icectl.cli.context import Env
from icectl.cli.output import (BATCH, fmt_bytes, head, json_text, num, nums, opt, plain_table_stream,
                               print_table, row_texts, say, text_renderer)
from icectl.ops.inspect.files import FRAME_COLUMNS, FileFrame, FileListing, FileRow

# A character a JSON string holds as it is (printable ASCII but the quote and the backslash):
# a string with any other goes through the standard encoder, which escapes it.
NEEDS_ESCAPE = r"[^\x20\x21\x23-\x5b\x5d-\x7e]"
STRING_COLUMNS = ("content", "file_path", "file_format", "status", "referenced_data_file")
ESCAPABLE = ("file_path", "file_format", "referenced_data_file")  # content and status: the listing's own words


@dataclass
class FileList:
    json_root: ClassVar[str] = "rows"  # streamed: one file per line
    rows: Iterable[FileRow]  # a list, or an iterator consumed as it is printed (millions of files)
    location: str | None = field(default=None, repr=False)  # the table's: paths are shown relative to it

    @staticmethod
    def json_row(r: FileRow) -> dict[str, Any] | None:
        """A row's JSON object (its fields but partition_display), or None when a partition value
        is a float (the standard encoder writes 1e+16 where msgspec writes 1e16)."""
        for v in r.partition.values():
            if type(v) is float:
                return None
        d = dict(r.__dict__)
        del d["partition_display"]
        return d

    def json_texts(self, sep: str) -> Iterator[tuple[bytes, int]] | None:
        """Runs of rows' compact JSON texts (ASCII bytes) joined by ``sep``, and how many rows each holds (see
        :func:`icectl.cli.output.write_json`); None for rows that are not a FileListing."""
        if not isinstance(self.rows, FileListing):
            return None
        return _json_runs(self.rows, sep)


def _json_runs(listing: FileListing, sep: str) -> Iterator[tuple[bytes, int]]:
    texts = row_texts(FileList)
    partitions = Partitions(listing, lambda json_form, human: json_text(json_form))
    for chunk in listing.chunks():
        if isinstance(chunk, list):
            for i in range(0, len(chunk), BATCH):
                batch = chunk[i:i + BATCH]
                yield texts(batch, sep).encode("ascii"), len(batch)
            continue
        for frame in chunk.frame.iter_slices(BATCH):
            yield _json_rows(pl, frame, partitions.series(pl), listing, sep), frame.height


class Partitions:
    """The text of each of a listing's partitions (``render(json form, human form)``), as a polars
    Series indexed as ``listing.partitions``: each partition rendered once."""

    def __init__(self, listing: FileListing, render: Any):
        self.listing = listing
        self.render = render
        self.texts: list[str] = []
        self._series: Any = None

    def series(self, pl: Any) -> Any:
        known = self.listing.partitions
        if self._series is None or len(self.texts) < len(known):
            self.texts.extend(self.render(j, h) for j, h in known[len(self.texts):])
            self._series = pl.Series(self.texts, dtype=pl.String)
        return self._series


def _json_rows(pl: Any, frame: Any, partitions: Any, listing: FileListing, sep: str) -> bytes:
    """The rows of a FileFrame as the standard encoder's compact texts of their FileRows' JSON
    objects, joined by ``sep``, built column-wise; a row with a string that needs an escape is
    encoded in Python. A column with no null (most) is spliced in as it is, one that is all null
    (v4's fields in a v2 table) is the literal ``null``: the fewer pieces, the less is copied."""
    pieces: list[Any] = []
    text: list[str] = []  # literal text not yet added to pieces

    def literal(s: str) -> None:
        text.append(s)

    def flush() -> None:
        if text:
            pieces.append(pl.lit("".join(text)))
            text.clear()

    def value(e: Any) -> None:
        flush()
        pieces.append(e)

    n = frame.height
    for i, name in enumerate(FRAME_COLUMNS):
        literal(("{" if i == 0 else ", ") + json_text(name) + ": ")
        col = pl.col(name)
        nulls = frame.get_column(name).null_count()
        if nulls == n:
            literal("null")
        elif name == "partition":
            value(pl.lit(partitions).gather(col))
        elif name in STRING_COLUMNS:
            if nulls:
                value(pl.concat_str([pl.lit('"'), col, pl.lit('"')]).fill_null("null"))
            else:
                literal('"')
                value(col)
                literal('"')
        elif name == "equality_ids":
            e = pl.concat_str([pl.lit("["), col.list.eval(pl.element().cast(pl.String).fill_null("null"))
                               .list.join(", "), pl.lit("]")])
            value(e.fill_null("null") if nulls else e)
        else:
            value(col.cast(pl.String).fill_null("null") if nulls else col.cast(pl.String))
    literal("}" + sep)
    flush()
    rows = frame.select(pl.concat_str(pieces)).to_series()
    # one scan of each string column joined whole (a scan a row costs ten times more), then,
    # only if it finds one, the rows that hold an escape
    escapable = [pl.col(c) for c in ESCAPABLE if frame.get_column(c).null_count() < n]
    if escapable and frame.select(pl.any_horizontal([c.str.join("").str.contains(NEEDS_ESCAPE)
                                                     for c in escapable])).item():
        escape = frame.select(pl.any_horizontal([c.str.contains(NEEDS_ESCAPE) for c in escapable])
                              .fill_null(False)).to_series()
        at = escape.arg_true()
        known = listing.partitions
        texts = []
        for row in frame[at].iter_rows():
            d = dict(zip(FRAME_COLUMNS, row))
            d["partition"] = known[d["partition"]][0]
            texts.append(json_text(d) + sep)
        rows = rows.scatter(at, pl.Series(texts, dtype=pl.String))
    if not n:
        return b""
    # each row ends with sep: the rows joined, less the last sep, are the run (ASCII: every piece
    # is, the encoder writes \\u escapes). Joined by polars, not exported to Arrow: pyarrow's
    # import alone costs more than the copy.
    joined = rows.str.join("").item()
    return joined[:len(joined) - len(sep)].encode("ascii")


FILE_COLUMNS = ["content", "path", "partition", "records", "size", "data seq", "file seq"]
RIGHT = {"records", "size", "data seq", "file seq"}


@text_renderer(FileList)
def _files_text(env: Env, result: FileList) -> None:
    if isinstance(result.rows, FileListing):
        _listing_text(env, result.rows, result.location)
        return
    rows = iter(result.rows)
    first = head(rows)
    if not first:
        say(env, "no live files")
        return
    totals = [0, 0, 0]  # files, data records, bytes

    def cells(batch: list[FileRow]) -> list[list[str]]:
        return _cells(batch, totals)

    if len(first) < BATCH:  # the whole listing: one table, rich on a terminal when it is short
        print_table(env, FILE_COLUMNS, cells(first), right=RIGHT, paths={"path"}, base=result.location,
                    ids={"content", "partition"}, drop=["file seq", "data seq", "records", "partition", "content"])
    else:
        def batches() -> Iterator[list[list[str]]]:
            yield cells(first)
            while True:
                batch = head(rows)
                if not batch:
                    return
                yield cells(batch)

        plain_table_stream(env, FILE_COLUMNS, batches(), right=RIGHT)
    say(env, f"{totals[0]:,} files, {totals[1]:,} data records, {fmt_bytes(totals[2])}")


def _cells(batch: list[FileRow], totals: list[int]) -> list[list[str]]:
    totals[0] += len(batch)
    totals[1] += sum(r.record_count for r in batch if r.content == "data")
    totals[2] += sum(r.file_size_in_bytes for r in batch)
    return [[r.content, r.file_path, ", ".join(f"{k}={v}" for k, v in r.partition_display.items()),
             num(r.record_count), fmt_bytes(r.file_size_in_bytes), opt(r.data_sequence_number),
             opt(r.file_sequence_number)] for r in batch]


def _listing_text(env: Env, listing: FileListing, location: str | None) -> None:
    """The table of a FileListing: what :func:`_files_text` prints for FileRows, the same
    batches of ``BATCH`` rows, each drawn from columns when it holds no row read entry by entry."""
    batches = _batches(listing.chunks())
    first = next(batches, None)
    if first is None:
        say(env, "no live files")
        return
    totals = [0, 0, 0]  # files, data records, bytes
    partitions = Partitions(listing, lambda json_form, human: ", ".join(f"{k}={v}" for k, v in human.items()))

    def cells(batch: list[Any]) -> list[list[str]] | FrameCells:
        if any(isinstance(piece, list) for piece in batch):
            return _cells([r for piece in batch for r in listing.rows_of(piece)], totals)
        frame = pl.concat([piece.frame for piece in batch]) if len(batch) > 1 else batch[0].frame
        totals[0] += frame.height
        data = frame.filter(pl.col("content") == "data")
        totals[1] += data.get_column("record_count").sum() or 0
        totals[2] += frame.get_column("file_size_in_bytes").sum() or 0
        return FrameCells(pl, frame, partitions.series(pl))

    if sum(_height(piece) for piece in first) < BATCH:  # the whole listing: one table, rich on a terminal when it is short
        rows = _cells([r for piece in first for r in listing.rows_of(piece)], totals)
        print_table(env, FILE_COLUMNS, rows, right=RIGHT, paths={"path"}, base=location,
                    ids={"content", "partition"}, drop=["file seq", "data seq", "records", "partition", "content"])
    else:
        plain_table_stream(env, FILE_COLUMNS, (cells(b) for b in chain([first], batches)), right=RIGHT)
    say(env, f"{totals[0]:,} files, {totals[1]:,} data records, {fmt_bytes(totals[2])}")


def _height(piece: Any) -> int:
    return len(piece) if isinstance(piece, list) else piece.frame.height


def _batches(chunks: Iterator[Any]) -> Iterator[list[Any]]:
    """The chunks of a listing cut and joined into batches of ``BATCH`` rows (the last fewer):
    a batch is a list of pieces, each a FileFrame or a list of FileRow."""
    batch: list[Any] = []
    room = BATCH
    for chunk in chunks:
        while True:
            n = _height(chunk)
            if n <= room:
                batch.append(chunk)
                room -= n
                break
            head_ = chunk[:room] if isinstance(chunk, list) else FileFrame(chunk.frame.slice(0, room))
            chunk = chunk[room:] if isinstance(chunk, list) else FileFrame(chunk.frame.slice(room))
            batch.append(head_)
            room = 0
            yield batch
            batch, room = [], BATCH
        if room == 0:
            yield batch
            batch, room = [], BATCH
    if batch:
        yield batch


class FrameCells:
    """The cells of a batch of a FileFrame's rows (:class:`icectl.cli.output.ColumnCells`), built
    by polars as :func:`_cells` builds them: records with thousands separators, sizes in binary
    units (:func:`icectl.expr.size.human_size`'s text, computed in integers), and each line
    padded and stripped on the right as :func:`icectl.cli.output.plain_table` writes it."""

    def __init__(self, pl: Any, frame: Any, partitions: Any):
        self.pl = pl
        opt_text = [pl.col(c).cast(pl.String).fill_null("") for c in ("data_sequence_number", "file_sequence_number")]
        # a line ends in blanks only where its last cell (a file sequence number) is empty
        self.blank_end = frame.get_column("file_sequence_number").null_count() > 0
        self.cells = frame.select(pl.col("content"), pl.col("file_path"),
                                  pl.lit(partitions).gather(pl.col("partition")).alias("partition"),
                                  pl.col("record_count"), pl.col("file_size_in_bytes"), *opt_text)
        records = self.cells.get_column("record_count")
        sizes = self.cells.get_column("file_size_in_bytes")
        self.cells = self.cells.with_columns(
            _thousands(pl, records).alias("record_count"), _sizes(pl, sizes).alias("file_size_in_bytes"))

    def widths(self) -> list[int]:
        pl = self.pl
        return [w or 0 for w in self.cells.select(pl.all().str.len_chars().max()).row(0)]

    def lines(self, widths: list[int], right: list[bool]) -> str:
        pl = self.pl
        pad = [pl.col(c).str.pad_start(w) if r else pl.col(c).str.pad_end(w)
               for c, w, r in zip(self.cells.columns, widths, right)]
        # the last cells (sizes, sequence numbers) end in no blank: only padding is stripped, and
        # a right-aligned last column with no empty cell has none
        line = pl.concat_str(pad, separator="  ")
        if self.blank_end or not right[-1]:
            line = line.str.strip_chars_end(" ")
        return self.cells.select(line.str.join("\n")).item()


def _thousands(pl: Any, values: Any) -> Any:
    """:func:`icectl.cli.output.num` of each value (``1,234,567``; empty for null): Python's own
    formatting, which is faster than any string expression of polars found for it."""
    return pl.Series(nums(values.to_list()), dtype=pl.String)


def _sizes(pl: Any, values: Any) -> Any:
    """:func:`icectl.cli.output.fmt_bytes` of each value: ``n B`` below 1 KiB, else the size in the
    largest unit below 1024 (TiB at most) with one decimal, rounded as Python formats the float
    (half to even on its exact value, which is n / 1024**k when n < 2**53), ``.0`` dropped. The
    unit is picked first, so each value is divided and written once."""
    if (values.min() or 0) < 0 or (values.max() or 0) >= 2 ** 53:  # a sign or an inexact float: in Python
        return pl.Series([fmt_bytes(v) for v in values.to_list()], dtype=pl.String)
    n = pl.col("n")
    divisor, unit = pl.lit(1, dtype=pl.Int64), pl.lit("B")
    for k, name in enumerate(("KiB", "MiB", "GiB", "TiB"), start=1):
        d = 1024 ** k
        divisor = pl.when(n >= d).then(pl.lit(d, dtype=pl.Int64)).otherwise(divisor)
        unit = pl.when(n >= d).then(pl.lit(name)).otherwise(unit)
    # n < 1 KiB: the divisor is 1, so the tenths are n * 10 and the text is n
    q, r = (n * 10) // divisor, (n * 10) % divisor
    tenths = q + ((2 * r > divisor) | ((2 * r == divisor) & (q % 2 == 1))).cast(pl.Int64)
    decimal = pl.when(tenths % 10 != 0).then(pl.concat_str([pl.lit("."), (tenths % 10).cast(pl.String)]))
    text = pl.concat_str([(tenths // 10).cast(pl.String), decimal, pl.lit(" "), unit], ignore_nulls=True)
    return values.to_frame("n").select(pl.when(n.is_null()).then(pl.lit("?")).otherwise(text)).to_series()
