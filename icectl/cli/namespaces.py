"""``icectl namespace list | create | drop | properties``."""
from __future__ import annotations

from typing import Annotated, Optional

import typer

from icectl.cli.context import Env
from icectl.cli.options import YesOpt
from icectl.cli.output import render

namespace_app = typer.Typer(help="List, create and drop namespaces; show and change their properties.",
                            no_args_is_help=True)

NamespaceArg = Annotated[str, typer.Argument(help="The namespace, levels separated by dots (db, lake.db).")]
DryRunOpt = Annotated[bool, typer.Option("--dry-run", help="Show the change; change nothing.")]


@namespace_app.command("list")
def list_(
    ctx: typer.Context,
    parent: Annotated[Optional[str], typer.Argument(help="List only the namespaces directly below this one; omit "
                                                    "for every namespace.")] = None,
) -> None:
    """List namespaces."""
    from icectl.cli.views.housekeeping import NamespaceListing
    from icectl.ops.namespaces import list_namespaces, parse_namespace

    env: Env = ctx.obj
    ns = parse_namespace(parent) if parent is not None else None
    catalog = env.get_catalog()
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
    from icectl.cli.confirm import confirm_plan
    from icectl.cli.views.housekeeping import NamespaceChange
    from icectl.ops.namespaces import parse_namespace, parse_properties, plan_create_namespace

    env: Env = ctx.obj
    ns = parse_namespace(namespace)
    props = parse_properties(prop or [], option="--property")
    catalog = env.get_catalog()
    plan = plan_create_namespace(catalog, ns, props)
    if dry_run:
        render(env, NamespaceChange("create", plan.namespace, plan.catalog, plan.properties, True, False))
        return
    confirm_plan(env, NamespaceChange("create", plan.namespace, plan.catalog, plan.properties, False, False),
                 f"Create namespace {plan.namespace}?", yes=yes, action="create the namespace")
    catalog.create_namespace(ns, plan.properties)
    render(env, NamespaceChange("create", plan.namespace, plan.catalog, plan.properties, False, True))


@namespace_app.command("drop")
def drop(ctx: typer.Context, namespace: NamespaceArg, dry_run: DryRunOpt = False, yes: YesOpt = False) -> None:
    """Drop an empty namespace (one that holds no table and no namespace)."""
    from icectl.cli.confirm import confirm_plan
    from icectl.cli.views.housekeeping import NamespaceChange
    from icectl.ops.namespaces import parse_namespace, plan_drop_namespace

    env: Env = ctx.obj
    ns = parse_namespace(namespace)
    catalog = env.get_catalog()
    plan = plan_drop_namespace(catalog, ns)
    if dry_run:
        render(env, NamespaceChange("drop", plan.namespace, plan.catalog, plan.properties, True, False))
        return
    confirm_plan(env, NamespaceChange("drop", plan.namespace, plan.catalog, plan.properties, False, False),
                 f"Drop namespace {plan.namespace}?", yes=yes, action="drop the namespace")
    catalog.drop_namespace(ns)
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
    from icectl.cli.confirm import confirm_plan
    from icectl.cli.views.housekeeping import NamespaceProperties
    from icectl.ops.namespaces import parse_namespace, parse_properties, plan_namespace_properties

    env: Env = ctx.obj
    ns = parse_namespace(namespace)
    updates = parse_properties(set_ or [], option="--set")
    catalog = env.get_catalog()
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
    done = catalog.update_namespace_properties(ns, updates=plan.updates, removals=plan.removals)
    removed, missing = list(done.removed), list(done.missing)
    render(env, report(catalog.load_namespace_properties(ns), dry=False, applied=True))
