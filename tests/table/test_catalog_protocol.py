"""The table layer's catalog contract (icectl.table.catalog_contract.CatalogContract) is what every
catalog of icectl.catalog provides: each member with the same parameters, so a Table or a
Transaction works on any of them without the table package importing the catalog package."""
from __future__ import annotations

import inspect

import pytest

from icectl.catalog.base import Catalog
from icectl.catalog.hadoop import HadoopCatalog
from icectl.catalog.path import PathCatalog
from icectl.catalog.rest import RestCatalog
from icectl.catalog.sql import SqlCatalog
from icectl.table.catalog_contract import CatalogContract

MEMBERS = [n for n in vars(CatalogContract) if not n.startswith("_")]


def _params(fn) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in inspect.signature(fn).parameters.values()]


def test_the_contract_is_what_table_calls():
    assert sorted(MEMBERS + list(CatalogContract.__annotations__)) == [
        "commit", "default_table_location", "io", "io_for", "load", "replace_metadata"]


@pytest.mark.parametrize("cls", [Catalog, HadoopCatalog, PathCatalog, RestCatalog, SqlCatalog])
def test_every_catalog_provides_the_contract(cls):
    assert "io" in Catalog.__annotations__
    for name in MEMBERS:
        assert callable(getattr(cls, name, None)), f"{cls.__name__} has no {name}"
        assert _params(getattr(cls, name)) == _params(getattr(CatalogContract, name)), f"{cls.__name__}.{name}"
