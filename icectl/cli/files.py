"""``icectl files``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, ClassVar, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, num, opt, print_table, render, say, text_renderer

if TYPE_CHECKING:
    from icectl.engine.inspect import FileRow

CONTENT_KINDS = ("data", "position-deletes", "equality-deletes", "deletion-vector")


@dataclass
class FileList:
    json_root: ClassVar[str] = "rows"  # streamed: one file per line
    rows: list[FileRow]


def files(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE, a table location, or a metadata.json path.")],
    snapshot: Annotated[Optional[int], typer.Option("--snapshot", help="List the files of this snapshot id.")] = None,
    ref: Annotated[Optional[str], typer.Option("--ref", help="List the files of this branch or tag.")] = None,
    content: Annotated[Optional[str], typer.Option("--content", help="Only files of this kind: data, position-deletes, "
                                                   "equality-deletes, deletion-vector.")] = None,
) -> None:
    """List the live content files (data and deletes) of the current snapshot, a snapshot or a ref."""
    from icectl.engine.inspect import list_files
    from icectl.errors import UsageError

    env: Env = ctx.obj
    if content is not None and content not in CONTENT_KINDS:
        raise UsageError(f"--content must be one of {', '.join(CONTENT_KINDS)}, not {content!r}")
    render(env, FileList(list_files(env.open_table(table), snapshot_id=snapshot, ref=ref, content=content)))


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


def register(app: typer.Typer) -> None:
    app.command("files")(files)
