"""``icectl man`` shows the manual; ``pip install`` puts the page where ``man icectl`` finds it
(``<prefix>/share/man/man1/icectl.1``, found through PATH's ``<prefix>/bin``)."""
from __future__ import annotations

import io
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

from icectl.cli.context import Env
from icectl.cli.main import COMMANDS, run
from icectl.errors import ExitCode

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_icectl_man_prints_the_manual():
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    assert run(["man"], env) == 0, env.stderr.getvalue()
    out = env.stdout.getvalue()
    assert "NAME" in out and "SYNOPSIS" in out and "icectl" in out
    for name in ("describe", "expire", "compact", "man"):
        assert name in out and name in COMMANDS


def test_icectl_man_has_no_json_form():
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    assert run(["-o", "json", "man"], env) == ExitCode.USAGE and env.stdout.getvalue() == ""


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed")
def test_the_wheel_installs_the_page_where_man_finds_it(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(REPO_ROOT), "--no-deps", "-q", "-w",
                            str(tmp_path / "dist")], capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("icectl-*.whl"))
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    with zipfile.ZipFile(wheel) as z:
        page = next(n for n in z.namelist() if n.endswith(".data/data/share/man/man1/icectl.1"))
        target = prefix / "share" / "man" / "man1" / "icectl.1"
        target.parent.mkdir(parents=True)
        target.write_bytes(z.read(page))  # where pip puts a wheel's data files: under the prefix
    assert target.read_text() == (REPO_ROOT / "man" / "icectl.1").read_text()
    env = {**os.environ, "PATH": f"{prefix / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("MANPATH", None)
    found = subprocess.run(["man", "-w", "icectl"], capture_output=True, text=True, env=env)
    assert found.stdout.strip() == str(target), found.stdout + found.stderr
