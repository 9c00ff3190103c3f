"""``icectl demo``: build a demo table with a history worth administering."""
from __future__ import annotations

from typing import Annotated

import typer

from icectl.cli.context import Env
from icectl.cli.output import render
from icectl.cli.session import command_prefix, open_catalog
from icectl.cli.views import demo as _view  # noqa: F401 (registers the text renderer)
from icectl.ops.demo import build_demo, check_demo_arguments


def demo(
    ctx: typer.Context,
    namespace: Annotated[str, typer.Argument(help="Namespace of the demo table NAMESPACE.events.")] = "demo",
    format_version: Annotated[int, typer.Option("--format-version", help="2 (position delete files) or 3 "
                                                "(deletion vectors, row lineage).")] = 2,
) -> None:
    """Build NAMESPACE.events, a demo table with a history to administer.

    Build NAMESPACE.events: real Parquet rows and a history to administer (appends over four days,
    deletes, an overwrite, a new column, a tag, a branch, a staged WAP snapshot, snapshots older than
    the expiry age, small files and an orphan file). No Spark needed."""
    env: Env = ctx.obj
    check_demo_arguments(namespace, format_version=format_version)  # before a catalog is opened
    render(env, build_demo(open_catalog(env), namespace, format_version=format_version,
                           command_prefix=command_prefix(env)))
