"""``icectl validate``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.output import render
from icectl.cli.session import locate_table, view_file_io
from icectl.cli.views.validate import validation_view
from icectl.errors import NoSuchTableError, ValidationFailedError
from icectl.ops.inspect.validation import check_table
from icectl.ops.inspect.views import check_view, check_view_file, is_view_metadata_file


def validate(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="NAMESPACE.TABLE or NAMESPACE.VIEW, a table location, or a "
                                         "metadata.json path (a table's or a view's).")],
    deep: Annotated[bool, typer.Option("--deep", help="Also check the files: existence and sizes, Parquet row counts, "
                                       "Puffin footers and deletion vector CRCs and cardinalities, summary totals.")] = False,
    all_snapshots: Annotated[bool, typer.Option("--all-snapshots", help="Check every snapshot, not only the heads of "
                                                "the branches and tags and the current snapshot.")] = False,
    no_bounds: Annotated[bool, typer.Option("--no-bounds", help="Skip the lower/upper bound checks (faster).")] = False,
) -> None:
    """Check every layer of a table against the rules of its format version, or a view's metadata
    against the view spec; exit 8 on errors."""
    env: Env = ctx.obj
    io = view_file_io(env, table)
    if io is not None and is_view_metadata_file(table, io):
        report = check_view_file(table, io)
    else:
        catalog, ident = locate_table(env, table)
        try:
            report = check_table(catalog, ident, deep=deep, all_snapshots=all_snapshots, check_bounds=not no_bounds)
        except NoSuchTableError:
            if not catalog.view_exists(ident):
                raise
            report = check_view(catalog, ident)
    render(env, validation_view(report))
    if not report.ok:
        raise ValidationFailedError(f"{report.table}: validation found {len(report.errors)} errors",
                                    hint="the codes are explained in docs/reference/validation-codes.md")
