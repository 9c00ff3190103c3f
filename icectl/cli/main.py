"""The icectl typer app: global options, command registration, and the one error handler."""
from __future__ import annotations

import logging
import sys
from typing import Annotated, Optional

import typer

from icectl import __version__
from icectl.cli.context import Env

app = typer.Typer(
    name="icectl",
    help="Administer Apache Iceberg tables (format versions 1 to 4): inspect, maintain, validate.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click help: no rich import for --help (starts in half the time)
    context_settings={"help_option_names": ["-h", "--help"]},
)

# Global options may be given anywhere on the command line; run() moves them before the command.
GLOBAL_VALUE_OPTIONS = {"--output", "-o", "--catalog", "-c", "--uri", "--warehouse"}
GLOBAL_FLAGS = {"--verbose", "-v"}


def _version(value: bool) -> None:
    if value:
        typer.echo(f"icectl {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    output: Annotated[str, typer.Option("--output", "-o", help="Output format: table (human) or json.",
                                        metavar="table|json")] = "table",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show tracebacks on errors, S3 retries, and every "
                                          "file that could not be deleted.")] = False,
    catalog: Annotated[Optional[str], typer.Option("--catalog", "-c", help="Catalog name from the configuration file.",
                                                   envvar="ICECTL_CATALOG")] = None,
    uri: Annotated[Optional[str], typer.Option("--uri", help="Catalog URI: sqlite:///path/catalog.db or "
                                               "postgresql://... (SQL), or http(s)://... alone opens a REST "
                                               "catalog.")] = None,
    warehouse: Annotated[Optional[str], typer.Option(
        "--warehouse", help="Warehouse location; alone, it opens a file-system (hadoop) catalog there.")] = None,
    version: Annotated[bool, typer.Option("--version", help="Print the icectl version and exit.",
                                          callback=_version, is_eager=True)] = False,
) -> None:
    if output not in ("table", "json"):
        raise typer.BadParameter(f"must be table or json, not {output!r}", param_hint="--output")
    env = ctx.obj if isinstance(ctx.obj, Env) else Env()
    env.output, env.verbose = output, verbose
    env.catalog, env.uri, env.warehouse = catalog, uri, warehouse
    ctx.obj = env
    _log_to(env)


class _EnvStderr(logging.Handler):
    """icectl's log lines (S3 retries and failed batches) on the environment's stderr."""

    def __init__(self, env: Env) -> None:
        super().__init__(logging.INFO)
        self.env = env

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.env.stderr.write(f"icectl: {record.getMessage()}\n")
        except Exception:  # noqa: BLE001 - logging never breaks a command
            pass


def _log_to(env: Env) -> None:
    """With --verbose, icectl's log lines go to stderr; without, nowhere (one handler per process,
    replaced on each run so in-process runs do not stack them)."""
    lg = logging.getLogger("icectl")
    for h in [h for h in lg.handlers if isinstance(h, _EnvStderr)]:
        lg.removeHandler(h)
    lg.propagate = False
    if env.verbose:
        lg.addHandler(_EnvStderr(env))
        lg.setLevel(logging.INFO)
    else:
        lg.setLevel(logging.WARNING)


def _register() -> None:
    from icectl.cli import compact, demo, describe, expire, files, orphans, refs, rewrite_deletes, snapshots, tables
    from icectl.cli import validate
    from icectl.cli import upgrade
    from icectl.cli import alter
    from icectl.cli import drop, namespaces, rewrite_manifests
    from icectl.cli import diff, restore
    from icectl.cli import statistics

    tables.register(app)
    expire.register(app)
    refs.register(app)
    orphans.register(app)
    compact.register(app)
    rewrite_deletes.register(app)
    describe.register(app)
    snapshots.register(app)
    files.register(app)
    validate.register(app)
    upgrade.register(app)
    alter.register(app)
    drop.register(app)
    namespaces.register(app)
    rewrite_manifests.register(app)
    diff.register(app)
    restore.register(app)
    statistics.register(app)
    demo.register(app)


_register()


def reorder_global_options(argv: list[str]) -> list[str]:
    """Move global options (``--output json`` ...) that follow the command to the front."""
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest.extend(argv[i:])
            break
        name = a.split("=", 1)[0]
        if name in GLOBAL_VALUE_OPTIONS:
            if "=" in a:
                front.append(a)
            else:
                front.extend(argv[i:i + 2])
                i += 1
        elif a in GLOBAL_FLAGS:
            front.append(a)
        else:
            rest.append(a)
        i += 1
    return front + rest


def run(argv: list[str] | None = None, env: Env | None = None) -> int:
    """Entry point: run the app, map errors to one line on stderr and a documented exit code."""
    from icectl.cli.errors import invoke

    args = reorder_global_options(list(sys.argv[1:] if argv is None else argv))
    code = invoke(app, args, env or Env())
    if argv is None:
        sys.exit(code)
    return code
