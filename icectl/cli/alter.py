"""``icectl alter`` and ``icectl properties``."""
from __future__ import annotations

from dataclasses import replace
from typing import Annotated, Optional

import typer

from icectl.cli.confirm import confirm_plan
from icectl.cli.context import Env
from icectl.cli.options import TableArg, YesOpt, dry_run_option
from icectl.cli.output import render
from icectl.cli.session import open_table
from icectl.cli.views.alter import AlterResult, PropertyList
from icectl.ops.evolve.alter import AlterRequest, commit_alter, plan_alter, properties_request

DryRunOpt = dry_run_option("Show the schema, spec, order and properties before and after, and the updates; commit "
                           "nothing.")
Many = Optional[list[str]]


def _run(env: Env, table: str, request: AlterRequest, *, yes: bool, dry_run: bool) -> None:
    """Check the expressions, plan against the table, show, ask, commit (planned again on a conflict)."""
    request.check()  # a bad expression is refused before the table is read
    t = open_table(env, table)
    plan = plan_alter(t, request)
    result = AlterResult.of(t.name, plan.before, plan.after, plan.changes, dry_run=dry_run, commit=plan.planned_commit)
    if dry_run or plan.changes_nothing:
        render(env, result)
        return
    confirm_plan(env, result, f"Alter {t.name}?", yes=yes, action="alter the table")
    done = commit_alter(plan)
    render(env, replace(AlterResult.of(t.name, done.base.metadata, done.table.metadata, plan.changes, dry_run=False,
                                       commit=done.sent_json()),
                        applied=True, metadata_location=done.table.metadata_location))


def _opt(name: str, metavar: str, help: str) -> typer.models.OptionInfo:
    return typer.Option(name, metavar=metavar, help=help)


def alter(
    ctx: typer.Context,
    table: TableArg,
    add_column: Annotated[Many, _opt("--add-column", "COLUMN", "Add a column: 'NAME TYPE [NOT NULL] [DEFAULT v] "
                                     "[COMMENT \"doc\"] [FIRST | AFTER col | BEFORE col]'; a.b adds b to the struct "
                                     "a (types as in create --schema). Repeatable.")] = None,
    first: Annotated[bool, typer.Option("--first", help="Place the one added column first.")] = False,
    after: Annotated[Optional[str], _opt("--after", "COL", "Place the one added column after this column.")] = None,
    drop_column: Annotated[Many, _opt("--drop-column", "COL", "Drop a column (a.b: a nested field). "
                                      "Repeatable.")] = None,
    rename_column: Annotated[Many, _opt("--rename-column", "OLD=NEW", "Rename a column (a.b=c renames a nested "
                                        "field). Repeatable.")] = None,
    set_type: Annotated[Many, _opt("--set-type", "COL=TYPE", "Widen a column's type as the spec allows (int to "
                                   "long, float to double, decimal precision; v3: date to timestamp, unknown to "
                                   "any). Repeatable.")] = None,
    make_optional: Annotated[Many, _opt("--make-optional", "COL", "Make a required column optional. "
                                        "Repeatable.")] = None,
    make_required: Annotated[Many, _opt("--make-required", "COL", "Make a column required (only one added in this "
                                        "alter with a default). Repeatable.")] = None,
    set_doc: Annotated[Many, _opt("--set-doc", "COL=TEXT", "Set a column's doc (empty TEXT removes it). "
                                  "Repeatable.")] = None,
    set_default: Annotated[Many, _opt("--set-default", "COL=VALUE", "Set a column's write-default (v3). "
                                      "Repeatable.")] = None,
    drop_default: Annotated[Many, _opt("--drop-default", "COL", "Remove a column's write-default. "
                                       "Repeatable.")] = None,
    move_column: Annotated[Many, _opt("--move-column", "MOVE", "Move a column: 'a first', 'a after b' or 'a before "
                                      "b' (within its struct). Repeatable.")] = None,
    set_identifier_fields: Annotated[Optional[str], _opt("--set-identifier-fields", "COLS", "The identifier fields, "
                                                         "e.g. 'id, region' ('' for none).")] = None,
    add_partition_field: Annotated[Many, _opt("--add-partition-field", "TERM", "Add a partition field: 'TERM [AS "
                                              "name]', e.g. 'bucket(16, id)', 'day(ts)', 'truncate(4, name)', "
                                              "'region'. Repeatable.")] = None,
    drop_partition_field: Annotated[Many, _opt("--drop-partition-field", "FIELD", "Drop a partition field by name "
                                               "or term (v1: it becomes void). Repeatable.")] = None,
    rename_partition_field: Annotated[Many, _opt("--rename-partition-field", "OLD=NEW", "Rename a partition field. "
                                                 "Repeatable.")] = None,
    sort_by: Annotated[Optional[str], _opt("--sort-by", "TERMS", "Replace the sort order, e.g. 'id desc nulls "
                                           "last, bucket(4, name)'.")] = None,
    unsorted: Annotated[bool, typer.Option("--unsorted", help="Replace the sort order with none.")] = False,
    set_property: Annotated[Many, _opt("--set-property", "KEY=VALUE", "Set a table property. Repeatable.")] = None,
    remove_property: Annotated[Many, _opt("--remove-property", "KEY", "Remove a table property. "
                                          "Repeatable.")] = None,
    yes: YesOpt = False,
    dry_run: DryRunOpt = False,
) -> None:
    """Change a table's schema, partition spec, sort order and properties in one commit (Java's rules and ids)."""
    request = AlterRequest(
        add_columns=add_column or [], first=first, after=after, drop_columns=drop_column or [],
        rename_columns=rename_column or [], set_types=set_type or [], make_optional=make_optional or [],
        make_required=make_required or [], set_docs=set_doc or [], set_defaults=set_default or [],
        drop_defaults=drop_default or [], move_columns=move_column or [], identifier_fields=set_identifier_fields,
        add_partition_fields=add_partition_field or [], drop_partition_fields=drop_partition_field or [],
        rename_partition_fields=rename_partition_field or [], sort_by=sort_by, unsorted=unsorted,
        set_properties=set_property or [], remove_properties=remove_property or [])
    _run(ctx.obj, table, request, yes=yes, dry_run=dry_run)


def properties(
    ctx: typer.Context,
    table: TableArg,
    action: Annotated[Optional[str], typer.Argument(help="set (KEY=VALUE ...) or unset (KEY ...); omit to list "
                                                    "the properties.", metavar="ACTION")] = None,
    items: Annotated[Optional[list[str]], typer.Argument(help="set: KEY=VALUE ...; unset: KEY ...",
                                                         metavar="ITEMS")] = None,
    yes: YesOpt = False,
    dry_run: DryRunOpt = False,
) -> None:
    """List a table's properties, or set or unset some (one commit)."""
    env: Env = ctx.obj
    if action is None:
        t = open_table(env, table)
        render(env, PropertyList(t.name, dict(t.metadata.properties)))
        return
    _run(env, table, properties_request(action, items or []), yes=yes, dry_run=dry_run)
