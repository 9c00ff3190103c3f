"""``icectl rollback``, ``cherry-pick``, ``refs``, ``branch ...`` and ``tag ...``."""
from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Any, Optional

import typer

from icectl.cli.confirm import confirm_plan
from icectl.cli.context import Env
from icectl.cli.options import DryRunOpt, TableArg, YesOpt
from icectl.cli.output import render
from icectl.cli.session import open_table
from icectl.cli.views.refs import RefChange, RefList
from icectl.errors import UsageError
from icectl.expr.duration import describe_duration, parse_duration_ms
from icectl.expr.timestamp import parse_cutoff
from icectl.ops.recover import refs
from icectl.ops.inspect.describe import ref_list
from icectl.ops.recover.refs import Builder, RefCommit, commit_ref_change, plan_ref_change

branch_app = typer.Typer(help="Create, drop, rename and fast-forward branches.", no_args_is_help=True)
tag_app = typer.Typer(help="Create and drop tags.", no_args_is_help=True)

MaxRefAge = Annotated[Optional[str], typer.Option("--max-ref-age", help="Drop the ref when its head is older than "
                                                  "this at expiry: a duration with its unit (ms, s, m, h, d, w), "
                                                  "e.g. 365d.")]
MaxSnapAge = Annotated[Optional[str], typer.Option("--max-snapshot-age", help="Branch: expire its snapshots older "
                                                   "than this: a duration with its unit (ms, s, m, h, d, w), e.g. 3d.")]
MinKeep = Annotated[Optional[int], typer.Option("--min-snapshots-to-keep", help="Branch: always keep this many of "
                                                "its newest snapshots.", min=1)]


def _apply(env: Env, table_name: str, action: str, build: Builder, *, yes: bool, dry_run: bool,
           impact_on: str | None = None) -> None:
    """Plan (build against the current table), show, ask, commit with retry (re-validating);
    ``impact_on``: the branch whose gains and losses to show."""
    plan = plan_ref_change(open_table(env, table_name), build)
    change = _change(plan, action, dry_run=dry_run, impact_on=impact_on)
    if plan.changes_nothing:  # already so (e.g. set to its own head): nothing to commit, as in Java
        change.action += ": nothing to change"
        render(env, change)
        return
    _show_ask_commit(env, plan, change, yes=yes)


def _change(plan: RefCommit, action: str, *, dry_run: bool, impact_on: str | None = None) -> RefChange:
    return RefChange(plan.table.name, action, dry_run, False, None, plan.refs_before, plan.refs_after,
                     plan.current_snapshot_id, plan.impact(impact_on) if impact_on else None, [plan.planned_commit])


def _show_ask_commit(env: Env, plan: RefCommit, change: RefChange, *, yes: bool) -> None:
    """A dry run shows the change; otherwise show it, ask, commit with retry (planned again
    against a refreshed table) and show what was committed and what was sent."""
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
                                                        "committed before this time: ISO 8601 (no zone: UTC), epoch "
                                                        "milliseconds (13 digits), or an age with its unit (60h: 60 "
                                                        "hours ago).")] = None,
    set_current: Annotated[Optional[int], typer.Option("--set-current", help="Point the branch at any snapshot "
                                                       "(as set_current_snapshot).")] = None,
    branch: Annotated[str, typer.Option("--branch", help="Branch to move.")] = "main",
    yes: YesOpt = False,
    dry_run: DryRunOpt = False,
) -> None:
    """Roll a branch back to an earlier snapshot, or set it to any snapshot."""
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
        cutoff = parse_cutoff(to_timestamp, what="--to-timestamp")  # type: ignore[arg-type]
        build, action = (lambda t: refs.rollback_to_timestamp(t.metadata, cutoff.timestamp_ms, branch=branch),
                         f"roll back {branch} to its state {cutoff.describe()}")
    _apply(env, table, action, build, yes=yes, dry_run=dry_run, impact_on=branch)


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
    env: Env = ctx.obj
    action = f"cherry-pick snapshot {snapshot} onto {branch}"
    # Plan with every check but without writing: a new snapshot's manifests are written only by
    # the commit, so a dry run or a refusal leaves no files behind (and --yes writes them once).
    plan = refs.plan_cherry_pick(open_table(env, table), snapshot, branch=branch)
    _show_ask_commit(env, plan, _change(plan, action, dry_run=dry_run), yes=yes)


def list_refs(ctx: typer.Context, table: TableArg) -> None:
    """List branches and tags with their retention."""
    env: Env = ctx.obj
    render(env, RefList(ref_list(open_table(env, table).metadata)))


