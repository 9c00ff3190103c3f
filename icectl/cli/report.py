"""``icectl report``."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.output import render
from icectl.cli.session import locate_table
from icectl.cli.views.report import TERMINAL_CHARTS, ReportView
from icectl.cli.views.report_html import write_report_html
from icectl.cli.views.validate import validation_view
from icectl.ops.catalogs import open_table
from icectl.ops.inspect.profile import profile_table
from icectl.ops.inspect.validation import check_table


def report(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE, a table location, or a metadata.json path.")],
    html: Annotated[Optional[Path], typer.Option(
        "--html", metavar="FILE", dir_okay=False,
        help="Write one self-contained HTML page (no network needed to open it): the charts, the snapshot timeline "
             "with refs, partition skew and the validate findings, for an incident ticket. Needs the extra "
             "icectl[report] (matplotlib).")] = None,
) -> None:
    """Show a table's shape as charts: data file sizes against the target size, snapshots and data added per
    day, partition sizes and the delete load per partition; with --html, write them as a page."""
    env: Env = ctx.obj
    catalog, ident = locate_table(env, table)
    profile = profile_table(open_table(catalog, ident))
    if html is None:
        render(env, ReportView(profile.table, None, list(TERMINAL_CHARTS), profile, None))
        return
    validation = validation_view(check_table(catalog, ident))
    charts = write_report_html(html, profile, validation)
    render(env, ReportView(profile.table, str(html), charts, profile, validation))
