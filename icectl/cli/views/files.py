"""What ``files`` prints."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Iterable, Iterator

from icectl.cli.context import Env
from icectl.cli.output import BATCH, fmt_bytes, head, num, opt, plain_table_stream, print_table, say, text_renderer

if TYPE_CHECKING:
    from icectl.ops.inspect.files import FileRow


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


FILE_COLUMNS = ["content", "path", "partition", "records", "size", "data seq", "file seq"]
RIGHT = {"records", "size", "data seq", "file seq"}


@text_renderer(FileList)
def _files_text(env: Env, result: FileList) -> None:
    rows = iter(result.rows)
    first = head(rows)
    if not first:
        say(env, "no live files")
        return
    totals = [0, 0, 0]  # files, data records, bytes

    def cells(batch: list[FileRow]) -> list[list[str]]:
        totals[0] += len(batch)
        totals[1] += sum(r.record_count for r in batch if r.content == "data")
        totals[2] += sum(r.file_size_in_bytes for r in batch)
        return [[r.content, r.file_path, ", ".join(f"{k}={v}" for k, v in r.partition_display.items()),
                 num(r.record_count), fmt_bytes(r.file_size_in_bytes), opt(r.data_sequence_number),
                 opt(r.file_sequence_number)] for r in batch]

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
