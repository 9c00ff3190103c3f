"""What ``--help`` says beyond the commands' own docstrings: the groups of ``icectl --help``, an
example line for each command, and readable metavars (``DURATION``, ``SIZE``, ``SNAPSHOT_ID``
rather than typer's ``<int range>`` and ``<list[int]>``). Light: ``icectl --help`` imports it."""
from __future__ import annotations

from typing import Any

# typer vendors click as typer._click (the version pyproject.toml requires)
from typer._click.utils import make_default_short_help

WHOLE = 10 ** 6  # a limit no first sentence reaches: a command's one-line help is listed whole

# The sections of ``icectl --help``, in order, and their commands in the order they are listed.
GROUPS: dict[str, tuple[str, ...]] = {
    "Start": ("demo", "list", "catalogs", "man"),
    "Inspect": ("describe", "snapshots", "files", "refs", "diff", "validate", "health", "profile", "report"),
    "Maintain": ("expire", "remove-orphans", "compact", "rewrite-deletes", "rewrite-manifests", "maintain"),
    "Evolve": ("create", "alter", "properties", "upgrade-format", "branch", "tag"),
    "Recover": ("rollback", "cherry-pick", "restore", "repair", "rewrite-table-path"),
    "Statistics": ("compute-stats", "compute-partition-stats"),
    "Catalogs": ("namespace", "register", "rename", "drop", "migrate"),
}

# One example line for each command (by its path), shown under its --help.
EXAMPLES: dict[str, str] = {
    "create": "icectl create demo.orders --schema \"id:long!, customer:string, ts:timestamptz\" --yes",
    "list": "icectl list demo",
    "migrate": "icectl migrate --from old --to new prod --dry-run",
    "profile": "icectl profile demo.events",
    "report": "icectl report demo.events --html report.html",
    "expire": "icectl expire demo.events --older-than 7d --dry-run --explain",
    "rollback": "icectl rollback demo.events --to-snapshot 3462374417965917499 --dry-run",
    "cherry-pick": "icectl cherry-pick demo.events 6807948677818654560 --dry-run",
    "refs": "icectl refs demo.events",
    "remove-orphans": "icectl remove-orphans demo.events --dry-run",
    "compact": "icectl compact demo.events --target-file-size 256MB --dry-run",
    "rewrite-deletes": "icectl rewrite-deletes demo.events --dry-run",
    "describe": "icectl describe demo.events",
    "snapshots": "icectl snapshots demo.events --tree",
    "files": "icectl files demo.events --ref audit",
    "validate": "icectl validate demo.events --deep",
    "upgrade-format": "icectl upgrade-format demo.events --to 3 --dry-run",
    "register": "icectl register lake.events /data/lake/events/metadata/00012-1b2c.metadata.json --yes",
    "alter": "icectl alter demo.orders --add-column \"note string\" --rename-column customer=customer_id --dry-run",
    "properties": "icectl properties demo.orders set owner=etl --yes",
    "drop": "icectl drop demo.orders --dry-run",
    "rename": "icectl rename demo.orders lake.orders --yes",
    "rewrite-manifests": "icectl rewrite-manifests demo.events --dry-run",
    "repair": "icectl repair demo.events --dry-run",
    "rewrite-table-path": "icectl rewrite-table-path demo.events --from \"$PWD/warehouse\" --to \"$PWD/relocated\" "
                          "--dry-run",
    "diff": "icectl diff demo.events before-overwrite main",
    "restore": "icectl restore demo.events --to-version 12 --dry-run",
    "compute-stats": "icectl compute-stats demo.events --columns user_id,country --dry-run",
    "compute-partition-stats": "icectl compute-partition-stats demo.events --dry-run",
    "demo": "icectl demo",
    "health": "icectl health demo --orphans",
    "maintain": "icectl maintain demo --dry-run",
    "branch": "icectl branch create demo.events nightly --max-snapshot-age 3d --yes",
    "branch create": "icectl branch create demo.events nightly --max-snapshot-age 3d --min-snapshots-to-keep 5 --yes",
    "branch drop": "icectl branch drop demo.events nightly --yes",
    "branch rename": "icectl branch rename demo.events nightly daily --yes",
    "branch fast-forward": "icectl branch fast-forward demo.events main --to audit --dry-run",
    "branch retain": "icectl branch retain demo.events audit --max-ref-age 30d --yes",
    "tag": "icectl tag create demo.events eoy-2026 --max-ref-age 365d --yes",
    "tag create": "icectl tag create demo.events eoy-2026 --max-ref-age 365d --yes",
    "tag drop": "icectl tag drop demo.events eoy-2026 --yes",
    "catalogs": "icectl catalogs",
    "man": "icectl man",
    "namespace": "icectl namespace create lake --property owner=etl --yes",
    "namespace list": "icectl namespace list",
    "namespace create": "icectl namespace create lake --property owner=etl --yes",
    "namespace drop": "icectl namespace drop lake --yes",
    "namespace properties": "icectl namespace properties lake --set tier=gold --remove owner --yes",
}