def _retention(max_ref_age: str | None, max_snapshot_age: str | None = None,
               min_snapshots_to_keep: int | None = None) -> tuple[dict[str, Any], str]:
    """The retention options in milliseconds (before the table is opened: a bad one is refused
    first), and in words for the plan: ``max snapshot age 3d (259200000 ms)``."""
    ref_age = None if max_ref_age is None else parse_duration_ms(max_ref_age, what="--max-ref-age")
    snap_age = None if max_snapshot_age is None else parse_duration_ms(max_snapshot_age, what="--max-snapshot-age")
    words = [f"{label} {describe_duration(ms)}" for label, ms in (("max ref age", ref_age),
                                                                   ("max snapshot age", snap_age)) if ms is not None]
    if min_snapshots_to_keep is not None:
        words.append(f"min snapshots to keep {min_snapshots_to_keep}")
    return ({"max_ref_age_ms": ref_age, "max_snapshot_age_ms": snap_age, "min_snapshots_to_keep": min_snapshots_to_keep},
            f" ({', '.join(words)})" if words else "")


@branch_app.command("create")
def branch_create(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Branch name.")],
                  snapshot: Annotated[Optional[int], typer.Option("--snapshot", help="Snapshot id (default: current).")] = None,
                  max_ref_age: MaxRefAge = None, max_snapshot_age: MaxSnapAge = None, min_snapshots_to_keep: MinKeep = None,
                  yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Create a branch at a snapshot."""
    retention, words = _retention(max_ref_age, max_snapshot_age, min_snapshots_to_keep)
    _apply(ctx.obj, table, f"create branch {name}{words}", lambda t: refs.create_ref(
        t.metadata, name, ref_type="branch", snapshot_id=snapshot, **retention), yes=yes, dry_run=dry_run)


@branch_app.command("drop")
def branch_drop(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Branch name.")],
                yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Drop a branch (never main). Its snapshots then expire under the table's rules."""
    _apply(ctx.obj, table, f"drop branch {name}", lambda t: refs.drop_ref(t.metadata, name, ref_type="branch"),
           yes=yes, dry_run=dry_run)


@branch_app.command("rename")
def branch_rename(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Branch to rename.")],
                  new_name: Annotated[str, typer.Argument(help="New name.")],
                  yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Rename a branch (never main)."""
    _apply(ctx.obj, table, f"rename branch {name} to {new_name}", lambda t: refs.rename_branch(t.metadata, name, new_name),
           yes=yes, dry_run=dry_run)


@branch_app.command("fast-forward")
def branch_fast_forward(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Branch to move.")],
                        to: Annotated[str, typer.Option("--to", help="Branch or tag whose head to move to.")],
                        yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Move a branch to the head of another ref that descends from it."""
    _apply(ctx.obj, table, f"fast-forward {name} to {to}", lambda t: refs.fast_forward(t.metadata, name, to),
           yes=yes, dry_run=dry_run, impact_on=name)


@branch_app.command("retain")
def branch_retain(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Branch name.")],
                  max_ref_age: MaxRefAge = None, max_snapshot_age: MaxSnapAge = None, min_snapshots_to_keep: MinKeep = None,
                  yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Change a branch's retention."""
    retention, words = _retention(max_ref_age, max_snapshot_age, min_snapshots_to_keep)
    _apply(ctx.obj, table, f"set retention of branch {name}{words}", lambda t: refs.set_retention(
        t.metadata, name, **retention), yes=yes, dry_run=dry_run)


@tag_app.command("create")
def tag_create(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Tag name.")],
               snapshot: Annotated[Optional[int], typer.Option("--snapshot", help="Snapshot id (default: current).")] = None,
               max_ref_age: MaxRefAge = None, yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Create a tag at a snapshot; expiry keeps it until its max ref age."""
    retention, words = _retention(max_ref_age)
    _apply(ctx.obj, table, f"create tag {name}{words}", lambda t: refs.create_ref(
        t.metadata, name, ref_type="tag", snapshot_id=snapshot, **retention), yes=yes, dry_run=dry_run)


@tag_app.command("drop")
def tag_drop(ctx: typer.Context, table: TableArg, name: Annotated[str, typer.Argument(help="Tag name.")],
             yes: YesOpt = False, dry_run: DryRunOpt = False) -> None:
    """Drop a tag."""
    _apply(ctx.obj, table, f"drop tag {name}", lambda t: refs.drop_ref(t.metadata, name, ref_type="tag"),
           yes=yes, dry_run=dry_run)
