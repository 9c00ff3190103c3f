"""``icectl man``: the manual page, from where ``pip install`` put it (``<prefix>/share/man/man1``,
where ``man icectl`` finds it too) or from the checkout icectl runs from (``man/icectl.1``)."""
from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig

import typer

import icectl
from icectl.cli.context import Env
from icectl.errors import NotFoundError, UsageError

PAGE = os.path.join("share", "man", "man1", "icectl.1")


def manual_page() -> pathlib.Path:
    """The installed man page, else the checkout's."""
    prefixes = [sysconfig.get_path("data"), sys.prefix, sys.base_prefix]
    candidates = [pathlib.Path(p) / PAGE for p in prefixes if p]
    candidates.append(pathlib.Path(icectl.__file__).resolve().parents[1] / "man" / "icectl.1")
    for path in candidates:
        if path.is_file():
            return path
    raise NotFoundError("the icectl manual page is not installed (looked in "
                        f"{', '.join(str(c) for c in candidates)})",
                        hint="reinstall icectl with pip, or from a checkout: python -m tools.gendocs writes man/icectl.1")


def man(ctx: typer.Context) -> None:
    """Show the icectl manual page (the same page as man icectl after pip install)."""
    env: Env = ctx.obj
    if env.json:
        raise UsageError("icectl man shows the manual page; it has no JSON form")
    path = manual_page()
    if shutil.which("man") is None:
        env.stdout.write(path.read_text(encoding="utf-8"))  # roff source: still readable, and what man reads
        return
    if env.is_terminal():
        subprocess.run(["man", "-l", str(path)], check=False)  # the reader's pager, as man icectl does
        return
    proc = subprocess.run(["man", "-l", str(path)], capture_output=True, text=True, check=False,
                          env={**os.environ, "MANPAGER": "cat", "PAGER": "cat"})
    env.stdout.write(proc.stdout)
