"""``icectl profile``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.output import render
from icectl.cli.session import open_table
from icectl.cli.views.report import TERMINAL_CHARTS, ProfileView
from icectl.ops.inspect.profile import profile_table


def profile(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE, a table location, or a metadata.json path.")],
) -> None:
    """Show a table's shape as charts: file sizes, activity per day, partition load.

    Data file sizes against the target, snapshots and data added per day, partition sizes and the
    delete load per partition.

    Reads the metadata and the current snapshot's manifests (no data file). icectl report --html draws the same
    charts, and more, on a page.
    """
    env: Env = ctx.obj
    p = profile_table(open_table(env, table))
    render(env, ProfileView(p.table, list(TERMINAL_CHARTS), p))
