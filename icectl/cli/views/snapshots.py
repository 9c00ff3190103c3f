"""What ``snapshots`` (a list, newest first) and ``snapshots --tree`` (parents as a tree) print."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar

from icectl.cli.context import Env
from icectl.cli.output import Line, Node, fmt_ts, nums, opts, print_columns, print_tree, say, text_renderer

if TYPE_CHECKING:
    from icectl.ops.inspect.snapshots import SnapshotRow, SnapshotTree
    from icectl.spec.metadata import TableMetadata


@dataclass
class SnapshotList:
    json_root: ClassVar[str] = "rows"
    rows: list[SnapshotRow]

    @staticmethod
    def json_row(r: SnapshotRow) -> dict[str, Any]:
        """A row's JSON object: its fields, all ints, strs, bools, None, a list of str and a dict of
        str (encoded by msgspec, a batch at a time)."""
        return r.__dict__


@dataclass
class TreeSnapshot:
    snapshot_id: int
    parent_snapshot_id: int | None
    sequence_number: int
    operation: str | None
    committed_at: str
    branches: list[str]  # the branches whose head this is
    tags: list[str]
    forks: list[Run]  # the runs that start at this snapshot's other children
    timestamp_ms: int = field(repr=False)


@dataclass
class Run:
    """Snapshots each the parent of the next. Where a snapshot has several children, the run goes
    on with the one in main's history (else the one with the most descendants) and the others
    start forks. Runs keep the JSON and the text shallow: a linear history of 5,000 snapshots, or
    one with a staged (WAP) snapshot beside every commit, nests no deeper than its side branches
    do (5,000 nested levels are more than Python's json or jq 1.6 can read)."""

    snapshots: list[TreeSnapshot]


@dataclass
class SnapshotForest:
    table: str = field(repr=False)
    roots: list[Run]


def snapshot_forest(name: str, st: SnapshotTree, md: TableMetadata) -> SnapshotForest:
    size: dict[int, int] = {}
    order = [r for r in st.roots]  # every snapshot, parents first
    for sid in order:
        order.extend(st.children.get(sid, []))
    for sid in reversed(order):
        size[sid] = 1 + sum(size[k] for k in st.children.get(sid, []))

    def node(sid: int) -> TreeSnapshot:
        r = st.rows[sid]
        kinds = {n: md.all_refs[n].ref_type for n in r.refs}
        return TreeSnapshot(sid, r.parent_snapshot_id, r.sequence_number, r.operation, r.committed_at,
                            [n for n in r.refs if kinds[n] == "branch"], [n for n in r.refs if kinds[n] == "tag"],
                            [], r.timestamp_ms)

    todo: list[tuple[TreeSnapshot, list[int]]] = []

    def run_from(sid: int) -> Run:
        run = Run([])
        while True:
            n = node(sid)
            run.snapshots.append(n)
            kids = st.children.get(sid, [])
            if not kids:
                return run
            on = max(kids, key=lambda k: (st.rows[k].in_main, size[k], -st.rows[k].sequence_number))
            todo.append((n, [k for k in kids if k != on]))
            sid = on

    roots = [run_from(r) for r in st.roots]
    while todo:  # no recursion: forks nest as deep as side branches of side branches go
        n, kids = todo.pop()
        n.forks.extend(run_from(k) for k in kids)
    return SnapshotForest(name, roots)


SNAPSHOT_COLUMNS = ["snapshot", "parent", "committed at (UTC)", "operation", "seq", "schema", "+files", "-files",
                    "+deletes", "-deletes", "+records", "-records", "refs", "main"]

# Left out first when the terminal is narrow (--wide shows them): what a snapshot changed, in detail
SNAPSHOT_DROP = ["-deletes", "+deletes", "-records", "-files", "schema", "+records", "+files", "main", "parent", "seq"]


@text_renderer(SnapshotList)
def _snapshots_text(env: Env, result: SnapshotList) -> None:
    rows = result.rows
    if not rows:
        say(env, "no snapshots")
        return

    def column(name: str) -> Iterator[Any]:
        return map(attrgetter(name), rows)

    # a column at a time (100,000 snapshots: no list of cells a row). committed_at is timestamp_ms
    # as millis_to_iso writes it (2026-01-31T12:00:00.000Z): the column is fmt_ts's text without
    # " UTC" (2026-01-31 12:00:00.000), not formatted a second time
    columns = [list(map(str, column("snapshot_id"))), opts(column("parent_snapshot_id")),
               [c[:-1].replace("T", " ", 1) for c in column("committed_at")], [o or "" for o in column("operation")],
               list(map(str, column("sequence_number"))), opts(column("schema_id")),
               nums(column("added_data_files")), nums(column("removed_data_files")),
               nums(column("added_delete_files")), nums(column("removed_delete_files")),
               nums(column("added_records")), nums(column("removed_records")),
               [", ".join(r) for r in column("refs")], ["yes" if m else "no" for m in column("in_main")]]
    print_columns(env, SNAPSHOT_COLUMNS, columns,
                  right={c for c in SNAPSHOT_COLUMNS if c.startswith(("+", "-", "seq", "schema"))},
                  ids={"snapshot", "parent", "committed at (UTC)", "refs"}, drop=SNAPSHOT_DROP)


def _tree_line(s: TreeSnapshot) -> Line:
    line: Line = [(str(s.snapshot_id), "bold"), (f" {s.operation or '?'} {fmt_ts(s.timestamp_ms)}", None)]
    marks = [f"branch {b}" for b in s.branches] + [f"tag {t}" for t in s.tags]
    if marks:
        line.append((f" ({', '.join(marks)})", "bold cyan"))
    return line


@text_renderer(SnapshotForest)
def _forest_text(env: Env, forest: SnapshotForest) -> None:
    if not forest.roots:
        say(env, "no snapshots")
        return

    def nodes(run: Run) -> list[Node]:
        return [Node(_tree_line(s), [nodes(f) for f in s.forks]) for s in run.snapshots]

    print_tree(env, f"snapshots of {forest.table}, oldest first (a line's parent is the line above it at its "
                    f"indentation)", [nodes(r) for r in forest.roots])
