"""``icectl files``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.output import render
from icectl.cli.session import open_table
from icectl.cli.views.files import FileList
from icectl.errors import UsageError
from icectl.ops.inspect.files import list_files

CONTENT_KINDS = ("data", "position-deletes", "equality-deletes", "deletion-vector")


def files(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE, a table location, or a metadata.json path.")],
    snapshot: Annotated[Optional[int], typer.Option("--snapshot", help="List the files of this snapshot id.")] = None,
    ref: Annotated[Optional[str], typer.Option("--ref", help="List the files of this branch or tag.")] = None,
    content: Annotated[Optional[str], typer.Option("--content", help="Only files of this kind: data, position-deletes, "
                                                   "equality-deletes, deletion-vector.")] = None,
) -> None:
    """List the live content files (data and deletes) of the current snapshot, a snapshot or a ref."""
    env: Env = ctx.obj
    if content is not None and content not in CONTENT_KINDS:
        raise UsageError(f"--content must be one of {', '.join(CONTENT_KINDS)}, not {content!r}")
    t = open_table(env, table)
    render(env, FileList(list_files(t, snapshot_id=snapshot, ref=ref, content=content), t.metadata.location))
