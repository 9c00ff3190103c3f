"""docs/terminal.md: every ``sh`` block runs, line by line, on the demo table (bash, the installed
icectl, a home folder of its own), and exits 0."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

REPO_ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = REPO_ROOT / "docs" / "terminal.md"


def commands() -> list[str]:
    blocks = re.findall(r"```sh\n(.*?)```", PAGE.read_text(), re.S)
    return [line for block in blocks for line in block.splitlines() if line.strip()]


def test_the_page_has_commands():
    assert len(commands()) >= 8 and all(c.startswith(("icectl", "COLUMNS=")) for c in commands())


def test_every_command_of_the_page_runs(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("ICECTL_CONFIG", "ICECTL_CATALOG", "COLUMNS")}
    env.update(HOME=str(tmp_path / "home"), PATH=f"{pathlib.Path(sys.executable).parent}{os.pathsep}{env['PATH']}")
    (tmp_path / "home").mkdir()
    subprocess.run(["icectl", "demo"], cwd=tmp_path, env=env, check=True, capture_output=True)
    for command in commands():
        proc = subprocess.run(["bash", "-c", f"set -o pipefail; {command}"], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
        # `icectl man | head` may end icectl's write early: head closing the pipe is no failure
        ok = proc.returncode == 0 or ("| head" in command and proc.returncode == 141)
        assert ok, f"{command} -> {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        assert "Traceback" not in proc.stderr and "icectl: error" not in proc.stderr, (command, proc.stderr)
    assert (tmp_path / "compact-plan" / "plan.json").exists()
    assert (tmp_path / "home" / ".bash_completions" / "icectl.sh").exists()
