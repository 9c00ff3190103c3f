"""Help that guides: bare ``icectl`` shows the grouped help (exit 0); every command's help has an
example line and readable metavars, and lists its subcommands whole; ``--install-completion``
installs a completion that a real bash, zsh and fish answer with (``icectl ex<Tab>`` -> expire)."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import pytest
import typer.main

from icectl.cli.help import EXAMPLES, GROUPS
from icectl.cli.main import COMMANDS, app

BIN = pathlib.Path(sys.executable).parent
ICECTL = str(BIN / "icectl")


def _env(home: pathlib.Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("_ICECTL")}
    env.update(HOME=str(home), PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}", COLUMNS="80")
    return env


def _walk(cmd, path=(), ctx=None):
    yield path, cmd
    if not isinstance(getattr(cmd, "commands", None), dict):
        return
    ctx = cmd.context_class(cmd, info_name=path[-1] if path else "icectl", parent=ctx)
    for name in sorted(cmd.list_commands(ctx)):
        yield from _walk(cmd.get_command(ctx, name), path + (name,), ctx)


TREE = [(path, cmd) for path, cmd in _walk(typer.main.get_command(app)) if path]


def test_bare_icectl_prints_the_grouped_help(tmp_path):
    proc = subprocess.run([ICECTL], capture_output=True, text=True, env=_env(tmp_path))
    assert proc.returncode == 0 and proc.stderr == ""
    out = proc.stdout
    assert out.startswith("Usage: icectl [OPTIONS] COMMAND [ARGS]...")
    heads = [line for line in out.splitlines() if line.endswith("commands:")]
    assert heads == [f"{g} commands:" for g in GROUPS]
    assert "Other commands:" not in out  # every command has its group
    assert {n for members in GROUPS.values() for n in members} == set(COMMANDS)
    assert "..." not in out.split("Start commands:")[1]  # one-line helps are whole, never cut


def test_a_bare_group_prints_its_help(tmp_path):
    proc = subprocess.run([ICECTL, "branch"], capture_output=True, text=True, env=_env(tmp_path))
    assert proc.returncode == 0 and "Usage: icectl branch" in proc.stdout and "fast-forward" in proc.stdout
    assert "..." not in proc.stdout.split("Commands:")[1]


@pytest.mark.parametrize("path,cmd", TREE, ids=[" ".join(p) for p, _ in TREE])
def test_help_has_an_example_and_readable_metavars(path, cmd):
    name = " ".join(path)
    ctx = cmd.make_context(name, ["--help"], resilient_parsing=True)
    text = cmd.get_help(ctx)
    assert f"Example:\n    icectl {name}" in text or f"Example:\n    icectl {path[0]}" in text, text
    assert EXAMPLES[name].startswith(f"icectl {name} ") or EXAMPLES[name] == f"icectl {name}" \
        or len(path) == 1 and EXAMPLES[name].startswith(f"icectl {name} ")
    for ugly in ("<int", "<str", "<list", "<float", "<path", "{"):
        assert ugly not in text.split("Example:")[0], (name, ugly, text)


@pytest.mark.parametrize("flag,metavar", [("--older-than", "AGE|TIME"), ("--retain-last", "N"),
                                          ("--snapshot-id", "SNAPSHOT_ID")])
def test_expire_metavars(flag, metavar, tmp_path):
    out = subprocess.run([ICECTL, "expire", "--help"], capture_output=True, text=True, env=_env(tmp_path)).stdout
    assert f"{flag} {metavar}" in out


def test_compact_sizes_read_size(tmp_path):
    out = subprocess.run([ICECTL, "compact", "--help"], capture_output=True, text=True, env=_env(tmp_path)).stdout
    assert "--target-file-size SIZE" in out and "--max-file-group-size SIZE" in out


def _install(shell: str, home: pathlib.Path) -> None:
    # typer detects the shell from the parent process; "; true" keeps the shell from exec'ing icectl
    proc = subprocess.run([shell, "-c", f"{ICECTL} --install-completion; true"], capture_output=True, text=True,
                          env=_env(home))
    assert f"{pathlib.Path(shell).name} completion installed" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completion_through_the_installed_function(tmp_path):
    _install(shutil.which("bash"), tmp_path)
    script = tmp_path / ".bash_completions" / "icectl.sh"
    assert script.exists() and f"source '{script}'" in (tmp_path / ".bashrc").read_text()
    proc = subprocess.run(["bash", "-c", f"source ~/.bashrc; complete -p icectl; COMP_WORDS=(icectl ex); COMP_CWORD=1; "
                           "_icectl_completion icectl ex icectl; printf 'reply:%s\\n' \"${COMPREPLY[@]}\"; "
                           "COMP_WORDS=(icectl expire --ol); COMP_CWORD=2; _icectl_completion icectl --ol expire; "
                           "printf 'reply:%s\\n' \"${COMPREPLY[@]}\""],
                          capture_output=True, text=True, env=_env(tmp_path))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "complete -o default -F _icectl_completion icectl"
    assert [x for x in lines if x.startswith("reply:")] == ["reply:expire", "reply:--older-than"]
    assert "error" not in proc.stdout + proc.stderr


@pytest.mark.skipif(shutil.which("fish") is None, reason="fish is not installed")
def test_fish_completion_through_the_installed_file(tmp_path):
    _install(shutil.which("fish"), tmp_path)
    proc = subprocess.run(["fish", "-c", "complete -C 'icectl ex'"], capture_output=True, text=True, env=_env(tmp_path))
    assert proc.stdout.splitlines()[0].startswith("expire\tExpire old snapshots"), proc.stdout + proc.stderr


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_completion_is_installed_and_answers(tmp_path):
    _install(shutil.which("zsh"), tmp_path)
    assert (tmp_path / ".zfunc" / "_icectl").exists() and "compinit" in (tmp_path / ".zshrc").read_text()
    # the installed function calls icectl with the words typed (typer's zsh protocol)
    env = {**_env(tmp_path), "_ICECTL_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "icectl ex"}
    proc = subprocess.run([ICECTL], capture_output=True, text=True, env=env)
    assert proc.returncode == 0 and '"expire":"Expire old snapshots' in proc.stdout, proc.stdout + proc.stderr
    assert "_ICECTL_COMPLETE=complete_zsh" in (tmp_path / ".zfunc" / "_icectl").read_text()
