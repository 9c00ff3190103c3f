"""A name with a leading underscore is private to its module (style rule 4): no module of icectl/
imports another module's private name, neither ``from icectl.x import _y`` nor ``icectl.x._y``
after ``import icectl.x`` (or ``m._y`` after ``from icectl import x as m``). If two modules need
it, it is public in the module where it belongs. Dunder names (``__version__``) are not private."""
from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2] / "icectl"


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_uses(source: str, *, modules: set[str], filename: str = "<source>") -> list[str]:
    """Each use in ``source`` of another icectl module's private name, as ``line: what``.
    ``modules`` are the icectl modules that exist (to tell ``from icectl.x import y`` of a module
    from that of a function or class)."""
    tree = ast.parse(source, filename=filename)
    found: list[str] = []
    aliases: dict[str, str] = {}  # local name -> the icectl module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "icectl" or a.name.startswith("icectl."):
                    if any(_private(part) for part in a.name.split(".")):
                        found.append(f"{node.lineno}: import {a.name}")
                    if a.asname:
                        aliases[a.asname] = a.name
                    else:
                        aliases[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("icectl"):
            if any(_private(part) for part in node.module.split(".")):
                found.append(f"{node.lineno}: from {node.module} import ...")
            for a in node.names:
                if _private(a.name):
                    found.append(f"{node.lineno}: from {node.module} import {a.name}")
                full = f"{node.module}.{a.name}"
                if full in modules:
                    aliases[a.asname or a.name] = full
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and _private(node.attr)):
            continue
        chain = []
        v = node.value
        while isinstance(v, ast.Attribute):
            chain.append(v.attr)
            v = v.value
        if isinstance(v, ast.Name) and v.id in aliases:
            target = ".".join([aliases[v.id], *reversed(chain)])
            if target in modules or target == "icectl":
                found.append(f"{node.lineno}: {target}.{node.attr}")
    return found


def _module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def test_no_module_imports_another_modules_private_name():
    paths = sorted(ROOT.rglob("*.py"))
    modules = {_module_name(p) for p in paths}
    bad = [f"{p.relative_to(ROOT.parent)}:{use}" for p in paths
           for use in private_uses(p.read_text(), modules=modules, filename=str(p))]
    assert not bad, "\n".join(bad)


def test_the_check_finds_each_form():
    modules = {"icectl", "icectl.ops", "icectl.ops.expire", "icectl.io", "icectl.io.s3"}
    src = ("import icectl.io.s3\n"
           "from icectl.ops import expire as ex\n"
           "from icectl.ops.expire import _fill_sizes, plan_expiry\n"
           "from icectl.io import s3\n"
           "a = icectl.io.s3._int_prop\n"
           "b = ex._fill_sizes\n"
           "c = s3._int_prop\n"
           "d = plan_expiry._cache\n"  # an attribute of a function, not of a module
           "from icectl import __version__\n")
    assert private_uses(src, modules=modules) == [
        "3: from icectl.ops.expire import _fill_sizes", "5: icectl.io.s3._int_prop", "6: icectl.ops.expire._fill_sizes",
        "7: icectl.io.s3._int_prop"]