# What an option's value is, where its type alone (a str, an int) does not say.
METAVARS: dict[str, str] = {
    "--older-than": "AGE|TIME", "--budget": "DURATION", "--max-ref-age": "DURATION",
    "--max-snapshot-age": "DURATION", "--target-file-size": "SIZE", "--max-file-group-size": "SIZE",
    "--snapshot": "SNAPSHOT_ID", "--snapshot-id": "SNAPSHOT_ID", "--to-snapshot": "SNAPSHOT_ID",
    "--set-current": "SNAPSHOT_ID", "--since": "TIME", "--to-time": "TIME", "--to-timestamp": "TIME",
    "--format-version": "VERSION", "--start-version": "METADATA_FILE", "--end-version": "METADATA_FILE",
    "--to-version": "N", "--to-metadata": "METADATA_FILE", "--template": "FILE", "--policy": "FILE",
    "--property": "KEY=VALUE", "--set": "KEY=VALUE", "--remove": "KEY", "--columns": "COLUMNS",
    "--where": "EXPR", "--sort-by": "TERMS", "--partition-by": "SPEC", "--schema": "SCHEMA", "--ref": "REF",
    "--branch": "BRANCH", "--catalog": "NAME", "--uri": "URI", "--warehouse": "LOCATION", "--location": "LOCATION",
    "--from": "PREFIX", "--master": "MASTER", "--content": "KIND", "--spec-id": "SPEC_ID", "--limit": "N",
    "--copy-plan": "FILE",
}
ARGUMENTS: dict[str, str] = {"snapshot": "SNAPSHOT_ID", "targets": "TARGET", "metadata_file": "METADATA_FILE"}


def _value_type(p: Any) -> str:
    """The name of a parameter's value type (click's ``type``; typer >= 0.20 keeps the annotation)."""
    t = getattr(p, "type", None)
    if t is not None:
        return str(getattr(t, "name", t))
    return str(getattr(getattr(p, "type_descriptor", None), "annotation", ""))


def readable_metavars(cmd: Any, path: str = "") -> None:
    """Give each value parameter of ``cmd`` (and of its subcommands) a metavar a person reads,
    unless it names its own; and put the example line of the command under its help."""
    for p in cmd.params:
        if p.param_type_name == "argument":
            if p.metavar is None:
                name = ARGUMENTS.get(p.name or "", (p.name or "").upper())
                p.metavar = f"{name}..." if p.nargs == -1 else name
            if hasattr(p, "display_type_rich"):
                # typer >= 0.20 writes an argument as ``TABLE <str>`` in the help and ``{TABLE}`` in
                # the usage line; the name alone says it, and [NAME] marks an optional one as click does
                many = p.metavar if p.nargs == 1 or p.metavar.endswith("...") else f"{p.metavar}..."
                shown = many if p.required else f"[{many}]"
                p.display_type_rich = lambda ctx=None: None
                p._usage_display_name = lambda shown=shown: shown
            continue
        if p.metavar is not None or getattr(p, "is_flag", False) or getattr(p, "count", False):
            continue
        flag = max(p.opts, key=len)
        to = {"upgrade-format": "VERSION", "rewrite-table-path": "PREFIX"}.get(path, "REF")
        p.metavar = METAVARS.get(flag) or (to if flag == "--to" else
                                           "N" if "int" in _value_type(p) else flag.lstrip("-").upper())
    example = EXAMPLES.get(path)
    if example and not (cmd.epilog or "").startswith("Example"):
        cmd.epilog = f"\b\nExample:\n  {example}"
    for name, sub in (getattr(cmd, "commands", None) or {}).items():
        if sub.short_help is None and sub.help:
            sub.short_help = make_default_short_help(sub.help, WHOLE)  # listed whole, never cut to "..."
        readable_metavars(sub, f"{path} {name}".strip())
