"""What ``files`` prints."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, num, opt, print_table, say, text_renderer

if TYPE_CHECKING:
    from icectl.ops.inspect import FileRow


@dataclass
class FileList:
    json_root: ClassVar[str] = "rows"  # streamed: one file per line
    rows: list[FileRow]


FILE_COLUMNS = ["content", "path", "partition", "records", "size", "data seq", "file seq"]


@text_renderer(FileList)
def _files_text(env: Env, result: FileList) -> None:
    rows = result.rows
    if not rows:
        say(env, "no live files")
        return
    cells = [[r.content, r.file_path, ", ".join(f"{k}={v}" for k, v in r.partition_display.items()),
              num(r.record_count), fmt_bytes(r.file_size_in_bytes), opt(r.data_sequence_number),
              opt(r.file_sequence_number)] for r in rows]
    print_table(env, FILE_COLUMNS, cells, right={"records", "size", "data seq", "file seq"})
    total = sum(r.file_size_in_bytes for r in rows)
    say(env, f"{len(rows):,} files, {sum(r.record_count for r in rows if r.content == 'data'):,} data records, "
             f"{fmt_bytes(total)}")
