"""The dependency graph of icectl's own modules, read from the source: no cycle between modules or
between packages, and each package imports only the layers below it (design: cli -> ops -> table
-> formats -> spec; catalog applies commits with table's builder; validate checks every layer;
spark, the job that runs in executors, imports only spec, formats and io). Imports inside
``if TYPE_CHECKING:`` are for type checkers only and are not edges."""
from __future__ import annotations

import ast
import functools
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2] / "icectl"

# package -> the packages it may import (besides itself). "errors", "secrets" (the redaction
# registry) and the top-level "icectl" package (__init__: the version) are leaves every package
# may use.
ALLOWED = {
    "errors": set(),
    "io": {"errors"},
    "spec": {"errors"},
    "formats": {"spec", "io", "errors"},
    "table": {"formats", "spec", "io", "errors"},
    "catalog": {"table", "formats", "spec", "io", "errors"},
    "spark": {"spec", "formats", "io", "errors"},
    "validate": {"table", "formats", "spec", "io", "errors"},
    "ops": {"catalog", "table", "formats", "spec", "io", "spark", "validate", "errors"},
    "cli": {"ops", "catalog", "table", "formats", "spec", "io", "spark", "validate", "errors"},
}


def module_name(path: pathlib.Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def package_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1:
        return "icectl"
    return parts[1]


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def imports_of(path: pathlib.Path, modules: set[str]) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    me = module_name(path)
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for n in child.orelse:
                    visit(n)
                continue
            if isinstance(child, ast.Import):
                for a in child.names:
                    found.add(a.name)
            elif isinstance(child, ast.ImportFrom) and child.module and child.level == 0:
                found.add(child.module)
                for a in child.names:  # "from icectl.spec import metadata" imports a module
                    found.add(f"{child.module}.{a.name}")
            visit(child)

    visit(tree)
    out = set()
    for name in found:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        # A module's own ancestor packages run first whatever it imports: not an edge.
        if name and name != me and name.startswith("icectl") and not me.startswith(name + "."):
            out.add(name)
    return out


@functools.cache  # read once a session: each test only reads it
def graph() -> dict[str, set[str]]:
    paths = [p for p in ROOT.rglob("*.py")]
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, modules) for p in paths}


def find_cycle(g: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(g.get(n, ())):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state:
                found = dfs(m)
                if found:
                    return found
        state[n] = 2
        stack.pop()
        return None

    for n in sorted(g):
        if n not in state:
            found = dfs(n)
            if found:
                return found
    return None


def _leaf(module: str) -> bool:
    return module in ("icectl", "icectl.errors", "icectl.secrets", "icectl.__main__")


def test_no_cycle_between_modules():
    g = graph()
    # Package __init__ modules that only re-export are part of their package's modules: an edge
    # from a module to its own package's __init__ is not a cycle worth reporting.
    cycle = find_cycle({n: {m for m in e if not _leaf(m)} for n, e in g.items()})
    assert cycle is None, " -> ".join(cycle or [])


def test_no_cycle_between_packages():
    g = graph()
    pg: dict[str, set[str]] = {}
    for n, edges in g.items():
        pn = package_of(n)
        for m in edges:
            pm = package_of(m)
            if pm != pn and not _leaf(m):
                pg.setdefault(pn, set()).add(pm)
    cycle = find_cycle(pg)
    assert cycle is None, " -> ".join(cycle or [])


def test_each_package_imports_only_the_layers_below():
    g = graph()
    bad = []
    for n, edges in sorted(g.items()):
        pn = package_of(n)
        if pn in ("icectl", "errors", "secrets") or n == "icectl.__main__":
            continue
        for m in sorted(edges):
            pm = package_of(m)
            if pm in (pn, "icectl", "errors", "secrets") or _leaf(m):
                continue
            if pm not in ALLOWED.get(pn, set()):
                bad.append(f"{n} imports {m}")
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("pkg", ["spec", "formats"])
def test_model_and_formats_import_no_upper_layer(pkg):
    g = graph()
    upper = {"table", "ops", "catalog", "cli", "spark", "validate"}
    bad = [f"{n} imports {m}" for n, e in g.items() if package_of(n) == pkg for m in e if package_of(m) in upper]
    assert not bad, "\n".join(bad)


def test_the_graph_is_read():
    g = graph()
    assert "icectl.table.builder" in g["icectl.catalog.base"]
    assert "icectl.spec.metadata" in g["icectl.table.builder"]
    assert len(g) > 50
