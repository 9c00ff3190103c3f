"""``icectl describe``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.output import render
from icectl.cli.session import locate_table, view_file_io
from icectl.cli.views import describe as _view  # noqa: F401 (registers the text renderer)
from icectl.cli.views.catalog_views import view_description
from icectl.ops.catalogs import LoadedView, open_table_or_view
from icectl.ops.inspect.describe import describe as describe_table
from icectl.ops.inspect.views import is_view_metadata_file, open_view_file


def describe(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE or NAMESPACE.VIEW, a table location, or a "
                                         "metadata.json path (a table's or a view's).")],
) -> None:
    """Describe a table (identity, schema, specs, sort orders, properties, refs, totals) or a view
    (versions, SQL per dialect, schema, default catalog and namespace, properties)."""
    env: Env = ctx.obj
    io = view_file_io(env, table)
    if io is not None and is_view_metadata_file(table, io):
        render(env, view_description(open_view_file(table, io)))
        return
    found = open_table_or_view(*locate_table(env, table))
    render(env, view_description(found) if isinstance(found, LoadedView) else describe_table(found))
