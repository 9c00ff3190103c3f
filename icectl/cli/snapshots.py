"""``icectl snapshots`` (a list, newest first) and ``icectl snapshots --tree`` (parents as a tree)."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.output import render
from icectl.cli.session import open_table
from icectl.cli.views.snapshots import SnapshotList, snapshot_forest
from icectl.ops.inspect.snapshots import list_snapshots, snapshot_tree


def snapshots(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE, a table location, or a metadata.json path.")],
    ref: Annotated[Optional[str], typer.Option("--ref", help="Only the history of this branch or tag.")] = None,
    limit: Annotated[Optional[int], typer.Option("--limit", "-n", help="At most this many snapshots, newest first.",
                                                 min=0)] = None,
    since: Annotated[Optional[str], typer.Option("--since", help="Only snapshots committed at or after this time "
                                                 "(ISO 8601, epoch milliseconds, or an age with its unit: "
                                                 "7d).")] = None,
    tree: Annotated[bool, typer.Option("--tree", help="Draw snapshots as a tree of parents, with branches and "
                                       "tags (--ref, --limit and --since do not apply).")] = False,
) -> None:
    """List a table's snapshots, newest first."""
    env: Env = ctx.obj
    t = open_table(env, table)
    if tree:
        render(env, snapshot_forest(t.name, snapshot_tree(t), t.metadata))
    else:
        render(env, SnapshotList(list_snapshots(t, ref=ref, limit=limit, since=since)))
