"""What ``validate`` prints."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import print_table, say, text_renderer
from icectl.ops.inspect.validation import fix_command

if TYPE_CHECKING:
    from icectl.ops.inspect.validation import Checked, ValidationReport


@dataclass
class FindingView:
    severity: str  # error | warning
    code: str  # docs/reference/validation-codes.md
    rule: str  # the spec section
    message: str
    file: str | None
    snapshot_id: int | None
    manifest: str | None
    entry: int | None
    fix: str | None  # the command that fixes it (docs/reference/validation-codes.md); null when none
    where: str = field(repr=False)


@dataclass
class ValidationView:
    """``validate``'s report: every finding, and how much was checked (``format_version`` is None
    when the metadata cannot be read)."""

    table: str
    metadata_location: str | None
    format_version: int | None
    deep: bool
    all_snapshots: bool
    ok: bool
    errors: int
    warnings: int
    checked: Checked
    seconds: float
    findings: list[FindingView]
    kind: str = field(default="table", repr=False)  # or "view" (text only: what was checked)


def validation_view(report: ValidationReport) -> ValidationView:
    return ValidationView(
        report.table, report.metadata_location, report.format_version, report.deep, report.all_snapshots, report.ok,
        len(report.errors), len(report.warnings), report.checked, report.seconds,
        [FindingView(f.severity.value, f.code, f.rule, f.message, f.file, f.snapshot_id, f.manifest, f.entry,
                     fix_command(f.code, report.table) if report.kind == "table" else None, f.where)
         for f in report.findings], kind=report.kind)


@text_renderer(ValidationView)
def _validation_text(env: Env, report: ValidationView) -> None:
    ch = report.checked
    scope = "all snapshots" if report.all_snapshots else "heads of refs"
    if report.kind == "view":
        say(env, f"view {report.table}: view format version "
                 f"{report.format_version if report.format_version is not None else '?'}, checked against the view spec")
    else:
        say(env, f"{report.table}: format version {report.format_version if report.format_version is not None else '?'}, "
                 f"{ch.snapshots} snapshots ({scope}), {ch.manifest_lists} manifest lists, {ch.manifests} manifests, "
                 f"{ch.entries:,} entries" + (f", {ch.files:,} files (deep)" if report.deep else "") + " checked")
    for title, severity in (("Errors", "error"), ("Warnings", "warning"), ("Notes", "note")):
        group = [f for f in report.findings if f.severity == severity]
        if group:
            print_table(env, ["code", "where", "message", "rule"], [[f.code, f.where, f.message, f.rule] for f in group],
                        title=f"{title} ({len(group)})")
    fixes: dict[str, list[str]] = {}
    for f in report.findings:
        if f.fix is not None and f.code not in fixes.setdefault(f.fix, []):
            fixes[f.fix].append(f.code)
    for command, codes in fixes.items():
        say(env, f"fix: {command} ({', '.join(codes)})")
    notes = sum(1 for f in report.findings if f.severity == "note")
    if report.ok and not report.warnings and notes:
        say(env, (f"valid, with {notes} notes", "green"))
    elif report.ok and not report.warnings:
        say(env, ("valid: no findings", "green"))
    elif report.ok:
        say(env, (f"valid, with {report.warnings} warnings", "yellow"))
    else:
        say(env, (f"{report.errors} errors", "red"), f", {report.warnings} warnings")
