"""``icectl snapshots`` (a list, newest first) and ``icectl snapshots --tree`` (parents as a tree)."""
from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.output import render
from icectl.cli.session import open_table
from icectl.cli.views.snapshots import SnapshotList, snapshot_forest
from icectl.ops.inspect.snapshots import list_snapshots, snapshot_tree
from icectl.spec.metadata import every_snapshot_read


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Cycle collection off while a listing builds and renders its rows: a neglected table's
    100,000 snapshots make a few objects each, none in a cycle, and the collector's passes over
    them cost a sixth of the command (issue 26)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


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
    with no_cycle_collection():
        # every snapshot is read (a whole listing or the tree): each built as the load parses it
        # (a ref's history may be a few of them: built as read)
        with every_snapshot_read(tree or (ref is None and limit is None and since is None)):
            t = open_table(env, table)
        if tree:
            render(env, snapshot_forest(t.name, snapshot_tree(t), t.metadata))
        else:
            render(env, SnapshotList(list_snapshots(t, ref=ref, limit=limit, since=since)))
