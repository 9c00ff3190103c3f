"""``icectl diff``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.output import render
from icectl.cli.session import open_table
from icectl.cli.views import diff as _view  # noqa: F401  (registers the text renderer)
from icectl.ops.inspect.diff import diff as table_diff

SIDE_HELP = ("a snapshot id, a branch or tag, a time (ISO 8601, epoch milliseconds, or an age with its unit: 2h), "
             "or a metadata file (a path, its file name, or vN for version N); prefix with snapshot:, ref:, time: or metadata: when ambiguous")


def diff(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE, a table location, or a metadata.json path.")],
    a: Annotated[str, typer.Argument(metavar="A", help=f"The state to compare from: {SIDE_HELP}.")],
    b: Annotated[str, typer.Argument(metavar="B", help=f"The state to compare to: {SIDE_HELP}.")],
    summary: Annotated[bool, typer.Option("--summary", help="Totals and metadata changes only: no partitions or "
                                          "files.")] = False,
) -> None:
    """Show what changed from A to B: files, records, schema, spec, properties, refs.

    What changed from A to B: data and delete files added and removed (by partition, with records and bytes),
    schema, partition spec, sort order, property and ref changes."""
    env: Env = ctx.obj
    render(env, table_diff(open_table(env, table), a, b, summary_only=summary))
