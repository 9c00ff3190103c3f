"""Table properties have one home: each registered name (and each registered family prefix) is
spelled as a string literal in one module of ``icectl/`` only, ``icectl/spec/properties.py``;
every other module reads and names them through the registry's constants. Docstrings may
mention a property; code may not spell one."""
from __future__ import annotations

import ast
import pathlib
import re

from icectl.spec.properties import PROPERTY_PREFIXES, TABLE_PROPERTIES

ROOT = pathlib.Path(__file__).resolve().parents[2] / "icectl"
REGISTRY = ROOT / "spec" / "properties.py"
NAMES = sorted(TABLE_PROPERTIES) + sorted(p.prefix for p in PROPERTY_PREFIXES)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the Constant nodes that are docstrings."""
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                out.add(id(body[0].value))
    return out


def _token(name: str) -> re.Pattern[str]:
    # The name as a whole word of a literal: "gc.enabled", "gc.enabled=false", "... gc.enabled is ..."
    return re.compile(rf"(?<![\w.-]){re.escape(name)}(?![\w-]|\.\w)")


def spellings(path: pathlib.Path) -> dict[str, list[int]]:
    """{registered name: [line, ...]} of the string literals in ``path`` (docstrings excepted)
    that spell a registered name or prefix."""
    tree = ast.parse(path.read_text(), filename=str(path))
    docs = _docstrings(tree)
    patterns = {n: _token(n) for n in NAMES}
    found: dict[str, list[int]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in docs:
            continue
        for name, pattern in patterns.items():
            if node.value == name or pattern.search(node.value):
                found.setdefault(name, []).append(node.lineno)
    return found


def test_each_table_property_is_spelled_in_the_registry_only():
    offenders = []
    for path in sorted(ROOT.rglob("*.py")):
        if path == REGISTRY:
            continue
        for name, lines in spellings(path).items():
            offenders.append(f"{path.relative_to(ROOT.parent)}:{lines[0]}: {name!r}")
    assert not offenders, ("table property names spelled outside icectl/spec/properties.py (use its constants):\n"
                           + "\n".join(offenders))


def test_the_registry_spells_each_name(tmp_path):
    found = spellings(REGISTRY)
    assert set(found) == set(NAMES)


def test_the_check_finds_a_spelled_name(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('"""Mentions gc.enabled in a docstring: allowed."""\n'
                   'X = props.get("gc.enabled", "true")\n'
                   'Y = f"{n} history.expire.max-snapshot-age-ms is {v}"\n'
                   'Z = "write.metadata.metrics.column." + c\n'
                   'OK = "gc.enabled.extra", "my.gc.enabled"\n')
    assert spellings(bad) == {"gc.enabled": [2], "history.expire.max-snapshot-age-ms": [3],
                              "write.metadata.metrics.column.": [4]}
