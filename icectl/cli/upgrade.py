"""``icectl upgrade-format`` and ``icectl register``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import typer

from icectl.cli.context import Env

YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (for cron and Airflow).")]


@dataclass
class UpgradeResult:
    plan: Any
    dry_run: bool
    metadata_location: str | None  # the committed metadata file; None in a dry run


def upgrade_format(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to upgrade.")],
    to: Annotated[int, typer.Option("--to", help="Target format version: 2, 3 or 4 (stepwise, never down).",
                                    min=1, max=4)],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the pre-flight report; change nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Upgrade a table's format version (metadata only), after a pre-flight report."""
    from icectl.cli.confirm import confirm
    from icectl.ops.upgrade import apply_upgrade, plan_upgrade
    from icectl.errors import RefusedError, UnsupportedError

    env: Env = ctx.obj
    t = env.open_table(table)
    plan = plan_upgrade(t, to)
    if dry_run or not plan.steps:
        _render(env, UpgradeResult(plan, True, None))
        return
    if not env.json:
        _render(env, UpgradeResult(plan, False, None))
    if plan.blockers:
        b = plan.blockers[0]
        cls = UnsupportedError if b.code in ("V4_FILESYSTEM_CATALOG", "READ_ONLY") else RefusedError
        raise cls(f"cannot upgrade {plan.table}: {b.message}", hint=b.hint)
    confirm(env, f"Upgrade {plan.table} from format version {plan.from_version} to {plan.to_version}?", yes=yes)
    committed = apply_upgrade(t, to)
    _render(env, UpgradeResult(plan, False, committed.metadata_location))


def _render(env: Env, result: UpgradeResult) -> None:
    plan = result.plan
    if env.json:
        from icectl.cli.output import emit_json

        emit_json(env, result)
        return
    from rich.markup import escape
    from rich.table import Table

    c = env.console()
    if result.metadata_location is not None:
        c.print(f"upgraded {plan.table} to format version {plan.to_version}: committed {result.metadata_location}")
        return
    if not plan.steps:
        c.print(f"{plan.table} is already format version {plan.from_version}; nothing to do")
        return
    path = " -> ".join(str(v) for v in range(plan.from_version, plan.to_version + 1))
    c.print(f"[bold]Upgrade {plan.table}[/bold] ({plan.catalog} catalog): format version {path}")
    for s in plan.steps:
        c.print(f"\n[bold]{s.from_version} -> {s.to_version}[/bold]")
        for title, items in (("changes", s.changes), ("allows", s.allows), ("forbids", s.forbids)):
            c.print(f"  {title}:")
            for item in items:
                c.print(f"    - {escape(item)}")
    if plan.found:
        c.print("\n[bold]In the table[/bold]")
        for item in plan.found:
            c.print(f"  - {escape(item)}")
    if plan.blockers:
        c.print("\n[bold red]Blockers[/bold red]")
        for b in plan.blockers:
            c.print(f"  - [red]{b.code}[/red]: {escape(b.message)}" + (f"\n    hint: {escape(b.hint)}" if b.hint else ""))
    else:
        c.print("\n[green]no blockers[/green]")
    t = Table(title=f"Readers of format version {plan.to_version}", title_justify="left")
    for col in ("reader", "reads it", "note"):
        t.add_column(col)
    for r in plan.readers:
        t.add_row(r.reader, "[green]yes[/green]" if r.reads else "[red]no[/red]", escape(r.note))
    c.print(t)
    if result.dry_run:
        c.print("[dim]dry run: nothing changed[/dim]")


@dataclass
class Registered:
    plan: Any
    dry_run: bool
    registered: bool


def register_cmd(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to register it as, in the configured catalog.")],
    metadata_file: Annotated[str, typer.Argument(help="The table metadata file (*.metadata.json) to register.")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Check the metadata file and the name; register nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Register an existing table metadata file in a (SQL) catalog, e.g. before upgrading to v4."""
    from icectl.catalog import parse_identifier
    from icectl.cli.confirm import confirm
    from icectl.ops.upgrade import plan_register, register_table

    env: Env = ctx.obj
    ident = parse_identifier(table)
    catalog = env.get_catalog()
    plan = plan_register(catalog, ident, metadata_file)
    if dry_run:
        _render_register(env, Registered(plan, True, False))
        return
    if not env.json:
        _render_register(env, Registered(plan, False, False))
    confirm(env, f"Register {plan.table} in catalog {plan.catalog}?", yes=yes)
    register_table(catalog, ident, plan)
    _render_register(env, Registered(plan, False, True))


def _render_register(env: Env, r: Registered) -> None:
    if env.json:
        from icectl.cli.output import emit_json

        emit_json(env, r)
        return
    c = env.console()
    p = r.plan
    if r.registered:
        c.print(f"registered {p.table} in catalog {p.catalog}: {p.metadata_location}")
        return
    c.print(f"register {p.table} in catalog {p.catalog}: format version {p.format_version}, location {p.location}, "
            f"{p.snapshots} snapshots, metadata {p.metadata_location}"
            + (" (dry run: nothing registered)" if r.dry_run else ""))


def register(app: typer.Typer) -> None:
    app.command("upgrade-format")(upgrade_format)
    app.command("register")(register_cmd)

