"""The lazy command group: ``icectl --help`` and completion list every command from the table in
``icectl.cli.main`` without importing a command module; a command's module is imported when it runs
or shows its own help; the table's one-line helps are the commands' own."""
from __future__ import annotations

import ast
import io
import json
import os
import pathlib
import subprocess
import sys

import pytest
import typer.main

from icectl.cli.context import Env
from icectl.cli.lazy import make_default_short_help
from icectl.cli.main import COMMANDS, app, run

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
COMMAND_MODULES = sorted({c.module for c in COMMANDS.values()})


def _loaded_after(argv: list[str], env: dict[str, str] | None = None) -> tuple[set[str], str]:
    """The icectl.cli modules imported by a fresh interpreter that runs ``argv``, and its stdout."""
    code = ("import io, json, sys, contextlib\n"
            "from icectl.cli.main import run\n"
            "out = io.StringIO()\n"
            "with contextlib.redirect_stdout(out):\n"
            f"    run({argv!r})\n"
            "print(json.dumps([sorted(m for m in sys.modules if m.startswith('icectl.cli.')), out.getvalue()]))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    mods, out = json.loads(proc.stdout.strip().splitlines()[-1])
    return set(mods), out


def test_help_lists_every_command_without_importing_one():
    mods, out = _loaded_after(["--help"])
    assert not mods & set(COMMAND_MODULES), sorted(mods & set(COMMAND_MODULES))
    for name in COMMANDS:
        assert f"\n  {name} " in out, name


def test_a_command_imports_its_own_module_only():
    mods, out = _loaded_after(["describe", "--help"])
    assert "icectl.cli.describe" in mods
    assert not mods & (set(COMMAND_MODULES) - {"icectl.cli.describe"}), sorted(mods)
    assert "Usage: icectl describe" in out


def _complete(words: str, cword: int) -> tuple[list[str], list[str]]:
    """Bash completion through the entry point, as the shell function ``--install-completion``
    installs calls it: (completions, icectl.cli modules imported)."""
    code = ("import atexit, sys\n"
            "atexit.register(lambda: print('MODS', ' '.join(sorted(m for m in sys.modules "
            "if m.startswith('icectl.cli.')))))\n"
            "sys.argv = ['icectl']\n"
            "from icectl.cli.main import run\n"
            "run()\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT,
                          env={**os.environ, "_ICECTL_COMPLETE": "complete_bash", "COMP_WORDS": words,
                               "COMP_CWORD": str(cword)})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    mods = next(ln for ln in lines if ln.startswith("MODS")).split()[1:]
    return [ln for ln in lines if not ln.startswith("MODS")], mods


def test_completion_lists_commands_without_importing_them():
    names, mods = _complete("icectl re", 1)
    assert set(names) == {n for n in COMMANDS if n.startswith("re")}
    assert not set(mods) & set(COMMAND_MODULES), mods


def test_completion_of_subcommands_and_options():
    assert _complete("icectl branch c", 2)[0] == ["create"]
    names, mods = _complete("icectl expire --ol", 2)
    assert names == ["--older-than"] and "icectl.cli.expire" in mods


def test_completion_of_a_commands_options_loads_it():
    root = typer.main.get_command(app)
    ctx = root.make_context("icectl", ["expire"], resilient_parsing=True)
    cmd = root.get_command(ctx, "expire")
    sub = cmd.make_context("expire", [], parent=ctx, resilient_parsing=True)
    assert "--older-than" in {c.value for c in cmd.shell_complete(sub, "--ol")}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_table_help_is_the_commands_first_sentence(name):
    cmd = COMMANDS[name].load()
    assert make_default_short_help(COMMANDS[name].help, 10 ** 6) == COMMANDS[name].help
    assert COMMANDS[name].help == make_default_short_help(cmd.help, 10 ** 6)


def _commands_defined(path: pathlib.Path) -> set[str]:
    """The module's command functions (a ``typer.Context`` first parameter, not decorated into a
    group) and its ``typer.Typer`` groups."""
    out = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef) and not node.decorator_list and node.args.args:
            ann = node.args.args[0].annotation
            if ann is not None and ast.unparse(ann) == "typer.Context":
                out.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) \
                and ast.unparse(node.value.func) == "typer.Typer":
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def test_every_command_is_in_the_table():
    listed = {(c.module, c.attr) for c in COMMANDS.values()}
    defined = {(f"icectl.cli.{p.stem}", name) for p in (REPO_ROOT / "icectl" / "cli").glob("*.py")
               if p.stem != "main" for name in _commands_defined(p)}  # main: the root app
    assert len(defined) > 20
    assert defined == listed, {"not in the table": sorted(defined - listed), "not defined": sorted(listed - defined)}


