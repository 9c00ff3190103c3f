"""What ``drop``, ``rename``, ``namespace ...`` and ``rewrite-manifests`` print."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, print_kv, print_table, say, text_renderer, warn
from icectl.cli.views.common import SkippedForSafety, say_skipped_for_safety, warn_failed_deletes
from icectl.ops.maintain.expire import KINDS
from icectl.spec.properties import GC_ENABLED

if TYPE_CHECKING:
    from icectl.ops.evolve.drop import DropPlan, DropResult
    from icectl.ops.maintain.rewrite_manifests import RewriteManifestsPlan, RewriteManifestsResult


@dataclass
class FileView:
    path: str
    kind: str
    size: int | None


@dataclass
class FailedDelete:
    path: str
    error: str


@dataclass
class DropReport:
    """What ``drop`` did or would do. ``files``: the files the purge deletes (plan) or deleted
    (icectl) or asked the server to delete (REST); ``counts`` and ``bytes`` sum them by kind;
    ``still_present``: after a server's purge, those of ``files`` it left (null: not checked)."""

    table: str
    catalog: str
    location: str
    metadata_location: str
    purge: bool
    purged_by: str | None  # icectl | server | null
    dry_run: bool
    applied: bool
    files: list[FileView]
    counts: dict[str, int]
    bytes: int
    deleted: int
    failed_deletes: list[FailedDelete]
    still_present: list[str] | None
    kept_files: list[str]  # content files kept because gc.enabled is false
    skipped_outside_location: list[str]
    skipped_for_safety: list[SkippedForSafety]
    commits: list[dict] = field(default_factory=list)


def drop_report(plan: DropPlan, result: DropResult | None, *, dry_run: bool) -> DropReport:
    p = result.plan if result is not None else plan
    counts: dict[str, int] = {}
    for f in p.files:
        counts[f.kind] = counts.get(f.kind, 0) + 1
    if result is None:
        deleted = 0
    elif p.purged_by == "server":
        deleted = len(p.files) - len(result.still_present or [])
    else:
        deleted = len(result.deleted)
    return DropReport(
        table=p.table, catalog=p.catalog, location=p.location, metadata_location=p.metadata_location, purge=p.purge,
        purged_by=p.purged_by, dry_run=dry_run, applied=result is not None,
        files=[FileView(f.path, f.kind, f.size) for f in p.files], counts=counts,
        bytes=sum(f.size or 0 for f in p.files), deleted=deleted,
        failed_deletes=[FailedDelete(path, err) for path, err in (result.failed if result else [])],
        still_present=result.still_present if result is not None else None,
        kept_files=[f.path for f in p.kept_files], skipped_outside_location=list(p.skipped_outside_location),
        skipped_for_safety=[SkippedForSafety(path, why) for path, why in p.skipped_for_safety])


@text_renderer(DropReport)
def _drop_text(env: Env, r: DropReport) -> None:
    if r.applied:
        say(env, f"dropped {r.table} from catalog {r.catalog}")
        if r.purged_by == "icectl":
            say(env, f"deleted {r.deleted} of {len(r.files)} files ({fmt_bytes(r.bytes)}) under {r.location}")
        elif r.purged_by == "server":
            left = len(r.still_present or [])
            say(env, f"the catalog server was asked to purge the table's files: {r.deleted} of {len(r.files)} "
                     f"are gone" + (f", {left} are still there" if left else ""))
            for path in (r.still_present or [])[:10]:
                warn(env, f"still there after the server's purge: {path}")
        warn_failed_deletes(env, r.failed_deletes)
        return
    what = "drop and purge" if r.purge else "drop"
    say(env, f"{r.table}: to {what} from catalog {r.catalog}" + (" (dry run: nothing changed)" if r.dry_run else ""))
    print_kv(env, [("location", r.location), ("metadata", r.metadata_location)])
    if not r.purge:
        say(env, "metadata only: the catalog forgets the table; every file stays under its location")
        return
    if r.purged_by == "server":
        say(env, "the REST catalog server deletes the files (purgeRequested=true); icectl deletes none itself")
    rows = [[k, str(r.counts[k]), fmt_bytes(sum(f.size or 0 for f in r.files if f.kind == k))]
            for k in KINDS if r.counts.get(k)]
    print_table(env, ["kind", "files", "bytes"], rows, right={"files", "bytes"},
                title=f"Files to delete ({len(r.files)}, after the catalog drop)", empty="none")
    if r.kept_files:
        say(env, (f"{len(r.kept_files)} data and delete files stay: {GC_ENABLED.name} is false (other tables may "
                  "share them)", "yellow"))
    if r.skipped_outside_location:
        say(env, (f"{len(r.skipped_outside_location)} reachable files lie outside the table location and stay",
                  "yellow"))
    say_skipped_for_safety(env, r.skipped_for_safety)


@dataclass
class RenameReport:
    source: str
    destination: str
    catalog: str
    location: str
    metadata_location: str
    dry_run: bool
    applied: bool
    commits: list[dict] = field(default_factory=list)


@text_renderer(RenameReport)
def _rename_text(env: Env, r: RenameReport) -> None:
    if r.applied:
        say(env, f"renamed {r.source} to {r.destination} in catalog {r.catalog}")
        return
    say(env, f"rename {r.source} to {r.destination} in catalog {r.catalog}"
             + (" (dry run: nothing changed)" if r.dry_run else ""))
    say(env, f"files stay where they are ({r.location})")


# -- namespaces -----------------------------------------------------------------------------------------------

