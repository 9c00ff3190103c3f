"""``icectl describe``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.context import Env


def describe(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE, a table location, or a metadata.json path.")],
) -> None:
    """Describe a table: identity, schema, specs, sort orders, properties, refs, totals."""
    from icectl.cli.render import describe_json, render_description
    from icectl.ops.inspect import describe as describe_table

    env: Env = ctx.obj
    d = describe_table(env.open_table(table))
    if env.json:
        from icectl.cli.output import emit_json

        emit_json(env, describe_json(d))
    else:
        render_description(env, d)


def register(app: typer.Typer) -> None:
    app.command("describe")(describe)
