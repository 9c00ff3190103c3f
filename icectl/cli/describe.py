"""``icectl describe``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.output import render
from icectl.cli.session import open_table
from icectl.cli.views import describe as _view  # noqa: F401 (registers the text renderer)
from icectl.ops.inspect.describe import describe as describe_table


def describe(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE, a table location, or a metadata.json path.")],
) -> None:
    """Describe a table: identity, schema, specs, sort orders, properties, refs, totals."""
    env: Env = ctx.obj
    render(env, describe_table(open_table(env, table)))