@dataclass
class NamespaceListing:
    catalog: str
    parent: str | None
    namespaces: list[str]


@text_renderer(NamespaceListing)
def _ns_list_text(env: Env, r: NamespaceListing) -> None:
    title = f"Namespaces in {r.parent}" if r.parent else f"Namespaces in catalog {r.catalog}"
    print_table(env, ["namespace"], [[n] for n in r.namespaces], title=title, empty="none")


@dataclass
class NamespaceChange:
    """``namespace create`` / ``drop``: the namespace, and its properties (to set, or it had)."""

    action: str  # create | drop
    namespace: str
    catalog: str
    properties: dict[str, str]
    dry_run: bool
    applied: bool
    commits: list[dict] = field(default_factory=list)


@text_renderer(NamespaceChange)
def _ns_change_text(env: Env, r: NamespaceChange) -> None:
    done = {"create": "created", "drop": "dropped"}[r.action]
    if r.applied:
        say(env, f"{done} namespace {r.namespace} in catalog {r.catalog}")
        return
    say(env, f"{r.action} namespace {r.namespace} in catalog {r.catalog}"
             + (" (dry run: nothing changed)" if r.dry_run else ""))
    if r.properties:
        print_kv(env, sorted(r.properties.items()), title="Properties")


@dataclass
class NamespaceProperties:
    """A namespace's properties (``after``: as they are, or will be once ``updated`` and
    ``removed`` are applied; ``missing``: keys asked to be removed that were not set)."""

    namespace: str
    catalog: str
    properties: dict[str, str]
    updated: list[str]
    removed: list[str]
    missing: list[str]
    dry_run: bool
    applied: bool
    commits: list[dict] = field(default_factory=list)


@text_renderer(NamespaceProperties)
def _ns_props_text(env: Env, r: NamespaceProperties) -> None:
    changing = bool(r.updated or r.removed or r.missing)
    if changing:
        verb = "changed" if r.applied else "to change"
        say(env, f"namespace {r.namespace}: properties {verb}: "
                 + "; ".join(x for x in (f"set {', '.join(r.updated)}" if r.updated else "",
                                         f"removed {', '.join(r.removed)}" if r.removed else "",
                                         f"not set: {', '.join(r.missing)}" if r.missing else "") if x)
                 + (" (dry run: nothing changed)" if r.dry_run else ""))
    print_table(env, ["property", "value"], [[k, v] for k, v in sorted(r.properties.items())],
                title=f"Properties of namespace {r.namespace}", empty="none")


# -- rewrite-manifests ---------------------------------------------------------------------------------------

@dataclass
class GroupView:
    content: str
    manifests: int
    bytes: int
    target_manifests: int
    rewrite: bool


@dataclass
class RewriteManifestsReport:
    """What ``rewrite-manifests`` did or would do: per content, the candidate manifests (of
    ``spec_id``, in the starting snapshot) and how many manifests they become."""

    table: str
    starting_snapshot_id: int | None
    spec_id: int
    target_size_bytes: int
    groups: list[GroupView]
    rewritten_manifests: list[str]
    added_manifests: list[str]
    kept_manifests: int
    entries: int
    snapshot_id: int | None
    metadata_location: str | None
    dry_run: bool
    applied: bool
    commits: list[dict] = field(default_factory=list)


def rewrite_manifests_report(plan: RewriteManifestsPlan, result: RewriteManifestsResult | None, *,
                             dry_run: bool) -> RewriteManifestsReport:
    applied = result is not None and result.committed is not None
    rewritten = plan.rewritten
    return RewriteManifestsReport(
        table=plan.table, starting_snapshot_id=plan.starting_snapshot_id, spec_id=plan.spec_id,
        target_size_bytes=plan.target_size_bytes,
        groups=[GroupView(g.content, g.manifests, g.bytes, g.target_manifests, g.rewrite) for g in plan.groups],
        rewritten_manifests=[m.manifest_path for m in rewritten],
        added_manifests=result.added_manifests if applied else [],
        kept_manifests=result.kept_manifests if applied else plan.current_manifests - len(rewritten),
        entries=result.entries if applied else 0,
        snapshot_id=result.snapshot_id if applied else None,
        metadata_location=result.committed.table.metadata_location if applied else None,
        dry_run=dry_run, applied=applied,
        commits=[result.committed.sent_json()] if applied else ([plan.planned_commit] if plan.planned_commit else []))


@text_renderer(RewriteManifestsReport)
def _rm_text(env: Env, r: RewriteManifestsReport) -> None:
    if r.applied:
        say(env, f"rewrote {len(r.rewritten_manifests)} manifests into {len(r.added_manifests)} "
                 f"({r.entries} entries; {r.kept_manifests} kept): snapshot {r.snapshot_id}")
        say(env, f"committed {r.metadata_location}")
        return
    say(env, f"{r.table}: manifests of spec {r.spec_id} in snapshot {r.starting_snapshot_id}, target "
             f"{fmt_bytes(r.target_size_bytes)} per manifest" + (" (dry run: nothing changed)" if r.dry_run else ""))
    print_table(env, ["content", "manifests", "bytes", "target manifests", "rewrite"],
                [[g.content, str(g.manifests), fmt_bytes(g.bytes), str(g.target_manifests),
                  "yes" if g.rewrite else "no: already one manifest"] for g in r.groups],
                right={"manifests", "bytes", "target manifests"}, empty="no manifests of this spec")
    if not r.rewritten_manifests:
        say(env, "nothing to rewrite")
