"""``icectl snapshots``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.context import Env


def snapshots(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE, a table location, or a metadata.json path.")],
    ref: Annotated[Optional[str], typer.Option("--ref", help="Only the history of this branch or tag.")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", help="At most this many snapshots, newest first.",
                                                 min=0)] = None,
    since: Annotated[Optional[str], typer.Option("--since", help="Only snapshots committed at or after this time "
                                                 "(ISO timestamp, epoch ms, or an age such as 7d).")] = None,
    tree: Annotated[bool, typer.Option("--tree", help="Draw snapshots as a tree of parents, with branches and tags.")] = False,
) -> None:
    """List a table's snapshots, newest first."""
    from icectl.cli import render
    from icectl.cli.output import emit_json
    from icectl.ops.inspect import list_snapshots, snapshot_tree

    env: Env = ctx.obj
    t = env.open_table(table)
    if tree:
        st = snapshot_tree(t)
        if env.json:
            emit_json(env, render.tree_json(st))
        else:
            render.render_tree(env, st)
        return
    rows = list_snapshots(t, ref=ref, limit=limit, since=since)
    if env.json:
        emit_json(env, [render.snapshot_json(r) for r in rows])
    else:
        render.render_snapshots(env, rows)


def register(app: typer.Typer) -> None:
    app.command("snapshots")(snapshots)
