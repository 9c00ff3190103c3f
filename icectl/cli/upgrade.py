"""``icectl upgrade-format`` and ``icectl register``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.output import print_table, render, say, text_renderer

if TYPE_CHECKING:
    from icectl.engine.upgrade import RegisterPlan, UpgradePlan

YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (for cron and Airflow).")]


@dataclass
class UpgradeResult:
    """The pre-flight report of ``upgrade-format`` and, once applied, the committed metadata file."""

    plan: UpgradePlan
    dry_run: bool
    applied: bool
    metadata_location: str | None  # the committed metadata file; None until committed


def upgrade_format(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE to upgrade.")],
    to: Annotated[int, typer.Option("--to", help="Target format version: 2, 3 or 4 (stepwise, never down).",
                                    min=1, max=4)],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the pre-flight report; change nothing.")] = False,
    yes: YesOpt = False,
) -> None:
    """Upgrade a table's format version (metadata only), after a pre-flight report."""
    from icectl.cli.confirm import confirm_plan
    from icectl.engine.upgrade import apply_upgrade, plan_upgrade
    from icectl.errors import RefusedError, UnsupportedError

    env: Env = ctx.obj
    t = env.open_table(table)
    plan = plan_upgrade(t, to)
    if dry_run or not plan.steps:
        render(env, UpgradeResult(plan, dry_run, False, None))
        return
    report = UpgradeResult(plan, False, False, None)
    if plan.blockers:
        render(env, report)
        b = plan.blockers[0]
        cls = UnsupportedError if b.code in ("V4_FILESYSTEM_CATALOG", "READ_ONLY") else RefusedError
        raise cls(f"cannot upgrade {plan.table}: {b.message}", hint=b.hint)
    confirm_plan(env, report, f"Upgrade {plan.table} from format version {plan.from_version} to {plan.to_version}?",
                 yes=yes)
    committed = apply_upgrade(t, to)
    render(env, UpgradeResult(plan, False, True, committed.metadata_location))


@text_renderer(UpgradeResult)
def _upgrade_text(env: Env, result: UpgradeResult) -> None:
    plan = result.plan
    if result.applied:
        say(env, f"upgraded {plan.table} to format version {plan.to_version}: committed {result.metadata_location}")
        return
    if not plan.steps:
        say(env, f"{plan.table} is already format version {plan.from_version}; nothing to do")
        return
    path = " -> ".join(str(v) for v in range(plan.from_version, plan.to_version + 1))
    say(env, (f"Upgrade {plan.table}", "bold"), f" ({plan.catalog} catalog): format version {path}")
    for s in plan.steps:
        say(env)
        say(env, (f"{s.from_version} -> {s.to_version}", "bold"))
        for title, items in (("changes", s.changes), ("allows", s.allows), ("forbids", s.forbids)):
            say(env, f"  {title}:")
            for item in items:
                say(env, f"    - {item}")
    if plan.found:
        say(env)
        say(env, ("In the table", "bold"))
        for item in plan.found:
            say(env, f"  - {item}")
    say(env)
    if plan.blockers:
        say(env, ("Blockers", "bold red"))
        for b in plan.blockers:
            say(env, "  - ", (b.code, "red"), f": {b.message}")
            if b.hint:
                say(env, f"    hint: {b.hint}")
    else:
        say(env, ("no blockers", "green"))
    print_table(env, ["reader", "reads it", "note"], [[r.reader, "yes" if r.reads else "no", r.note] for r in plan.readers],
                title=f"Readers of format version {plan.to_version}")
    if result.dry_run:
        say(env, ("dry run: nothing changed", "dim"))


@dataclass
class Registered:
    """A metadata file that ``register`` adds, or added (``registered``), to a catalog."""

    plan: RegisterPlan
    dry_run: bool
    applied: bool
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
    from icectl.cli.confirm import confirm_plan
    from icectl.engine.upgrade import plan_register, register_table

    env: Env = ctx.obj
    ident = parse_identifier(table)
    catalog = env.get_catalog()
    plan = plan_register(catalog, ident, metadata_file)
    if dry_run:
        render(env, Registered(plan, True, False, False))
        return
    confirm_plan(env, Registered(plan, False, False, False), f"Register {plan.table} in catalog {plan.catalog}?",
                 yes=yes, action="register the table")
    register_table(catalog, ident, plan)
    render(env, Registered(plan, False, True, True))


@text_renderer(Registered)
def _registered_text(env: Env, r: Registered) -> None:
    p = r.plan
    if r.registered:
        say(env, f"registered {p.table} in catalog {p.catalog}: {p.metadata_location}")
        return
    say(env, f"register {p.table} in catalog {p.catalog}: format version {p.format_version}, location {p.location}, "
             f"{p.snapshots} snapshots, metadata {p.metadata_location}"
             + (" (dry run: nothing registered)" if r.dry_run else ""))


def register(app: typer.Typer) -> None:
    app.command("upgrade-format")(upgrade_format)
    app.command("register")(register_cmd)
