"""``icectl namespace list | create | drop | properties``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.confirm import confirm_plan
from icectl.cli.context import Env
from icectl.cli.options import YesOpt, dry_run_option
from icectl.cli.output import render
from icectl.cli.session import open_catalog
from icectl.cli.views.housekeeping import NamespaceChange, NamespaceListing, NamespaceProperties
from icectl.expr.pairs import parse_properties
from icectl.ops.evolve.namespaces import (apply_create_namespace, apply_drop_namespace, apply_namespace_properties,
                                   list_namespaces, parse_namespace, plan_create_namespace,
                                   plan_drop_namespace, plan_namespace_properties)

namespace_app = typer.Typer(help="List, create and drop namespaces; show and change their properties.",
                            no_args_is_help=True)

NamespaceArg = Annotated[str, typer.Argument(help="The namespace, levels separated by dots (db, lake.db).")]
DryRunOpt = dry_run_option("Show the change; change nothing.")


@namespace_app.command("list")
def list_(
    ctx: typer.Context,
    parent: Annotated[Optional[str], typer.Argument(help="List only the namespaces directly below this one; omit "
                                                    "for every namespace.")] = None,
) -> None:
    """List namespaces."""
    env: Env = ctx.obj
    ns = parse_namespace(parent) if parent is not None else None
    catalog = open_catalog(env)
    render(env, NamespaceListing(catalog.name, parent, [".".join(n) for n in list_namespaces(catalog, ns)]))


@namespace_app.command("create")
def create(
    ctx: typer.Context,
    namespace: NamespaceArg,
    prop: Annotated[Optional[list[str]], typer.Option("--property", "-P", help="Namespace property KEY=VALUE "
                                                      "(repeatable).")] = None,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
) -> None:
    """Create a namespace."""
    env: Env = ctx.obj
    ns = parse_namespace(namespace)
    props = parse_properties(prop or [], "--property")
    catalog = open_catalog(env)
    plan = plan_create_namespace(catalog, ns, props)
    if dry_run:
        render(env, NamespaceChange("create", plan.namespace, plan.catalog, plan.properties, True, False))
        return
    confirm_plan(env, NamespaceChange("create", plan.namespace, plan.catalog, plan.properties, False, False),
                 f"Create namespace {plan.namespace}?", yes=yes, action="create the namespace")
    apply_create_namespace(catalog, ns, plan)
    render(env, NamespaceChange("create", plan.namespace, plan.catalog, plan.properties, False, True))


@namespace_app.command("drop")
def drop(ctx: typer.Context, namespace: NamespaceArg, dry_run: DryRunOpt = False, yes: YesOpt = False) -> None:
    """Drop an empty namespace (one that holds no table and no namespace)."""
    env: Env = ctx.obj
    ns = parse_namespace(namespace)
    catalog = open_catalog(env)
    plan = plan_drop_namespace(catalog, ns)
    if dry_run:
        render(env, NamespaceChange("drop", plan.namespace, plan.catalog, plan.properties, True, False))
        return
    confirm_plan(env, NamespaceChange("drop", plan.namespace, plan.catalog, plan.properties, False, False),
                 f"Drop namespace {plan.namespace}?", yes=yes, action="drop the namespace")
    apply_drop_namespace(catalog, ns)
    render(env, NamespaceChange("drop", plan.namespace, plan.catalog, plan.properties, False, True))


@namespace_app.command("properties")
def properties(
    ctx: typer.Context,
    namespace: NamespaceArg,
    set_: Annotated[Optional[list[str]], typer.Option("--set", help="Set a property KEY=VALUE (repeatable).")] = None,
    remove: Annotated[Optional[list[str]], typer.Option("--remove", help="Remove a property (repeatable).")] = None,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
) -> None:
    """Show a namespace's properties; with --set or --remove, change them."""
    env: Env = ctx.obj
    ns = parse_namespace(namespace)
    updates = parse_properties(set_ or [], "--set")
    catalog = open_catalog(env)
    plan = plan_namespace_properties(catalog, ns, updates=updates, removals=list(remove or []))
    missing = [k for k in plan.removals if k not in plan.before]
    removed = [k for k in plan.removals if k in plan.before]

    def report(props: dict[str, str], *, dry: bool, applied: bool) -> NamespaceProperties:
        return NamespaceProperties(plan.namespace, plan.catalog, props, sorted(plan.updates), removed, missing, dry,
                                   applied)

    if dry_run or not plan.changes:
        render(env, report(plan.after(), dry=dry_run, applied=False))
        return
    confirm_plan(env, report(plan.after(), dry=False, applied=False),
                 f"Change the properties of namespace {plan.namespace}?", yes=yes, action="change the namespace")
    done = apply_namespace_properties(catalog, ns, plan)
    removed, missing = done.removed, done.missing
    render(env, report(done.properties, dry=False, applied=True))
