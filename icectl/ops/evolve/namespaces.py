"""Namespaces: list, create, drop, and their properties, through the catalog contract (REST, SQL
and file-system catalogs alike). Every change is checked before it is asked for (the namespace
exists or not, is empty, the catalog can store properties), so a refusal writes nothing."""
from __future__ import annotations

from dataclasses import dataclass, field

from icectl.errors import AlreadyExistsError, NamespaceNotEmptyError, NoSuchNamespaceError, UnsupportedError, UsageError
from icectl.table.identifier import Identifier


def parse_namespace(text: str) -> Identifier:
    """``a.b`` -> ("a", "b"); every level must be non-empty."""
    parts = tuple(text.split("."))
    if not text or not all(parts):
        raise UsageError(f"invalid namespace {text!r}: expected names separated by dots, e.g. db or lake.db")
    return parts


def list_namespaces(catalog, parent: Identifier | None) -> list[Identifier]:
    """Every namespace (``parent`` None) or those directly below ``parent``."""
    return catalog.list_namespaces(parent)


def list_views(catalog, namespace: Identifier | None) -> list[Identifier]:
    """The views of one namespace (or of every namespace); none for a catalog without views."""
    return catalog.list_views(namespace) if catalog.supports_views else []


@dataclass
class NamespacePlan:
    namespace: str
    catalog: str
    properties: dict[str, str] = field(default_factory=dict)


def _exists(catalog, ns: Identifier) -> dict[str, str] | None:
    try:
        return catalog.load_namespace_properties(ns)
    except NoSuchNamespaceError:
        return None


def plan_create_namespace(catalog, ns: Identifier, properties: dict[str, str]) -> NamespacePlan:
    if properties and catalog.kind == "file-system":
        raise UnsupportedError("a file-system catalog cannot store namespace properties (a namespace is a folder)")
    if _exists(catalog, ns) is not None:
        raise AlreadyExistsError(f"namespace {'.'.join(ns)} already exists in catalog {catalog.name}")
    return NamespacePlan(".".join(ns), catalog.name, dict(properties))


def plan_drop_namespace(catalog, ns: Identifier) -> NamespacePlan:
    """A namespace to drop must exist and hold no table and no namespace."""
    props = _exists(catalog, ns)
    if props is None:
        raise NoSuchNamespaceError(f"namespace {'.'.join(ns)} does not exist in catalog {catalog.name}")
    tables = catalog.list_tables(ns)
    children = catalog.list_namespaces(ns)
    if tables or children:
        what = ", ".join(x for x in (f"{len(tables)} tables ({', '.join('.'.join(t) for t in tables[:3])}"
                                     f"{', ...' if len(tables) > 3 else ''})" if tables else "",
                                     f"{len(children)} namespaces" if children else "") if x)
        raise NamespaceNotEmptyError(f"namespace {'.'.join(ns)} is not empty: it holds {what}",
                                     hint="drop or rename what it holds first")
    return NamespacePlan(".".join(ns), catalog.name, props)


@dataclass
class PropertiesPlan:
    namespace: str
    catalog: str
    before: dict[str, str]
    updates: dict[str, str]
    removals: list[str]

    @property
    def changes(self) -> bool:
        return bool(self.updates or self.removals)

    def after(self) -> dict[str, str]:
        out = {k: v for k, v in self.before.items() if k not in self.removals}
        out.update(self.updates)
        return out


def plan_namespace_properties(catalog, ns: Identifier, *, updates: dict[str, str],
                              removals: list[str]) -> PropertiesPlan:
    both = sorted(set(updates) & set(removals))
    if both:
        raise UsageError(f"a namespace property cannot be both set and removed: {', '.join(both)}")
    before = _exists(catalog, ns)
    if before is None:
        raise NoSuchNamespaceError(f"namespace {'.'.join(ns)} does not exist in catalog {catalog.name}")
    if (updates or removals) and catalog.kind == "file-system":
        raise UnsupportedError("a file-system catalog cannot store namespace properties (a namespace is a folder)")
    return PropertiesPlan(".".join(ns), catalog.name, before, dict(updates), list(dict.fromkeys(removals)))


def apply_create_namespace(catalog, ns: Identifier, plan: NamespacePlan) -> None:
    catalog.create_namespace(ns, plan.properties)


def apply_drop_namespace(catalog, ns: Identifier) -> None:
    catalog.drop_namespace(ns)


@dataclass
class PropertiesChanged:
    """What the catalog did: the keys it removed and those it did not hold, and the properties now."""

    removed: list[str]
    missing: list[str]
    properties: dict[str, str]


def apply_namespace_properties(catalog, ns: Identifier, plan: PropertiesPlan) -> PropertiesChanged:
    done = catalog.update_namespace_properties(ns, updates=plan.updates, removals=plan.removals)
    return PropertiesChanged(list(done.removed), list(done.missing), catalog.load_namespace_properties(ns))


def list_tables(catalog, namespace: Identifier | None) -> list[Identifier]:
    """The tables of ``namespace``, or of every namespace (None)."""
    return catalog.list_tables(namespace)


__all__ = ["NamespacePlan", "PropertiesChanged", "PropertiesPlan", "apply_create_namespace", "apply_drop_namespace",
           "apply_namespace_properties", "list_namespaces", "list_tables", "parse_namespace",
           "plan_create_namespace", "plan_drop_namespace", "plan_namespace_properties"]
