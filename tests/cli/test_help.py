"""Every command and parameter is documented, --help/--version work, and the CLI stays light.

Commands are found by walking the live click tree, so new commands are covered automatically.
"""
from __future__ import annotations

import ast
import io
import pathlib
import subprocess
import sys

import pytest
import typer.main

from icectl import __version__
from icectl.cli.context import Env
from icectl.cli.main import app, run

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
HEAVY_MODULES = ("pyarrow", "fastavro", "s3fs", "pyspark", "icectl.formats.manifest")
UI_MODULES = ("typer", "rich", "click")
LAYERS = ("icectl/spec", "icectl/formats", "icectl/table", "icectl/ops", "icectl/validate", "icectl/catalog", "icectl/io")


def _walk(cmd, path=(), ctx=None):
    """Every command, through list_commands/get_command (the root group loads them lazily)."""
    yield path, cmd
    if not isinstance(getattr(cmd, "commands", None), dict):
        return
    ctx = cmd.context_class(cmd, info_name=path[-1] if path else "icectl", parent=ctx)
    for name in sorted(cmd.list_commands(ctx)):
        yield from _walk(cmd.get_command(ctx, name), path + (name,), ctx)


ROOT = typer.main.get_command(app)
COMMANDS = [(path, cmd) for path, cmd in _walk(ROOT) if not getattr(cmd, "hidden", False)]
COMMAND_IDS = [" ".join(path) or "icectl" for path, _ in COMMANDS]


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(argv, env)
    captured = capsys.readouterr()
    # typer writes --help and --version to sys.stdout, not to Env.stdout; accept either.
    return code, env.stdout.getvalue() + captured.out, env.stderr.getvalue() + captured.err


def test_the_tree_has_commands():
    assert len(COMMANDS) > 1


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=COMMAND_IDS)
def test_command_has_help(path, cmd):
    assert (cmd.help or "").strip(), f"`icectl {' '.join(path)}` has no help text (add a docstring or help=)"


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=COMMAND_IDS)
def test_every_parameter_has_help(path, cmd):
    missing = [p.name for p in cmd.params
               if not getattr(p, "hidden", False) and not (getattr(p, "help", None) or "").strip()]
    assert not missing, f"`icectl {' '.join(path)}`: parameters without help=: {missing}"


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=COMMAND_IDS)
def test_help_exits_0(path, cmd, capsys):
    code, out, err = _run([*path, "--help"], capsys)
    assert code == 0, err
    assert "Usage" in out
    if path:
        assert " ".join(path) in out


def test_short_help_option(capsys):
    code, out, err = _run(["-h"], capsys)
    assert code == 0, err
    assert "Usage" in out


def test_version(capsys):
    code, out, err = _run(["--version"], capsys)
    assert code == 0, err
    assert out.strip() == f"icectl {__version__}"


def test_import_does_not_load_heavy_modules():
    """`icectl --help` must stay fast: importing the CLI may not pull in IO or engine internals."""
    code = ("import sys, icectl.cli.main\n"
            f"heavy = {HEAVY_MODULES!r}\n"
            "print(' '.join(sorted(m for m in sys.modules if m in heavy or m.split('.')[0] in heavy)))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"importing icectl.cli.main imports: {proc.stdout.strip()}"


def _imported_modules(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None)) in (
                "import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant):
            names.add(str(node.args[0].value))
    return names


def test_layers_below_the_cli_do_not_import_ui_libraries():
    offenders = []
    sources = [p for layer in LAYERS for p in sorted((REPO_ROOT / layer).rglob("*.py"))]
    assert sources, "no sources found under " + ", ".join(LAYERS)
    for path in sources:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for mod in sorted(_imported_modules(tree)):
            if mod.split(".")[0] in UI_MODULES:
                offenders.append(f"{path.relative_to(REPO_ROOT)}: {mod}")
    assert not offenders, "engine/catalog/io must not import typer, rich or click:\n" + "\n".join(offenders)
