"""What ``refs``, ``rollback``, ``cherry-pick``, ``branch ...`` and ``tag ...`` print."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from icectl.cli.context import Env
from icectl.cli.output import say, text_renderer
from icectl.cli.views.common import print_refs
from icectl.ops.inspect.describe import RefRow

if TYPE_CHECKING:
    from icectl.ops.recover.refs import RefImpact


@dataclass
class RefChange:
    """A change to the table's refs (rollback, cherry-pick, branch and tag commands): the refs
    before and after, the new current snapshot, and for a branch that moves, what it gains and
    loses (``refs_after`` maps a ref to null where the commit creates a new snapshot)."""

    table: str
    action: str
    dry_run: bool
    applied: bool
    metadata_location: str | None  # the committed metadata file; None until committed
    refs_before: dict[str, int]
    refs_after: dict[str, int | None]
    current_snapshot_id: int | None
    impact: RefImpact | None = None
    # Each commit sent (or, before it, to send): the REST spec's TableRequirements and
    # TableUpdates, {"requirements": [...], "updates": [...]}. A snapshot that only the commit
    # writes is null until then.
    commits: list[dict] = field(default_factory=list)


@text_renderer(RefChange)
def _ref_change_text(env: Env, ch: RefChange) -> None:
    if ch.applied:
        say(env, f"committed {ch.metadata_location}")  # the plan was shown before asking
        return
    say(env, f"{ch.table}: {ch.action}{' (dry run: nothing committed)' if ch.dry_run else ''}")
    for n in sorted(set(ch.refs_before) | set(ch.refs_after)):
        b, a = ch.refs_before.get(n), ch.refs_after.get(n)
        if b != a:
            to = a if a is not None else "(a new snapshot)" if n in ch.refs_after else "(dropped)"
            say(env, f"  {n}: {b if b is not None else '(none)'} -> {to}")
    i = ch.impact
    if i is not None:
        say(env, f"  snapshots leaving {i.branch}'s history: {len(i.leaving_history)}"
                 + (f" ({', '.join(map(str, i.leaving_history[:10]))}{'...' if len(i.leaving_history) > 10 else ''})"
                    if i.leaving_history else ""))
        if i.joining_history:
            say(env, f"  snapshots joining its history: {len(i.joining_history)}")
        say(env, f"  data files: +{i.data_files_added} / -{i.data_files_removed}; records: +{i.records_added} / "
                 f"-{i.records_removed}")


@dataclass
class RefList:
    json_root: ClassVar[str] = "rows"
    rows: list[RefRow]


@text_renderer(RefList)
def _refs_text(env: Env, result: RefList) -> None:
    print_refs(env, result.rows)
