"""Generate the shell completions, the man page and the command reference from the live icectl
command tree, the JSON output reference from the result dataclasses, and the table-properties and
validation-codes references from their registries.

Run from the repository root (so ``import icectl`` finds this checkout's code, not an installed
copy):

    python -m tools.gendocs            # (re)write the checked-in files
    python -m tools.gendocs --check    # exit 1, naming each stale file, if any is out of date

This is a developer tool, not part of the installed package: it writes into the checkout it
lives in (``REPO_ROOT``), which an installed wheel does not have.

Outputs (paths relative to the repository root):

    completions/icectl.bash   bash (``source`` it, or drop it in bash-completion's completions dir)
    completions/icectl.zsh    zsh  (install as ``_icectl`` somewhere on ``$fpath``)
    completions/icectl.fish   fish (copy to ``~/.config/fish/completions/icectl.fish``)
    man/icectl.1              roff man page
    docs/table-properties.md  the table properties icectl reads or writes (icectl.spec.properties)
    docs/reference/commands.md          every command and option (the command tree)
    docs/reference/json-output.md       the JSON shapes (the result dataclasses: json_shapes.py)
    docs/reference/validation-codes.md  validate's codes (icectl.validate.codes)

The completion scripts are static: they are generated from the click command tree that typer
builds (``typer.main.get_command(app)``) and never start Python on TAB. They complete nested
groups' subcommands, each command's options, the global options (also after the command, where
``icectl.cli.main.run`` accepts them) and the choices of options whose click type has choices.
A value option whose metavar is a plain ``a|b|c`` list (``--output table|json``) is completed
with those words too. Everything is sorted and nothing depends on the time, the terminal or the
machine, so the output is byte-for-byte reproducible.
"""
from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

from tools.gendocs.completions import gen_bash, gen_fish, gen_zsh
from tools.gendocs.json_shapes import json_output_markdown
from tools.gendocs.man import gen_man, roff
from tools.gendocs.reference import commands_markdown, validation_codes_markdown
from tools.gendocs.tree import REGENERATE, CommandSpec, Tree, build_tree, exit_codes
from icectl.spec.properties import properties_markdown

REPO_ROOT = Path(__file__).resolve().parents[2]
OUTPUTS = ("completions/icectl.bash", "completions/icectl.zsh", "completions/icectl.fish", "man/icectl.1",
           "docs/table-properties.md", "docs/reference/commands.md", "docs/reference/json-output.md",
           "docs/reference/validation-codes.md")

GENERATORS: dict[str, Callable[[Tree], str]] = {
    "completions/icectl.bash": gen_bash,
    "completions/icectl.zsh": gen_zsh,
    "completions/icectl.fish": gen_fish,
    "man/icectl.1": gen_man,
    "docs/table-properties.md": lambda _tree: properties_markdown(),
    "docs/reference/commands.md": commands_markdown,
    "docs/reference/json-output.md": lambda _tree: json_output_markdown(),
    "docs/reference/validation-codes.md": lambda _tree: validation_codes_markdown(),
}


def generate(app: Any = None) -> dict[str, str]:
    """The contents of every output, keyed by path relative to the repository root."""
    tree = build_tree(app)
    return {rel: GENERATORS[rel](tree) for rel in OUTPUTS}


def stale_files(root: Path | str = REPO_ROOT, outputs: dict[str, str] | None = None) -> list[str]:
    """Outputs (relative paths) that are missing or differ from what :func:`generate` produces."""
    root = Path(root)
    outputs = generate() if outputs is None else outputs
    stale = []
    for rel, text in outputs.items():
        p = root / rel
        try:
            current = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            current = None
        if current != text:
            stale.append(rel)
    return stale


def write(root: Path | str = REPO_ROOT, outputs: dict[str, str] | None = None) -> list[str]:
    """Write the outputs that changed; returns their relative paths."""
    root = Path(root)
    outputs = generate() if outputs is None else outputs
    changed = stale_files(root, outputs)
    for rel in changed:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(outputs[rel], encoding="utf-8", newline="\n")
    return changed


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=REGENERATE,
                                     description="Generate icectl's shell completions, man page and reference pages.")
    parser.add_argument("--check", action="store_true",
                        help="do not write; exit 1 and name each file that is missing or out of date")
    parser.add_argument("--diff", action="store_true", help="with --check, also print a unified diff")
    parser.add_argument("--root", type=Path, default=REPO_ROOT, help="repository root (default: %(default)s)")
    args = parser.parse_args(argv)
    outputs = generate()
    if args.check:
        stale = stale_files(args.root, outputs)
        for rel in stale:
            print(f"stale: {rel} (run `{REGENERATE}` to regenerate)", file=sys.stderr)
            if args.diff:
                p = args.root / rel
                old = p.read_text(encoding="utf-8").splitlines(keepends=True) if p.exists() else []
                sys.stderr.writelines(difflib.unified_diff(old, outputs[rel].splitlines(keepends=True),
                                                           f"a/{rel}", f"b/{rel}"))
        return 1 if stale else 0
    for rel in write(args.root, outputs):
        print(f"wrote {rel}")
    return 0


__all__ = ["OUTPUTS", "REPO_ROOT", "CommandSpec", "Tree", "build_tree", "exit_codes", "gen_bash", "gen_fish",
           "gen_man", "gen_zsh", "generate", "main", "roff", "stale_files", "write"]
