"""``icectl describe``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.output import render


def describe(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE, a table location, or a metadata.json path.")],
) -> None:
    """Describe a table: identity, schema, specs, sort orders, properties, refs, totals."""
    from icectl.cli.views.describe import table_description
    from icectl.ops.inspect import describe as describe_table

    env: Env = ctx.obj
    render(env, table_description(describe_table(env.open_table(table))))
