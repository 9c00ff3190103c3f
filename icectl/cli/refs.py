"""``icectl rollback``, ``cherry-pick``, ``refs``, ``branch ...`` and ``tag ...``."""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any, Callable, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render

if TYPE_CHECKING:
    from icectl.cli.views.refs import RefChange

branch_app = typer.Typer(help="Create, drop, rename and fast-forward branches.", no_args_is_help=True)
tag_app = typer.Typer(help="Create and drop tags.", no_args_is_help=True)

TableArg = Annotated[str, typer.Argument(help="NAMESPACE.TABLE.")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Show the change; commit nothing.")]
MaxRefAge = Annotated[Optional[str], typer.Option("--max-ref-age", help="Drop the ref when its head is older than "
                                                  "this at expiry (7d, 36h, ms).")]
MaxSnapAge = Annotated[Optional[str], typer.Option("--max-snapshot-age", help="Branch: expire its snapshots older "
                                                   "than this (7d, 36h, ms).")]
MinKeep = Annotated[Optional[int], typer.Option("--min-snapshots-to-keep", help="Branch: always keep this many of "
                                                "its newest snapshots.", min=1)]


def _apply(env: Env, table_name: str, action: str, build: Callable[[Any], Any], *, yes: bool, dry_run: bool,
           impact: Callable[[Any, Any], Any] | None = None) -> None:
    """Plan (build against the current table), show, ask, commit with retry (re-validating)."""
    from icectl.ops.refs import plan_ref_change

    t = env.open_table(table_name)
    plan = plan_ref_change(t, build)
    new = plan.after
    before = {n: r.snapshot_id for n, r in t.metadata.all_refs.items()}
    after: dict[str, int | None] = {n: r.snapshot_id for n, r in new.all_refs.items()}
    change = _change(t, action, dry_run=dry_run, before=before, after=after, current=new.current_snapshot_id,
                     plan=plan, impact=impact(t, new) if impact else None)
    if plan.changes_nothing:  # already so (e.g. set to its own head): nothing to commit, as in Java
        change.action += ": nothing to change"
        render(env, change)
        return
    _show_ask_commit(env, plan, change, yes=yes)


def _change(t: Any, action: str, *, dry_run: bool, before: dict, after: dict, current: int | None, plan: Any,
            impact: Any = None) -> RefChange:
    from icectl.cli.views.refs import RefChange
    from icectl.table.transaction import sent_json, snapshot_commit_json

    sent = sent_json(t.metadata, plan.requirements(), plan.updates) if plan.updates is not None else \
        snapshot_commit_json(t.metadata, next(iter(n for n in after if after[n] is None), "main"))
    return RefChange(t.name, action, dry_run, False, None, before, after, current, impact, [sent])


def _show_ask_commit(env: Env, plan: Any, change: RefChange, *, yes: bool) -> None:
    """A dry run shows the change; otherwise show it, ask, commit with retry (planned again
    against a refreshed table) and show what was committed and what was sent."""
    from icectl.cli.confirm import confirm_plan
    from icectl.ops.refs import commit_ref_change

    if change.dry_run:
        render(env, change)
        return
    confirm_plan(env, change, f"{change.action}?", yes=yes)
    done = commit_ref_change(plan)
    md = done.table.metadata
    render(env, replace(change, applied=True, metadata_location=done.table.metadata_location,
                        refs_after={n: r.snapshot_id for n, r in md.all_refs.items()},
                        current_snapshot_id=md.current_snapshot_id, commits=[done.sent_json()]))


def rollback(
    ctx: typer.Context,
    table: TableArg,
    to_snapshot: Annotated[Optional[int], typer.Option("--to-snapshot", help="Roll back to this ancestor of the branch head.")] = None,
    to_timestamp: Annotated[Optional[str], typer.Option("--to-timestamp", help="Roll back to the latest ancestor "
                                                        "committed before this time (ISO, epoch ms, or an age: 2h).")] = None,
    set_current: Annotated[Optional[int], typer.Option("--set-current", help="Point the branch at any snapshot "
                                                       "(as set_current_snapshot).")] = None,
    branch: Annotated[str, typer.Option("--branch", help="Branch to move.")] = "main",
    yes: YesOpt = False,
    dry_run: DryRunOpt = False,
) -> None:
    """Roll a branch back to an earlier snapshot, or set it to any snapshot."""
    from icectl.ops import refs
    from icectl.ops.inspect import parse_time_ms
    from icectl.errors import UsageError

    env: Env = ctx.obj
    given = [x for x in (to_snapshot, to_timestamp, set_current) if x is not None]
    if len(given) != 1:
        raise UsageError("give exactly one of --to-snapshot, --to-timestamp, --set-current")
    if to_snapshot is not None:
        build, action = (lambda t: refs.rollback_to_snapshot(t.metadata, to_snapshot, branch=branch),
                         f"roll back {branch} to snapshot {to_snapshot}")
    elif set_current is not None:
        build, action = (lambda t: refs.set_current_snapshot(t.metadata, set_current, branch=branch),
                         f"set {branch} to snapshot {set_current}")
    else:
        ts = parse_time_ms(to_timestamp)  # type: ignore[arg-type]
        build, action = (lambda t: refs.rollback_to_timestamp(t.metadata, ts, branch=branch),
                         f"roll back {branch} to its state before {to_timestamp}")

    def impact(t: Any, new: Any) -> Any:
        return refs.ref_impact(t, branch, new.all_refs[branch].snapshot_id)

    _apply(env, table, action, build, yes=yes, dry_run=dry_run, impact=impact)


def cherry_pick(
    ctx: typer.Context,
    table: TableArg,
    snapshot: Annotated[int, typer.Argument(help="Snapshot id to apply (an append or dynamic overwrite, e.g. a "
                                            "staged WAP snapshot).")],
    branch: Annotated[str, typer.Option("--branch", help="Branch to apply it to.")] = "main",
    yes: YesOpt = False,
    dry_run: DryRunOpt = False,
) -> None:
    """Apply a snapshot's changes to a branch (Iceberg Java's cherrypick_snapshot rules)."""
    from icectl.ops import refs

    env: Env = ctx.obj
    t = env.open_table(table)
    action = f"cherry-pick snapshot {snapshot} onto {branch}"
    # Plan with every check but without writing: a new snapshot's manifests are written only by
    # the commit, so a dry run or a refusal leaves no files behind (and --yes writes them once).
    plan = refs.plan_cherry_pick(t, snapshot, branch=branch)
    before = {n: r.snapshot_id for n, r in t.metadata.all_refs.items()}
    after: dict[str, int | None] = dict(before)
    after[branch] = plan.after.all_refs[branch].snapshot_id if plan.after is not None else None
    current = plan.after.current_snapshot_id if plan.after is not None else (
        None if branch == "main" else t.metadata.current_snapshot_id)
    _show_ask_commit(env, plan, _change(t, action, dry_run=dry_run, before=before, after=after, current=current, plan=plan), yes=yes)


def list_refs(ctx: typer.Context, table: TableArg) -> None:
    """List branches and tags with their retention."""
    from icectl.cli.views.common import ref_views
    from icectl.cli.views.refs import RefList

    env: Env = ctx.obj
    render(env, RefList(ref_views(env.open_table(table).metadata)))


def _dur(text: str | None) -> int | None:
    from icectl.ops.refs import parse_duration_ms

    return parse_duration_ms(text)


@branch_app.command("create")
def branch_create(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Branch name.")],
                  snapshot: Annotated[Optional[int], typer.Option("--snapshot", help="Snapshot id (default: current).")] = None,
                  max_ref_age: MaxRefAge = None, max_snapshot_age: MaxSnapAge = None, min_snapshots_to_keep: MinKeep = None,
                  yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Create a branch at a snapshot."""
    from icectl.ops import refs

    _apply(ctx.obj, table, f"create branch {name}", lambda t: refs.create_ref(
        t.metadata, name, ref_type="branch", snapshot_id=snapshot, max_ref_age_ms=_dur(max_ref_age),
        max_snapshot_age_ms=_dur(max_snapshot_age), min_snapshots_to_keep=min_snapshots_to_keep), yes=yes, dry_run=dry_run)


@branch_app.command("drop")
def branch_drop(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Branch name.")],
                yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Drop a branch (never main). Its snapshots then expire under the table's rules."""
    from icectl.ops import refs

    _apply(ctx.obj, table, f"drop branch {name}", lambda t: refs.drop_ref(t.metadata, name, ref_type="branch"),
           yes=yes, dry_run=dry_run)


@branch_app.command("rename")
def branch_rename(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Branch to rename.")],
                  new_name: Annotated[str, typer.Argument(help="New name.")],
                  yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Rename a branch (never main)."""
    from icectl.ops import refs

    _apply(ctx.obj, table, f"rename branch {name} to {new_name}", lambda t: refs.rename_branch(t.metadata, name, new_name),
           yes=yes, dry_run=dry_run)


@branch_app.command("fast-forward")
def branch_fast_forward(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Branch to move.")],
                        to: Annotated[str, typer.Option("--to", help="Branch or tag whose head to move to.")],
                        yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Move a branch to the head of another ref that descends from it."""
    from icectl.ops import refs

    _apply(ctx.obj, table, f"fast-forward {name} to {to}", lambda t: refs.fast_forward(t.metadata, name, to),
           yes=yes, dry_run=dry_run,
           impact=lambda t, new: refs.ref_impact(t, name, new.all_refs[name].snapshot_id))


@branch_app.command("retain")
def branch_retain(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Branch name.")],
                  max_ref_age: MaxRefAge = None, max_snapshot_age: MaxSnapAge = None, min_snapshots_to_keep: MinKeep = None,
                  yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Change a branch's retention."""
    from icectl.ops import refs

    _apply(ctx.obj, table, f"set retention of branch {name}", lambda t: refs.set_retention(
        t.metadata, name, max_ref_age_ms=_dur(max_ref_age), max_snapshot_age_ms=_dur(max_snapshot_age),
        min_snapshots_to_keep=min_snapshots_to_keep), yes=yes, dry_run=dry_run)


@tag_app.command("create")
def tag_create(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Tag name.")],
               snapshot: Annotated[Optional[int], typer.Option("--snapshot", help="Snapshot id (default: current).")] = None,
               max_ref_age: MaxRefAge = None, yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Create a tag at a snapshot; expiry keeps it until its max ref age."""
    from icectl.ops import refs

    _apply(ctx.obj, table, f"create tag {name}", lambda t: refs.create_ref(
        t.metadata, name, ref_type="tag", snapshot_id=snapshot, max_ref_age_ms=_dur(max_ref_age)), yes=yes, dry_run=dry_run)


@tag_app.command("drop")
def tag_drop(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Tag name.")],
             yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Drop a tag."""
    from icectl.ops import refs

    _apply(ctx.obj, table, f"drop tag {name}", lambda t: refs.drop_ref(t.metadata, name, ref_type="tag"),
           yes=yes, dry_run=dry_run)


def register(app: typer.Typer) -> None:
    app.command("rollback")(rollback)
    app.command("cherry-pick")(cherry_pick)
    app.command("refs")(list_refs)
    app.add_typer(branch_app, name="branch")
    app.add_typer(tag_app, name="tag")
