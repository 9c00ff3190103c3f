"""The generated shell completions, man page and reference pages (tools/gendocs: commands, JSON
output, validation codes, table properties) are current and complete.

If a test here fails after you changed a command, option or exit code, regenerate from the
repository root with

    python -m tools.gendocs

and commit completions/, man/ and docs/ with your change.
"""
from __future__ import annotations

import enum
import re
import shutil
import subprocess
from typing import Annotated, Literal, Optional

import pytest
import typer

from tools import gendocs
from icectl.errors import ExitCode

REGEN = "python -m tools.gendocs"


@pytest.fixture(scope="module")
def tree() -> gendocs.Tree:
    return gendocs.build_tree()


@pytest.fixture(scope="module")
def outputs() -> dict[str, str]:
    return gendocs.generate()


def _commands(tree: gendocs.Tree) -> list[gendocs.CommandSpec]:
    return [c for c in tree.root.walk() if c.path]


# --- freshness -------------------------------------------------------------------------------

def test_checked_in_outputs_are_current(capsys):
    rc = gendocs.main(["--check"])
    err = capsys.readouterr().err
    assert rc == 0, (f"generated docs are stale:\n{err}\n"
                     f"Run `{REGEN}` and commit completions/, man/ and docs/ with your change.")


def test_check_mode_names_stale_and_missing_files(tmp_path, outputs, capsys):
    assert gendocs.main(["--root", str(tmp_path)]) == 0
    assert gendocs.main(["--check", "--root", str(tmp_path)]) == 0
    capsys.readouterr()

    (tmp_path / "man" / "icectl.1").write_text(outputs["man/icectl.1"] + "stale\n", encoding="utf-8")
    (tmp_path / "completions" / "icectl.fish").unlink()
    assert gendocs.main(["--check", "--diff", "--root", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "stale: man/icectl.1" in err and "stale: completions/icectl.fish" in err
    assert "completions/icectl.bash" not in err and REGEN in err
    assert "-stale" in err  # --diff shows what would change

    assert gendocs.main(["--root", str(tmp_path)]) == 0
    assert gendocs.stale_files(tmp_path) == []


def test_check_mode_as_a_module_exits_1(tmp_path, repo_root):
    import sys

    proc = subprocess.run([sys.executable, "-m", "tools.gendocs", "--check", "--root", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, cwd=repo_root)
    assert proc.returncode == 1
    for rel in gendocs.OUTPUTS:
        assert rel in proc.stderr


def test_generation_is_deterministic(outputs):
    assert gendocs.generate() == outputs
    man = outputs["man/icectl.1"]
    th = next(line for line in man.splitlines() if line.startswith(".TH "))
    assert not re.search(r"\d{4}-\d{2}-\d{2}|\b(19|20)\d{2}\b", th), th


# --- table properties -------------------------------------------------------------------------

def test_table_properties_reference_is_generated_from_the_registry(outputs, repo_root):
    from icectl.spec.properties import TABLE_PROPERTIES, properties_markdown

    doc = outputs["docs/table-properties.md"]
    assert doc == properties_markdown()
    for name in TABLE_PROPERTIES:
        assert f"| `{name}` |" in doc
    assert "(docs/table-properties.md)" in (repo_root / "README.md").read_text()


# --- command reference and validation codes --------------------------------------------------

def test_command_reference_documents_every_command_and_option(outputs, tree):
    page = outputs["docs/reference/commands.md"]
    for cmd in _commands(tree):
        title = " ".join(("icectl",) + cmd.path)
        section = page.split(f"\n## {title} {{", 1)[1].split("\n## ", 1)[0]
        for opt in cmd.options:
            for name in opt.names if not opt.is_help else ():
                assert f"`{name}`" in section, f"the command reference lacks {name} of `{title}`"
        for arg in cmd.arguments:
            assert f"`{arg.metavar}" in section
    for opt in tree.root.options:
        assert opt.is_help or f"`{opt.key}`" in page


def test_validation_codes_page_is_generated_from_the_registry(outputs):
    from icectl.validate.codes import CODES

    page = outputs["docs/reference/validation-codes.md"]
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert [r.split("`")[1] for r in rows] == list(CODES)


# --- man page -------------------------------------------------------------------------------

def test_man_page_sections(outputs):
    man = outputs["man/icectl.1"]
    for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "GLOBAL OPTIONS", "COMMANDS", "EXIT STATUS",
                    "ENVIRONMENT", "FILES"):
        assert f"\n.SH {section}\n" in man, f"man page lacks section {section}; run `{REGEN}`"
    for text in ("ICECTL_CONFIG", "ICECTL_CATALOG", "~/.icectl.yaml", "~/.pyiceberg.yaml"):
        assert text in man


def test_man_page_mentions_every_command_and_option(outputs, tree):
    man = outputs["man/icectl.1"]
    for cmd in _commands(tree):
        title = " ".join(("icectl",) + cmd.path)
        assert f'.SS "{title}"' in man, f"man page does not document `{title}`; run `{REGEN}`"
        for opt in cmd.options:
            for name in opt.names:
                assert gendocs.roff(name) in man, f"man page lacks {name} of `{title}`; run `{REGEN}`"
        for arg in cmd.arguments:
            assert gendocs.roff(arg.metavar) in man
    for opt in tree.root.options:
        for name in opt.names:
            assert gendocs.roff(name) in man


def test_man_page_mentions_every_exit_code(outputs):
    man = outputs["man/icectl.1"]
    status = man.split("\n.SH EXIT STATUS\n", 1)[1].split("\n.SH ", 1)[0]
    for code in ExitCode:
        assert f"\\fB{int(code)}\\fR ({code.name})" in status, f"EXIT STATUS lacks {int(code)} {code.name}"
    meanings = dict((c, m) for c, _, m in gendocs.exit_codes())
    assert meanings[int(ExitCode.NOT_FOUND)].startswith("table, namespace")  # from the comment in errors.py
    assert all(meanings.values())


def test_man_page_renders_without_warnings(tmp_path, outputs):
    groff = shutil.which("groff")
    if groff is None:
        pytest.skip("groff not installed")
    page = tmp_path / "icectl.1"
    page.write_text(outputs["man/icectl.1"], encoding="utf-8")
    proc = subprocess.run([groff, "-man", "-Tutf8", "-ww", "-z", str(page)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


# --- completions ----------------------------------------------------------------------------

@pytest.mark.parametrize("rel", ["completions/icectl.bash", "completions/icectl.zsh", "completions/icectl.fish"])
def test_completions_mention_every_command_and_option(rel, outputs, tree):
    script = outputs[rel]
    for cmd in _commands(tree):
        assert re.search(rf"(?<![\w-]){re.escape(cmd.name)}(?![\w-])", script), f"{rel} lacks command {cmd.name}"
        for opt in cmd.options:
            for name in opt.names:
                if rel.endswith(".fish"):
                    flag = (f"-l {name[2:]}" if name.startswith("--")
                            else f"-s {name[1:]}" if len(name) == 2 else f"-o {name[1:]}")
                    assert flag in script, f"{rel} lacks {name} of {cmd.name}"
                else:
                    assert name in script, f"{rel} lacks {name} of {cmd.name}"


def test_output_choices_are_completed(outputs):
    assert "'|--output') echo 'json jsonl table'" in outputs["completions/icectl.bash"]
    assert "(json jsonl table)" in outputs["completions/icectl.zsh"]
    assert "-l output -s o -x -a 'json jsonl table'" in outputs["completions/icectl.fish"]


def _bash_complete(script_path, words: list[str]) -> list[str]:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash not installed")
    quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
    prog = (f"source '{script_path}'\n"
            f"COMP_WORDS=({quoted}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))\n"
            "_icectl 2>/dev/null; printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    proc = subprocess.run([bash, "--norc", "--noprofile", "-c", prog], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return [line for line in proc.stdout.splitlines() if line]


def test_bash_completion_behaviour(repo_root, tree):
    script = repo_root / "completions" / "icectl.bash"
    top = sorted(c.name for c in tree.root.subcommands)
    assert _bash_complete(script, ["icectl", ""]) == top
    assert _bash_complete(script, ["icectl", "--output", ""]) == ["json", "jsonl", "table"]
    assert _bash_complete(script, ["icectl", "-o", "j"]) == ["json", "jsonl"]
    # global options are accepted (and skipped with their value) before and after the command
    assert _bash_complete(script, ["icectl", "-c", "prod", "sn"]) == ["snapshots"]
    assert _bash_complete(script, ["icectl", "files", "t", "--output", "=", ""]) == ["json", "jsonl", "table"]
    files_opts = _bash_complete(script, ["icectl", "--warehouse", "/w", "files", "--"])
    assert "--content" in files_opts and "--output" in files_opts and "--version" not in files_opts


class Mode(str, enum.Enum):
    fast = "fast"
    safe = "safe"


def _nested_app() -> typer.Typer:
    app = typer.Typer(name="icectl", help="Test app.")
    ns = typer.Typer(help="Namespaces.")
    props = typer.Typer(help="Namespace properties.")

    @app.callback()
    def main(output: Annotated[str, typer.Option("--output", "-o", help="Format.", metavar="table|json")] = "table"):
        """Test app."""

    @ns.command("drop")
    def drop(name: Annotated[str, typer.Argument(help="Namespace.")],
             mode: Annotated[Mode, typer.Option("--mode", help="How.")] = Mode.safe,
             level: Annotated[Optional[Literal["info", "warn"]],
                              typer.Option("--level", help="Level.")] = None) -> None:
        """Drop a namespace."""

    @props.command("set")
    def set_(key: Annotated[str, typer.Argument(help="Key.")]) -> None:
        """Set a property."""

    ns.add_typer(props, name="props")
    app.add_typer(ns, name="namespace")
    return app


def test_nested_groups_and_choices(tmp_path):
    tree = gendocs.build_tree(_nested_app())
    paths = sorted(" ".join(c.path) for c in tree.root.walk())
    assert paths == ["", "namespace", "namespace drop", "namespace props", "namespace props set"]
    drop = next(c for c in tree.root.walk() if c.path == ("namespace", "drop"))
    assert {o.key: o.choices for o in drop.options if o.choices} == {"--mode": ("fast", "safe"),
                                                                     "--level": ("info", "warn")}

    bash = gendocs.gen_bash(tree)
    script = tmp_path / "icectl.bash"
    script.write_text(bash, encoding="utf-8")
    assert _bash_complete(script, ["icectl", ""]) == ["namespace"]
    assert _bash_complete(script, ["icectl", "namespace", ""]) == ["drop", "props"]
    assert _bash_complete(script, ["icectl", "namespace", "props", ""]) == ["set"]
    assert _bash_complete(script, ["icectl", "namespace", "drop", "x", "--mode", ""]) == ["fast", "safe"]
    assert _bash_complete(script, ["icectl", "namespace", "drop", "--le"]) == ["--level"]

    zsh = gendocs.gen_zsh(tree)
    assert "_icectl__namespace__props__set()" in zsh and "(fast safe)" in zsh
    fish = gendocs.gen_fish(tree)
    assert "-n '__icectl_at namespace props' -f -a 'set'" in fish
    assert "-n '__icectl_at namespace drop' -l mode -x -a 'fast safe'" in fish
    man = gendocs.gen_man(tree)
    assert '.SS "icectl namespace props set"' in man and "one of: fast, safe" in man


@pytest.mark.parametrize("shell,args", [("zsh", ["-n"]), ("fish", ["--no-execute"])])
def test_completion_scripts_parse(shell, args, repo_root):
    exe = shutil.which(shell)
    if exe is None:
        pytest.skip(f"{shell} not installed")
    path = repo_root / "completions" / f"icectl.{shell}"
    proc = subprocess.run([exe, *args, str(path)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr


def test_fish_completion_behaviour(repo_root):
    fish = shutil.which("fish")
    if fish is None:
        pytest.skip("fish not installed")
    script = repo_root / "completions" / "icectl.fish"

    def complete(line: str) -> list[str]:
        proc = subprocess.run([fish, "--no-config", "-c", f"source '{script}'; complete -C '{line}'"],
                              capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        return sorted(row.split("\t")[0] for row in proc.stdout.splitlines())

    assert "snapshots" in complete("icectl ")
    assert complete("icectl -o ") == ["json", "jsonl", "table"]
    assert complete("icectl --catalog prod files --con") == ["--content"]
