"""The icectl typer app: global options and the table of commands (each loaded when it runs)."""
from __future__ import annotations

import gc
import logging
import os
import sys
from typing import Annotated, Optional

import typer
import typer.main

from icectl import __version__
from icectl.cli.context import Env
from icectl.cli.errors import invoke
from icectl.cli.lazy import LazyCommand, LazyGroup
from icectl.cli.options import OUTPUT_FORMATS, STREAM_OUTPUTS, OutputOpt

# Every command: name, module, attribute, one-line help. ``icectl --help`` and shell completion
# read this table; a command's module is imported only when that command runs or shows its help.
COMMANDS = {c.name: c for c in (
    LazyCommand("create", "icectl.cli.tables", "create", "Create a table."),
    LazyCommand("list", "icectl.cli.tables", "list_", "List namespaces, tables and views in the catalog.",
                outputs=STREAM_OUTPUTS),
    LazyCommand("expire", "icectl.cli.expire", "expire", "Expire old snapshots and delete the files only they reach, "
                "as Iceberg Java's expire_snapshots."),
    LazyCommand("rollback", "icectl.cli.refs", "rollback", "Roll a branch back to an earlier snapshot, or set it to "
                "any snapshot."),
    LazyCommand("cherry-pick", "icectl.cli.refs", "cherry_pick", "Apply a snapshot's changes to a branch (Iceberg "
                "Java's cherrypick_snapshot rules)."),
    LazyCommand("refs", "icectl.cli.refs", "list_refs", "List branches and tags with their retention."),
    LazyCommand("remove-orphans", "icectl.cli.orphans", "remove_orphans", "Find and delete files under the table "
                "location that no snapshot or metadata file reaches."),
    LazyCommand("compact", "icectl.cli.compact", "compact", "Rewrite small files (and files with many deletes) into "
                "files of the target size, on Spark."),
    LazyCommand("rewrite-deletes", "icectl.cli.rewrite_deletes", "rewrite_deletes", "Merge position deletes (v2), "
                "convert them to deletion vectors (v3+), drop dangling deletes."),
    LazyCommand("describe", "icectl.cli.describe", "describe", "Describe a table (identity, schema, specs, sort "
                "orders, properties, refs, totals) or a view (versions, SQL per dialect, schema, default catalog and "
                "namespace, properties)."),
    LazyCommand("snapshots", "icectl.cli.snapshots", "snapshots", "List a table's snapshots, newest first."),
    LazyCommand("files", "icectl.cli.files", "files", "List the live content files (data and deletes) of the current "
                "snapshot, a snapshot or a ref.", outputs=STREAM_OUTPUTS),
    LazyCommand("validate", "icectl.cli.validate", "validate", "Check every layer of a table against the rules of "
                "its format version, or a view's metadata against the view spec; exit 8 on errors."),
    LazyCommand("upgrade-format", "icectl.cli.upgrade", "upgrade_format", "Upgrade a table's format version "
                "(metadata only), after a pre-flight report."),
    LazyCommand("register", "icectl.cli.register", "register_cmd",
                "Register an existing table metadata file in a (SQL) catalog."),
    LazyCommand("migrate", "icectl.cli.migrate", "migrate",
                "Move tables to another catalog at their metadata files; nothing is copied or deleted."),
    LazyCommand("alter", "icectl.cli.alter", "alter", "Change a table's schema, partition spec, sort order and "
                "properties in one commit (Java's rules and ids)."),
    LazyCommand("properties", "icectl.cli.alter", "properties", "List a table's properties, or set or unset some "
                "(one commit)."),
    LazyCommand("drop", "icectl.cli.drop", "drop", "Drop a table from its catalog (metadata only), or with --purge "
                "together with its files; or a view (its metadata files stay)."),
    LazyCommand("rename", "icectl.cli.drop", "rename", "Rename a table, or move it to another namespace (its files "
                "stay where they are)."),
    LazyCommand("rewrite-manifests", "icectl.cli.rewrite_manifests", "rewrite_manifests",
                "Rewrite the current snapshot's manifests, clustered by partition."),
    LazyCommand("repair", "icectl.cli.repair", "repair",
                "Fix missing or unreadable files and file metrics that lie, with the smallest commit."),
    LazyCommand("rewrite-table-path", "icectl.cli.rewrite_table_path", "rewrite_table_path",
                "Copy a table's metadata with every path moved to another prefix."),
    LazyCommand("diff", "icectl.cli.diff", "diff",
                "Show what changed from A to B: files, records, schema, spec, properties, refs."),
    LazyCommand("restore", "icectl.cli.restore", "restore",
                "Restore a table to an earlier metadata file, as a new commit."),
    LazyCommand("compute-stats", "icectl.cli.statistics", "compute_stats",
                "Compute NDV statistics of columns on Spark and register them."),
    LazyCommand("compute-partition-stats", "icectl.cli.statistics", "compute_partition_stats",
                "Compute the partition statistics file of a snapshot and register it."),
    LazyCommand("demo", "icectl.cli.demo", "demo",
                "Build NAMESPACE.events, a demo table with a history to administer."),
    LazyCommand("health", "icectl.cli.health", "health",
                "Measure tables and name the command that fixes each finding.", outputs=STREAM_OUTPUTS),
    LazyCommand("profile", "icectl.cli.profile", "profile",
                "Show a table's shape as charts: file sizes, activity per day, partition load."),
    LazyCommand("report", "icectl.cli.report", "report",
                "Write a self-contained HTML page of a table's shape and findings, for a ticket."),
    LazyCommand("maintain", "icectl.cli.maintain", "maintain",
                "Run the maintenance steps each table's health calls for.", outputs=STREAM_OUTPUTS),
    LazyCommand("branch", "icectl.cli.refs", "branch_app", "Create, drop, rename and fast-forward branches."),
    LazyCommand("tag", "icectl.cli.refs", "tag_app", "Create and drop tags."),
    LazyCommand("catalogs", "icectl.cli.catalogs", "catalogs", "Show the configured catalogs, the one a command "
                "would open, and where each came from."),
    LazyCommand("namespace", "icectl.cli.namespaces", "namespace_app", "List, create and drop namespaces; show and "
                "change their properties."),
    LazyCommand("man", "icectl.cli.manual", "man", "Show the icectl manual page (the same page as man icectl after "
                "pip install)."),
)}


