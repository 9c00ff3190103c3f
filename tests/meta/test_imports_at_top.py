"""Imports of icectl's own modules sit at the top of the module (house rule 1; issue 20 item 8):
start-up stays fast because only the command that runs is loaded (cli/lazy.py), not because
imports hide inside functions, where a reader of the module's head cannot see what it depends on.

An import inside a function or a class body is refused, unless it is listed in ``LAZY`` below
with the reason it is lazy: a new one is added there on purpose, in review. Imports under
``if TYPE_CHECKING:`` are for type checkers only and are not counted. Third-party imports are not
checked here: a heavy library used by one code path (pyarrow, pyspark, boto's clients) may be
imported there, with a comment saying why.
"""
from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2] / "icectl"


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")

# (importing module, imported module) -> why the import waits until it is needed.
LAZY = {
    # build_catalog picks the catalog class by the configured type: a REST catalog does not load
    # SQLAlchemy (catalog.sql), a SQL one does not load requests (catalog.rest).
    ("icectl.catalog", "icectl.catalog.rest"): "the configured catalog type picks the class",
    ("icectl.catalog", "icectl.catalog.hadoop"): "the configured catalog type picks the class",
    ("icectl.catalog", "icectl.catalog.sql"): "the configured catalog type picks the class",
    # ... and the Hive catalog needs the optional `hive` extra (thrift), the Glue one botocore's
    # Glue client: neither is loaded unless configured.
    ("icectl.catalog", "icectl.catalog.hive"): "the configured catalog type picks the class (icectl[hive])",
    ("icectl.catalog", "icectl.catalog.glue"): "the configured catalog type picks the class",
    # FileIO loads its S3 support (s3fs, botocore) only when a path of that scheme is first used.
    ("icectl.io", "icectl.io.s3"): "loaded for the s3 scheme only",
    # The job's task functions import their data plane in the executor, inside their try: a
    # worker's Python without pyarrow or datasketches is then the task's reported error (a
    # module-level reference would fail while Spark unpickles the function, as a Py4JJavaError).
    ("icectl.spark.job", "icectl.spark.rewrite"): "imported in the executor, inside the task's try",
    ("icectl.spark.job", "icectl.spark.ndv"): "imported in the executor, inside the task's try",
    # Catalog.commit loads the commit machinery when a commit is applied, so that read-only
    # commands (describe, snapshots, files) do not pay for it (bench/bench_startup.py).
    ("icectl.catalog.base", "icectl.table.builder"): "loaded when a commit is applied (describe's start-up)",
    ("icectl.catalog.base", "icectl.table.requirements"): "loaded when a commit is applied (describe's start-up)",
    ("icectl.catalog.base", "icectl.table.updates"): "loaded when a commit is applied (describe's start-up)",
    # formats.parquet imports pyarrow at its top; spark.rewrite keeps pyarrow inside the functions
    # that write (its docstring): the job's driver imports it and checks the plan's protocol
    # version before any of pyarrow is loaded.
    ("icectl.spark.rewrite", "icectl.formats.parquet"): "pyarrow: loaded by the writing path only",
    # health plans rewrite-deletes only for a table with delete files; the module writes Parquet
    # (formats.parquet imports pyarrow at its top), a sixth of health's start-up otherwise.
    ("icectl.ops.maintain.health", "icectl.ops.maintain.rewrite_deletes"): "pyarrow: a table with delete files only",
}


def _is_icectl(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The icectl modules (or packages) an import statement names."""
    if isinstance(node, ast.ImportFrom):
        if node.level:  # a relative import is one of icectl's own
            return [f"(relative) {'.' * node.level}{node.module or ''}"]
        names = [node.module or ""]
    else:
        names = [a.name for a in node.names]
    return [n for n in names if n == "icectl" or n.startswith("icectl.")]


def local_imports(path: pathlib.Path) -> list[tuple[int, str]]:
    """(line, imported module) of each import of an icectl module inside a function or a class
    body of ``path``, leaving out those under ``if TYPE_CHECKING:``."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: list[tuple[int, str]] = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and is_type_checking(child):
                for n in child.orelse:
                    visit(n, nested)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)) and nested:
                found.extend((child.lineno, name) for name in _is_icectl(child))
            inner = nested or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
            visit(child, inner)

    visit(tree, False)
    return found


def _all_local_imports() -> dict[tuple[str, str], list[str]]:
    out: dict[tuple[str, str], list[str]] = {}
    for path in sorted(ROOT.rglob("*.py")):
        me = module_name(path)
        for line, name in local_imports(path):
            out.setdefault((me, name), []).append(f"{path.relative_to(ROOT.parent)}:{line}")
    return out


def test_icectl_modules_are_imported_at_the_top():
    bad = [f"{where} imports {name} inside a function or class (move it to the top, or add it to LAZY with why)"
           for (me, name), places in sorted(_all_local_imports().items()) if (me, name) not in LAZY
           for where in places]
    assert not bad, "\n".join(bad)


def test_every_lazy_import_listed_is_still_there():
    """An entry of LAZY whose import moved to the top (or went away) is removed from the list."""
    found = _all_local_imports()
    stale = [f"{me} -> {name}" for me, name in sorted(LAZY) if (me, name) not in found]
    assert not stale, "no longer lazy, remove from LAZY:\n" + "\n".join(stale)


def test_the_check_sees_functions_and_class_bodies_but_not_type_checking(tmp_path):
    (tmp_path / "m.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "import icectl.errors\n"                      # top: fine
        "if TYPE_CHECKING:\n"
        "    from icectl.spec.types import Schema\n"   # type checkers only: not counted
        "try:\n"
        "    import icectl.io\n"                       # still the module's top
        "except ImportError:\n"
        "    pass\n"
        "def f():\n"
        "    from icectl.spark.rewrite import rewrite_task\n"
        "    import json\n"                            # third-party and stdlib: not checked here
        "    def g():\n"
        "        import icectl.table.builder\n"
        "class C:\n"
        "    from icectl.errors import ExitCode as _E\n"
        "    def h(self):\n"
        "        if TYPE_CHECKING:\n"
        "            from icectl.table import loaded\n"
        "        from . import sibling\n")
    assert local_imports(tmp_path / "m.py") == [(10, "icectl.spark.rewrite"), (13, "icectl.table.builder"),
                                                (15, "icectl.errors"), (19, "(relative) .")]
