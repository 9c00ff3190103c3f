"""What ``migrate`` prints: the plan (each entry and what will happen to it) and the report (what did)."""
from __future__ import annotations

from dataclasses import dataclass

from icectl.cli.context import Env
from icectl.cli.output import print_table, say, text_renderer
from icectl.ops.migrate import MigrationEntry, MigrationPlan


@dataclass
class MigrationReport:
    """``migrate``'s plan (``applied`` false) or report. Each entry: its ``kind`` ("table" or "view"), name, the
    planned ``action`` (migrate, finish, done, conflict, unsupported, unreadable), the ``outcome``
    once applied (migrated, finished, copied, done, changed, conflict, failed, ...; null in a plan),
    its metadata location in each catalog (null where it is not), and why (``detail``)."""

    source: str
    target: str
    dry_run: bool
    applied: bool
    keep_source: bool
    namespaces_created: list[str]  # in a plan: the namespaces the target will get
    entries: list[MigrationEntry]
    counts: dict[str, int]


def migration_report(plan: MigrationPlan, *, dry_run: bool, applied: bool) -> MigrationReport:
    return MigrationReport(plan.source, plan.target, dry_run, applied, plan.keep_source,
                           list(plan.namespaces_created if applied else plan.namespaces_to_create),
                           plan.entries, plan.counts())


PLANNED = {"migrate": "register in target, check, remove from source",
           "finish": "in both, same metadata: check, remove from source", "done": "already in target",
           "conflict": "conflict: in both, different metadata (left as is)",
           "unsupported": "skipped: the target cannot hold it", "unreadable": "skipped: metadata unreadable"}
KEPT = {"migrate": "register in target, check (source kept)",
        "finish": "in both, same metadata: check (source kept)"}


def _what(r: MigrationReport, e: MigrationEntry) -> str:
    if e.outcome is not None:
        return e.outcome
    return (KEPT if r.keep_source and e.action in KEPT else PLANNED).get(e.action, e.action)


@text_renderer(MigrationReport)
def _migration_text(env: Env, r: MigrationReport) -> None:
    if r.applied:
        title = f"migrate {r.source} -> {r.target}"
    else:
        title = f"migration plan {r.source} -> {r.target}" + (" (dry run: nothing changed)" if r.dry_run else "")
    say(env, (title, "bold"))
    if r.namespaces_created:
        verb = "created" if r.applied else "to create"
        say(env, f"namespaces {verb} in {r.target}: {', '.join(r.namespaces_created)}")
    rows = [[e.kind, e.name, _what(r, e), e.source_metadata_location or "-", e.target_metadata_location or "-"]
            for e in r.entries]
    print_table(env, ["kind", "name", "outcome" if r.applied else "plan", "source metadata", "target metadata"], rows,
                empty="nothing selected")
    for e in r.entries:
        if e.detail:
            say(env, f"{e.name}: {e.detail}")
    say(env, ", ".join(f"{n} {k}" for k, n in r.counts.items()) or "no tables")
