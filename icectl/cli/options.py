"""Options that several commands share, as ``Annotated`` aliases (one help text everywhere)."""
from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

# --output (a global option, icectl.cli.main): every command prints table (for people) and json
# (one document); a command whose COMMANDS entry lists jsonl in its outputs prints JSON Lines too.
TABLE, JSON, JSONL = "table", "json", "jsonl"
OUTPUT_FORMATS = (TABLE, JSON, JSONL)
DEFAULT_OUTPUTS = (TABLE, JSON)
STREAM_OUTPUTS = (TABLE, JSON, JSONL)  # the outputs of a command that lists one record a line
OutputOpt = Annotated[str, typer.Option("--output", "-o", help="Output format: table (human), json (one "
                                        "document) or jsonl (one JSON object a line; list --all, files, health, maintain).",
                                        metavar="table|json|jsonl")]

YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (for cron and Airflow).")]
TableArg = Annotated[str, typer.Argument(help="NAMESPACE.TABLE.")]
TemplateOpt = Annotated[Optional[str], typer.Option("--template", help="spark-submit job template (YAML); default: "
                                                    "local[*] with the installed pyspark.")]
MasterOpt = Annotated[Optional[str], typer.Option("--master", help="Spark master, e.g. yarn or k8s://...; overrides "
                                                  "the template.")]

# health and maintain: which tables, and the policy they are measured against.
TargetsArg = Annotated[Optional[list[str]], typer.Argument(
    help="Tables (NAMESPACE.TABLE) or namespaces (all their tables, and those of the namespaces below); health "
    "also takes a table location or metadata file.",
    show_default=False)]
AllOpt = Annotated[bool, typer.Option("--all", help="Every table of the catalog.")]
AllowEmptyOpt = Annotated[bool, typer.Option("--allow-empty", help="With --all, a catalog with no tables is not an "
                                             "error (exit 17 otherwise: a wrong catalog looks empty).")]
PolicyOpt = Annotated[Optional[str], typer.Option(
    "--policy", help="YAML policy file: thresholds and steps, by default and per table pattern (see docs/maintenance.md).")]


def dry_run_option(help: str) -> Any:
    """``--dry-run``, with what it shows for the command (``help``)."""
    return Annotated[bool, typer.Option("--dry-run", help=help)]


# For a commit whose plan shows the change.
DryRunOpt = dry_run_option("Show the change; commit nothing.")
