"""``icectl validate``."""
from __future__ import annotations

from typing import Annotated, Any

import typer

from icectl.cli.context import Env


def validate(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE, a table location, or a metadata.json path.")],
    deep: Annotated[bool, typer.Option("--deep", help="Also check the files: existence and sizes, Parquet row counts, "
                                       "Puffin footers and deletion vector CRCs and cardinalities, summary totals.")] = False,
    all_snapshots: Annotated[bool, typer.Option("--all-snapshots", help="Check every snapshot, not only the heads of "
                                                "the branches and tags and the current snapshot.")] = False,
    no_bounds: Annotated[bool, typer.Option("--no-bounds", help="Skip the lower/upper bound checks (faster).")] = False,
) -> None:
    """Check every layer of a table against the rules of its format version; exit 8 on errors."""
    from icectl.validate.core import ValidateOptions, validate_table
    from icectl.errors import ValidationFailedError

    env: Env = ctx.obj
    catalog, ident = env.locate_table(table)
    report = validate_table(catalog, ident, ValidateOptions(deep=deep, all_snapshots=all_snapshots,
                                                            check_bounds=not no_bounds))
    if env.json:
        from icectl.cli.output import emit_json

        emit_json(env, report_json(report))
    else:
        render_report(env, report)
    if not report.ok:
        raise ValidationFailedError(f"{report.table}: validation found {len(report.errors)} errors",
                               hint="the codes are explained in the README's \"Validation codes\"")


def report_json(report: Any) -> dict[str, Any]:
    return {
        "table": report.table,
        "metadata_location": report.metadata_location,
        "format_version": report.format_version,
        "deep": report.deep,
        "all_snapshots": report.all_snapshots,
        "ok": report.ok,
        "errors": len(report.errors),
        "warnings": len(report.warnings),
        "checked": {"snapshots": report.checked.snapshots, "manifest_lists": report.checked.manifest_lists,
                    "manifests": report.checked.manifests, "entries": report.checked.entries,
                    "files": report.checked.files},
        "seconds": report.seconds,
        "findings": [{"severity": f.severity.value, "code": f.code, "rule": f.rule, "message": f.message,
                      "file": f.file, "snapshot_id": f.snapshot_id, "manifest": f.manifest, "entry": f.entry}
                     for f in report.findings],
    }


def render_report(env: Env, report: Any) -> None:
    from rich.markup import escape
    from rich.table import Table

    c = env.console()
    ch = report.checked
    scope = "all snapshots" if report.all_snapshots else "heads of refs"
    c.print(f"{report.table}: format version {report.format_version if report.format_version is not None else '?'}, "
            f"{ch.snapshots} snapshots ({scope}), {ch.manifest_lists} manifest lists, {ch.manifests} manifests, "
            f"{ch.entries:,} entries" + (f", {ch.files:,} files (deep)" if report.deep else "") + " checked")
    for title, group, style in (("Errors", report.errors, "red"), ("Warnings", report.warnings, "yellow")):
        if not group:
            continue
        t = Table(title=f"{title} ({len(group)})", title_justify="left", title_style=f"bold {style}")
        for col in ("code", "where", "message", "rule"):
            t.add_column(col, overflow="fold")
        for f in group:
            t.add_row(f.code, escape(f.where), escape(f.message), escape(f.rule))
        c.print(t)
    if report.ok and not report.warnings:
        c.print("[green]valid: no findings[/green]")
    elif report.ok:
        c.print(f"[yellow]valid, with {len(report.warnings)} warnings[/yellow]")
    else:
        c.print(f"[red]{len(report.errors)} errors[/red], {len(report.warnings)} warnings")


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
