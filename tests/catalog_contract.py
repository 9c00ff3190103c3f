"""The catalog contract's namespace and table operations, checked the same way on every catalog
(SQL in tests/catalog, REST in tests/rest; the file-system catalog where it can).

``check_catalog_contract(catalog, root, make_table)`` works below the namespace ``root`` (a
fresh, not yet existing namespace) so that catalogs shared between tests stay apart;
``make_table(ident)`` creates a real table and returns its metadata location.
"""
from __future__ import annotations

from typing import Callable

import pytest

from icectl.errors import (AlreadyExistsError, NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError,
                           UsageError)


def check_catalog_contract(catalog, root: tuple[str, ...], make_table: Callable[[tuple[str, ...]], str]) -> None:
    a, ab = root + ("a",), root + ("a", "b")
    catalog.create_namespace(root)
    catalog.create_namespace(a, {"owner": "ops", "k": "v"})
    with pytest.raises(AlreadyExistsError):
        catalog.create_namespace(a)
    catalog.create_namespace(ab)
    # Nested listing: children of a parent, the top level, every namespace.
    assert catalog.list_namespaces(root) == [a]
    assert catalog.list_namespaces(a) == [ab]
    assert catalog.list_namespaces(ab) == []
    assert root[:1] in catalog.list_namespaces(())
    assert {root, a, ab} <= set(catalog.list_namespaces())
    with pytest.raises(NoSuchNamespaceError):
        catalog.list_namespaces(root + ("missing",))

    # Properties: load, set and remove (with a missing key reported), never both at once.
    props = catalog.load_namespace_properties(a)
    assert props["owner"] == "ops" and props["k"] == "v"
    change = catalog.update_namespace_properties(a, updates={"owner": "data", "x": "1"}, removals=["k", "nope"])
    assert (change.updated, change.removed, change.missing) == (("owner", "x"), ("k",), ("nope",))
    props = catalog.load_namespace_properties(a)
    assert props["owner"] == "data" and props["x"] == "1" and "k" not in props
    with pytest.raises(UsageError):
        catalog.update_namespace_properties(a, updates={"x": "2"}, removals=["x"])
    with pytest.raises(NoSuchNamespaceError):
        catalog.load_namespace_properties(root + ("missing",))

    # Tables: list, rename (also across namespaces), drop, register (and overwrite).
    t1, t2 = a + ("t1",), a + ("t2",)
    loc1, loc2 = make_table(t1), make_table(t2)
    assert catalog.list_tables(a) == [t1, t2]
    assert catalog.list_tables(ab) == []
    assert {t1, t2} <= set(catalog.list_tables(None))
    with pytest.raises(NoSuchNamespaceError):
        catalog.list_tables(root + ("missing",))
    with pytest.raises(NamespaceNotEmptyError):
        catalog.drop_namespace(a)

    moved = ab + ("t3",)
    catalog.rename_table(t1, moved)
    assert catalog.load(moved).metadata_location == loc1
    # The walk (list --all): every table at every depth, a namespace's before those below it; a
    # listed table loads as load() does (from the listing's metadata location, where it has one).
    walked = [t for t in catalog.walk_tables() if t.identifier[:len(root)] == root]
    assert [t.identifier for t in walked] == [t2, moved]
    for t, loc in zip(walked, (loc2, loc1)):
        assert t.metadata_location in (None, loc)
        assert catalog.load_listed(t).metadata_location == loc
    with pytest.raises(NoSuchTableError):
        catalog.load(t1)
    with pytest.raises(NoSuchTableError):
        catalog.rename_table(t1, a + ("t9",))
    with pytest.raises(AlreadyExistsError):
        catalog.rename_table(moved, t2)
    with pytest.raises(NoSuchNamespaceError):
        catalog.rename_table(moved, root + ("missing", "t"))

    catalog.drop_table(t2)
    with pytest.raises(NoSuchTableError):
        catalog.load(t2)
    with pytest.raises(NoSuchTableError):
        catalog.drop_table(t2)
    state = catalog.register_table(t2, loc2)
    assert state.metadata_location == loc2 and catalog.load(t2).metadata_location == loc2
    with pytest.raises(AlreadyExistsError):
        catalog.register_table(t2, loc1)
    assert catalog.list_tables(a) == [t2]

    # Empty namespaces drop; a missing one is reported.
    catalog.drop_table(t2)
    catalog.drop_table(moved)
    catalog.drop_namespace(ab)
    catalog.drop_namespace(a)
    with pytest.raises(NoSuchNamespaceError):
        catalog.drop_namespace(a)
    assert catalog.list_namespaces(root) == []
    catalog.drop_namespace(root)


def check_register_overwrite(catalog, ident: tuple[str, ...], make_table: Callable[[tuple[str, ...]], str],
                             other: tuple[str, ...]) -> None:
    """``register_table(..., overwrite=True)`` points an existing table at another metadata file."""
    make_table(ident)
    loc = make_table(other)
    state = catalog.register_table(ident, loc, overwrite=True)
    assert state.metadata_location == loc and catalog.load(ident).metadata_location == loc
