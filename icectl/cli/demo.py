"""``icectl demo``: build a demo table with a history worth administering."""
from __future__ import annotations

import shlex
from typing import Annotated, Any

import typer

from icectl.cli.context import Env


def demo(
    ctx: typer.Context,
    namespace: Annotated[str, typer.Argument(help="Namespace of the demo table NAMESPACE.events.")] = "demo",
    format_version: Annotated[int, typer.Option("--format-version", help="2 (position delete files) or 3 "
                                                "(deletion vectors, row lineage).")] = 2,
) -> None:
    """Build NAMESPACE.events: real Parquet rows and a history to administer (appends over four days,
    deletes, an overwrite, a new column, a tag, a branch, a staged WAP snapshot, snapshots older than
    the expiry age, small files and an orphan file). No Spark needed."""
    from icectl.cli.output import emit_json
    from icectl.ops.demo import build_demo, check_demo_arguments

    env: Env = ctx.obj
    check_demo_arguments(namespace, format_version=format_version)  # before a catalog is opened
    result = build_demo(env.get_catalog(), namespace, format_version=format_version, command_prefix=_prefix(env))
    if env.json:
        emit_json(env, result)
        return
    _render(env, result)


def _prefix(env: Env) -> str:
    """``icectl`` with the catalog options this run was given, for the suggested commands (a URI
    that may hold a password is not repeated)."""
    parts = ["icectl"]
    if env.catalog:
        parts += ["-c", shlex.quote(env.catalog)]
    if env.uri:
        parts += ["--uri", "URI" if "@" in env.uri else shlex.quote(env.uri)]
    if env.warehouse:
        parts += ["--warehouse", shlex.quote(env.warehouse)]
    return " ".join(parts)


def _render(env: Env, r: Any) -> None:
    from icectl.cli.output import fmt_ts, plain_table

    out = env.stdout
    kind = "deletion vectors" if r.format_version >= 3 else "position delete files"
    out.write(f"Built {r.table} (format version {r.format_version}) at {r.location}\n"
              f"{len(r.snapshots)} snapshots; main: {r.records} rows in {r.data_files} data files and "
              f"{r.delete_files} {kind}; schema {r.schema_ids[-1]} added column {r.added_column}\n\n")
    rows = [[str(s.snapshot_id), fmt_ts(s.timestamp_ms), s.operation, s.branch or "(staged)", str(s.records),
             s.description] for s in r.snapshots]
    plain_table(env, ["snapshot", "committed", "operation", "branch", "rows", "what"], rows, right={"rows"})
    out.write("\nRefs:\n")
    for ref in r.refs:
        out.write(f"  {ref.name} ({ref.type}) -> {ref.snapshot_id}, {ref.records} rows\n")
    out.write(f"  staged snapshot {r.staged_snapshot_id} (wap.id {r.wap_id}) is on no branch\n")
    for p in r.orphan_files:
        age = f"{r.orphan_age_days} days old" if r.orphan_age_days else "new: this storage cannot back-date it"
        out.write(f"Orphan file ({age}, referenced by nothing): {p}\n")
    out.write("\nTry these:\n")
    width = max(len(c.command) for c in r.try_commands)
    for c in r.try_commands:
        out.write(f"  {c.command.ljust(width)}  # {c.why}\n")


def register(app: typer.Typer) -> None:
    app.command("demo")(demo)
