"""The README is true: every shell command of its tour, maintenance, validate/upgrade and tables sections
runs as shown, in order, on the table `icectl demo` builds, and exits 0. The commands run through
bash in a fresh folder (the local default catalog, no configuration), with the `icectl` of this
checkout first on PATH. `compact --yes` runs a real Spark job, so the test is marked `spark`."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
SECTIONS = ("A short tour", "Maintenance", "Validate, upgrade, register", "Evolve a table: alter and properties",
            "Tables, namespaces, manifests", "Statistics", "Incidents: diff and restore")


def readme_commands(sections=SECTIONS) -> list[str]:
    """The shell commands of the given README sections, continuation lines joined, comments and
    blank lines dropped, in the order they appear."""
    text = (REPO / "README.md").read_text()
    out: list[str] = []
    for name in sections:
        m = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
        assert m, f"README has no section {name!r}"
        for block in re.findall(r"```sh\n(.*?)```", m.group(1), re.S):
            joined = re.sub(r"\\\n\s*", " ", block)
            out += [line for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return out


def first_command() -> str:
    text = (REPO / "README.md").read_text()
    return re.search(r"```sh\n(.*?)\n", text).group(1)


def test_readme_starts_with_install_and_test_commands():
    text = (REPO / "README.md").read_text()
    first, second = re.search(r"```sh\n(.*?)```", text, re.S).group(1).strip().splitlines()
    assert first == "pip install '.[spark]' && icectl demo && icectl describe demo.events"
    assert second == "bash .ci/run"
    ci = (REPO / ".ci" / "run").read_text()
    assert '-m pytest -p no:cacheprovider' in ci


def test_readme_commands_are_parsed():
    cmds = readme_commands()
    assert len(cmds) >= 30
    assert all(c.startswith("icectl ") for c in cmds), [c for c in cmds if not c.startswith("icectl ")]


def _env(tmp_path: pathlib.Path) -> dict[str, str]:
    bindir = tmp_path / "bin"
    bindir.mkdir()
    shim = bindir / "icectl"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m icectl "$@"\n')
    shim.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["HOME"] = str(tmp_path)  # no ~/.icectl.yaml: the local default catalog
    for k in ("ICECTL_CONFIG", "ICECTL_CATALOG"):
        env.pop(k, None)
    return env


@pytest.mark.spark
@pytest.mark.slow
def test_readme_tour_runs_on_the_demo_table(tmp_path):
    env = _env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    setup = first_command().split("&&", 1)[1].strip()  # what follows the pip install
    results = []
    for cmd in [setup] + readme_commands():
        proc = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=work, env=env, capture_output=True,
                              text=True, timeout=900)
        results.append((cmd, proc.returncode))
        assert proc.returncode == 0, f"{cmd}\nexit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        assert "Traceback" not in proc.stderr, proc.stderr
    assert len(results) == len(readme_commands()) + 1