class IcectlGroup(LazyGroup):
    lazy_commands = COMMANDS


app = typer.Typer(
    cls=IcectlGroup,
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
GLOBAL_FLAGS = {"--verbose", "-v", "--wide"}
COMPLETE_VAR = "_ICECTL_COMPLETE"  # set by the shell function --install-completion installs


def _version(value: bool) -> None:
    if value:
        typer.echo(f"icectl {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    ctx: typer.Context,
    output: OutputOpt = "table",
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show the catalog opened and where it was "
                                          "configured, tracebacks on errors, S3 retries, and every file that could "
                                          "not be deleted.")] = False,
    wide: Annotated[bool, typer.Option("--wide", help="On a terminal, show every column of a table and whole "
                                       "paths, even wider than the terminal.")] = False,
    catalog: Annotated[Optional[str], typer.Option("--catalog", "-c", help="Catalog name from the configuration file.",
                                                   envvar="ICECTL_CATALOG")] = None,
    uri: Annotated[Optional[str], typer.Option("--uri", help="Catalog URI: sqlite:///path/catalog.db or "
                                               "postgresql://... (SQL), or http(s)://... alone opens a REST "
                                               "catalog; any other scheme is refused.")] = None,
    warehouse: Annotated[Optional[str], typer.Option(
        "--warehouse", help="Warehouse location; alone, it opens a file-system (hadoop) catalog there.")] = None,
    version: Annotated[bool, typer.Option("--version", help="Print the icectl version and exit.",
                                          callback=_version, is_eager=True)] = False,
) -> None:
    if output not in OUTPUT_FORMATS:
        raise typer.BadParameter(f"must be table, json or jsonl, not {output!r}", param_hint="--output")
    entry = COMMANDS.get(ctx.invoked_subcommand or "")
    if entry is not None and output not in entry.outputs:
        raise typer.BadParameter(f"{entry.name} prints {' or '.join(entry.outputs)}, not {output}",
                                 param_hint="--output")
    env = ctx.obj if isinstance(ctx.obj, Env) else Env()
    env.output, env.verbose, env.wide = output, verbose, wide
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
        except (OSError, ValueError):  # a closed or broken stderr: logging never breaks a command
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
    if argv is None and COMPLETE_VAR in os.environ:
        # A TAB in a shell set up by --install-completion: click's completion protocol answers.
        typer.main.get_command(app).main(prog_name="icectl")
    if argv is None:
        # A process of its own: collect cycles less often than every 700 allocations. A listing
        # allocates a few objects per row, nearly all freed by reference counting, and Python's
        # default spends a tenth of `files -o json` walking them (issue 26).
        gc.set_threshold(10_000, 20, 20)
    args = reorder_global_options(list(sys.argv[1:] if argv is None else argv))
    code = invoke(app, args, env or Env())
    if argv is None:
        # The command is done: the interpreter's exit need not look for reference cycles among
        # the ~50,000 objects the run made (its last collections took ~0.05 s of `diff`).
        # Everything is still freed by reference counting, stdout and stderr are flushed, and
        # atexit handlers run; only objects in cycles are left to the process's end.
        gc.freeze()
        sys.exit(code)
    return code
