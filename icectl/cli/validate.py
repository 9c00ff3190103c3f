"""``icectl validate``."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.output import render
from icectl.cli.session import locate_table
from icectl.cli.views.validate import validation_view
from icectl.errors import ValidationFailedError
from icectl.ops.inspect.validation import check_table


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
    env: Env = ctx.obj
    catalog, ident = locate_table(env, table)
    report = check_table(catalog, ident, deep=deep, all_snapshots=all_snapshots, check_bounds=not no_bounds)
    render(env, validation_view(report))
    if not report.ok:
        raise ValidationFailedError(f"{report.table}: validation found {len(report.errors)} errors",
                                    hint="the codes are explained in docs/reference/validation-codes.md")
