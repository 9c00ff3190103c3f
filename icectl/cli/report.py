"""``icectl report``."""
from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.output import render
from icectl.cli.session import locate_table
from icectl.cli.views.report import ReportView
from icectl.cli.views.report_html import write_report_html
from icectl.cli.views.validate import validation_view
from icectl.ops.catalogs import open_table
from icectl.ops.inspect.profile import profile_table
from icectl.ops.inspect.validation import check_table


def report(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE, a table location, or a metadata.json path.")],
    html: Annotated[Path, typer.Option("--html", metavar="FILE", dir_okay=False,
                                       help="The HTML page to write (replaced if it exists).")],
) -> None:
    """Write a self-contained HTML page of a table's shape and findings, for a ticket.

    For an incident ticket: charts, the snapshot timeline with refs, partition skew and validate's
    findings.

    The page needs no network to open (no script, nothing loaded from elsewhere). It needs the extra
    icectl[report] (matplotlib). Exit 0 whatever validate found: the findings are on the page.
    """
    env: Env = ctx.obj
    catalog, ident = locate_table(env, table)
    profile = profile_table(open_table(catalog, ident))
    validation = validation_view(check_table(catalog, ident))
    charts = write_report_html(html, profile, validation)
    render(env, ReportView(profile.table, str(html), charts, profile, validation))
