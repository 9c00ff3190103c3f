"""What ``upgrade-format`` and ``register`` print."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import print_table, say, text_renderer

if TYPE_CHECKING:
    from icectl.ops.evolve.register import RegisterPlan
    from icectl.ops.evolve.upgrade import UpgradePlan


@dataclass
class UpgradeResult:
    """The pre-flight report of ``upgrade-format`` and, once applied, the committed metadata file."""

    plan: UpgradePlan
    dry_run: bool
    applied: bool
    metadata_location: str | None  # the committed metadata file; None until committed
    # Each commit sent (or, before it, to send): the REST spec's TableRequirements and
    # TableUpdates, {"requirements": [...], "updates": [...]}. A snapshot that only the commit
    # writes is null until then.
    commits: list[dict] = field(default_factory=list)


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
    commits: list[dict] = field(default_factory=list)  # none: register adds a catalog entry, no metadata update


@text_renderer(Registered)
def _registered_text(env: Env, r: Registered) -> None:
    p = r.plan
    if r.registered:
        say(env, f"registered {p.table} in catalog {p.catalog}: {p.metadata_location}")
        return
    say(env, f"register {p.table} in catalog {p.catalog}: format version {p.format_version}, location {p.location}, "
             f"{p.snapshots} snapshots, metadata {p.metadata_location}"
             + (" (dry run: nothing registered)" if r.dry_run else ""))