def test_unknown_command_is_a_usage_error():
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    assert run(["no-such-command"], env) == 2
    assert "No such command" in env.stderr.getvalue()


def test_cli_imports_sit_at_module_tops():
    """Start-up is kept fast by the lazy group, not by imports hidden in functions: inside a
    function icectl/cli imports only rich (heavy; drawing on a terminal needs it)."""
    local = []
    for path in sorted((REPO_ROOT / "icectl" / "cli").rglob("*.py")):
        for fn in ast.walk(ast.parse(path.read_text())):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                elif isinstance(node, ast.ImportFrom):
                    names = [node.module or ""]
                else:
                    continue
                local += [f"{path.relative_to(REPO_ROOT)}:{node.lineno} {n}" for n in names
                          if n.split(".")[0] != "rich"]
    assert not local, "\n".join(local)


def test_read_commands_load_only_what_they_use(tmp_path):
    """``describe`` and ``snapshots`` read the metadata file (and describe one manifest list): they
    import neither pyarrow nor polars, and no maintenance planning (``health``, ``compact``);
    ``diff`` and ``files`` (as a table and as JSON) read manifests with polars but write no Parquet
    (no pyarrow: its import is ~0.1 s of a 1x ``files -o json``). None of them loads
    pydantic (typer's coercion of values, not needed for a str: lazy.ValuesAsGiven). A command
    module that pulls a heavy module in for every command costs each run ~0.1-0.2 s of CPU
    (bench/bench_startup.py)."""
    warehouse = str(tmp_path / "wh")
    made = subprocess.run([sys.executable, "-m", "icectl", "--warehouse", warehouse, "demo"], capture_output=True,
                          text=True, timeout=300, cwd=REPO_ROOT)
    assert made.returncode == 0, made.stderr
    heavy = ("pyarrow", "polars", "pydantic", "icectl.ops.maintain")
    for argv, absent in ((["describe", "demo.events"], heavy), (["snapshots", "demo.events"], heavy),
                         *((argv, ("pyarrow", "pydantic", "icectl.ops.maintain"))
                           for argv in (["-o", "json", "diff", "demo.events", "v1", "main"], ["files", "demo.events"],
                                        ["-o", "json", "files", "demo.events"]))):
        code = ("import atexit, sys\n"
                f"heavy = {absent!r}\n"
                "atexit.register(lambda: print('MODS', ' '.join(sorted(m for m in sys.modules "
                "if m.split('.')[0] in heavy or m.startswith(heavy)))))\n"
                f"sys.argv = ['icectl', '--warehouse', {warehouse!r}, *{argv!r}]\n"
                "from icectl.cli.main import run\n"
                "run()\n")
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO_ROOT)
        assert proc.returncode == 0, (argv, proc.stderr)
        mods = next(ln for ln in proc.stdout.splitlines() if ln.startswith("MODS")).split()[1:]
        assert mods == [], (argv, mods)


def test_values_typer_coerces_still_reach_its_coercion(tmp_path):
    """Only str values of str parameters, and missing values, are passed as given: an int option
    still goes through typer's coercion (its number, its error message)."""
    warehouse = str(tmp_path / "wh")
    assert run(["--warehouse", warehouse, "demo"], Env(stdout=io.StringIO(), stderr=io.StringIO())) == 0
    out, err = io.StringIO(), io.StringIO()
    assert run(["--warehouse", warehouse, "-o", "json", "snapshots", "demo.events", "-n", "2"],
               Env(stdout=out, stderr=err)) == 0, err.getvalue()
    assert len(json.loads(out.getvalue())) == 2
    err = io.StringIO()
    assert run(["--warehouse", warehouse, "snapshots", "demo.events", "--limit", "x"],
               Env(stdout=io.StringIO(), stderr=err)) == 2
    assert err.getvalue().startswith("icectl: error: Invalid value for '--limit' / '-n': Input should be a valid "
                                      "integer"), err.getvalue()
