"""The dependency graph of icectl's own modules, read from the source: no cycle between modules or
between packages, and each package imports only the layers below it (design: cli -> ops -> table
-> formats -> spec; catalog applies commits with table's builder; validate checks every layer;
spark, the job that runs in executors, imports only spec, formats and io; expr, the grammars of what
users type, imports only spec). Imports inside
``if TYPE_CHECKING:`` are for type checkers only and are not edges of the layering tests; the
module-cycle and package-cycle tests count every import, ``TYPE_CHECKING`` blocks and
function-local ones included (a cycle hidden in either is still a cycle a reader has to untangle)."""
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
    "expr": {"spec", "errors"},
    "formats": {"spec", "io", "errors"},
    "table": {"formats", "spec", "io", "errors"},
    "catalog": {"table", "formats", "spec", "io", "errors"},
    "spark": {"spec", "formats", "io", "errors"},
    "validate": {"table", "formats", "spec", "io", "errors"},
    "ops": {"catalog", "table", "formats", "spec", "expr", "io", "spark", "validate", "errors"},
    # The thin CLI: parse, ask ops for a plan, confirm, apply, render. It reaches catalogs, tables,
    # files and validation only through ops, and of spec only the read-only model (CLI_SPEC). It
    # parses what the user typed with the one grammar of each small language (expr: pure, no I/O).
    "cli": {"ops", "spec", "expr", "errors"},
}
# The spec modules cli may import: the model's types, metadata and time values it renders.
CLI_SPEC = {"icectl.spec.types", "icectl.spec.metadata", "icectl.spec.view", "icectl.spec.partitioning", "icectl.spec.temporal",
            "icectl.spec.properties"}  # the registry: property names and defaults in help texts


def module_name(path: pathlib.Path, root: pathlib.Path = ROOT) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
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


def imports_of(path: pathlib.Path, modules: set[str], *, type_checking: bool = False,
               root: pathlib.Path = ROOT) -> set[str]:
    """The icectl modules ``path`` imports, at its top and inside functions; with
    ``type_checking``, those imported only for type checkers too."""
    tree = ast.parse(path.read_text(), filename=str(path))
    me = module_name(path, root)
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child) and not type_checking:
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
def graph(*, type_checking: bool = False) -> dict[str, set[str]]:
    paths = [p for p in ROOT.rglob("*.py")]
    modules = {module_name(p) for p in paths}
    return {module_name(p): imports_of(p, modules, type_checking=type_checking) for p in paths}


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
    """Every import counts: at the top, inside a function, and under ``if TYPE_CHECKING:``."""
    g = graph(type_checking=True)
    # Package __init__ modules that only re-export are part of their package's modules: an edge
    # from a module to its own package's __init__ is not a cycle worth reporting.
    cycle = find_cycle({n: {m for m in e if not _leaf(m)} for n, e in g.items()})
    assert cycle is None, " -> ".join(cycle or [])


def test_type_checking_and_function_local_imports_are_edges(tmp_path):
    """The cycle test sees an import under ``if TYPE_CHECKING:`` and one inside a function (a
    cycle made of them is found)."""
    pkg = tmp_path / "icectl"
    pkg.mkdir()
    (pkg / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from icectl.b import B\n")
    (pkg / "b.py").write_text("def f():\n    from icectl import a\n    return a\n")
    (pkg / "c.py").write_text("import typing\nif typing.TYPE_CHECKING:\n    import icectl.a\n")
    modules = {"icectl.a", "icectl.b", "icectl.c"}
    edges = {m: imports_of(pkg / f"{m.split('.')[-1]}.py", modules, type_checking=True, root=pkg) for m in modules}
    assert edges == {"icectl.a": {"icectl.b"}, "icectl.b": {"icectl.a"}, "icectl.c": {"icectl.a"}}
    assert find_cycle(edges) in (["icectl.a", "icectl.b", "icectl.a"], ["icectl.b", "icectl.a", "icectl.b"])
    assert imports_of(pkg / "a.py", modules, root=pkg) == set()  # the layering tests leave TYPE_CHECKING out


def test_no_cycle_between_packages():
    """Every import counts here too: at the top, inside a function, and under ``if TYPE_CHECKING:``
    (the table layer reaches its catalog through table.catalog_contract, not catalog.base)."""
    g = graph(type_checking=True)
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


def test_cli_imports_only_cli_ops_errors_secrets_expr_and_the_spec_model():
    """Type-checking imports included: cli names no catalog, table, io or validate type either."""
    bad = []
    for path in sorted((ROOT / "cli").rglob("*.py")):
        me = module_name(path)
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 else []
            for name in names:
                if not name.startswith("icectl.") and name != "icectl":
                    continue
                ok = (name in ("icectl", "icectl.errors", "icectl.secrets", "icectl.ops") or name in CLI_SPEC
                      or name.startswith(("icectl.cli.", "icectl.ops.", "icectl.expr.")))
                if not ok:
                    bad.append(f"{me} imports {name}")
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
