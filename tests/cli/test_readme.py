"""The README and the docs are true: every ```sh block of README.md and docs/**/*.md runs in a
test, as written. The tour blocks (README's quick start and catalogs, then the docs' pages in
:data:`TOUR` order) run in order on the table `icectl demo` builds, and exit 0. The commands run
through bash in a fresh folder (the local default catalog, no configuration), with the `icectl`
of this checkout first on PATH. `compact --yes` runs a real Spark job, so that test is marked
`spark`. The other blocks are run by the tests :data:`ELSEWHERE` names; a ```sh block no test runs
fails :func:`test_every_sh_block_is_run_by_a_test` (an illustrative example goes in a ```console
block). README's quick-start output is the demo's real output."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
README = REPO / "README.md"
README_LIMIT = 12 * 1024

# (file, section): the ```sh blocks of the part of a file under a "## " heading (None: before the
# first one), run in this order on one demo table; later blocks rely on what earlier ones did.
TOUR: tuple[tuple[str, str | None], ...] = (
    ("README.md", "Quick start"),
    ("README.md", "Connect to your catalog"),
    ("docs/getting-started.md", "A short tour"),
    ("docs/maintenance.md", None),
    ("docs/tables.md", "Validate, upgrade, register"),
    ("docs/tables.md", "Evolve a table: alter and properties"),
    ("docs/tables.md", "Tables, namespaces, manifests"),
    ("docs/incidents.md", "Diff and restore"),
    ("docs/statistics.md", None),
    ("docs/incidents.md", "Repair and relocate"),
    ("docs/maintenance.md", "Health and maintenance"),
)
# Blocks other tests run, with what they need (a configuration, a server).
ELSEWHERE: dict[tuple[str, str | None], str] = {
    ("docs/configuration.md", None): "tests/cli/test_catalogs_cli.py::test_docs_configuration_examples_run",
    ("docs/configuration.md", "Glue catalogs"): "tests/s3/test_glue.py::test_docs_glue_example_runs (moto)",
    ("docs/incidents.md", "Rebuild a lost manifest list"):
        "tests/ops/test_repair_manifest_list.py::test_the_docs_section_runs (a head's manifest list deleted first)",
}
# A page whose own test runs its ```sh blocks says so, anywhere in the page:
#   <!-- sh blocks run by: tests/cli/test_views.py::test_docs_examples_run -->
# (the named test must exist and name the page).
PAGE_RUNNER = re.compile(r"<!-- sh blocks run by: (\S+?)::(\w+) -->")
# The set-up lines, where a page repeats them: the same as README's first block (.ci/run runs its
# first line in a fresh virtualenv; the tour runs what follows the pip install).
SETUP_COPIES = (("README.md", None), ("docs/index.md", None), ("docs/getting-started.md", None))


def doc_files() -> list[pathlib.Path]:
    return [README] + sorted((REPO / "docs").rglob("*.md"))


def sh_blocks(path: pathlib.Path) -> list[tuple[str | None, str]]:
    """(section, text) of every ```sh block of a Markdown file; the section is the "## " heading
    above it, None before the first."""
    out: list[tuple[str | None, str]] = []
    section: str | None = None
    block: list[str] | None = None
    for line in path.read_text().splitlines():
        if block is not None:
            if line.startswith("```"):
                out.append((section, "\n".join(block) + "\n"))
                block = None
            else:
                block.append(line)
        elif line == "```sh":
            block = []
        elif line.startswith("## "):
            section = line[3:].strip()
    return out


def commands(block: str) -> list[str]:
    """A block's shell commands: continuation lines joined, comments and blank lines dropped."""
    joined = re.sub(r"\\\n\s*", " ", block)
    return [line for line in joined.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def section_commands(rel: str, section: str | None) -> list[str]:
    blocks = [text for sec, text in sh_blocks(REPO / rel) if sec == section]
    assert blocks, f"{rel} has no ```sh block under {section!r}"
    return [c for text in blocks for c in commands(text)]


def readme_commands(tour=TOUR) -> list[str]:
    """The tour's commands, in order."""
    return [c for rel, section in tour for c in section_commands(rel, section)]


def first_command() -> str:
    return re.search(r"```sh\n(.*?)\n", README.read_text()).group(1)


def test_readme_starts_with_install_and_test_commands():
    text = README.read_text()
    first, second = re.search(r"```sh\n(.*?)```", text, re.S).group(1).strip().splitlines()
    assert first == "pip install '.[spark]' && icectl demo && icectl describe demo.events"
    assert second == "bash .ci/run"
    ci = (REPO / ".ci" / "run").read_text()
    assert '-m pytest -p no:cacheprovider' in ci


def test_readme_is_short_and_links_the_docs():
    text = README.read_text()
    assert len(text.encode()) < README_LIMIT, f"README.md is {len(text.encode())} bytes; keep it under 12 KB"
    linked = set(re.findall(r"\]\(([^)#:]+)", text))
    for target in linked:
        assert (REPO / target).exists(), f"README links {target}, which does not exist"
    for page in ("getting-started", "configuration", "maintenance", "scheduling", "spark", "tables", "incidents",
                 "statistics", "format-versions", "exit-codes", "table-properties", "reference/commands",
                 "reference/json-output", "reference/validation-codes"):
        assert f"docs/{page}.md" in linked, f"README does not link docs/{page}.md"
    assert "CONTRIBUTING.md" in linked


def test_readme_lists_every_command():
    from tools.gendocs import build_tree

    table = README.read_text().split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    for cmd in build_tree().root.subcommands:
        assert f"`{cmd.name}`" in table, f"README's command table lacks `{cmd.name}`"


def test_setup_copies_are_the_readme_setup():
    readme_setup = sh_blocks(README)[0][1].splitlines()
    for rel, section in SETUP_COPIES:
        for sec, text in sh_blocks(REPO / rel):
            if sec == section:
                assert set(text.splitlines()) <= set(readme_setup), f"{rel}: {text!r} is not README's set-up"


def _page_runner(path: pathlib.Path) -> bool:
    """Whether the page names the test that runs its blocks (a test that exists and names the page)."""
    m = PAGE_RUNNER.search(path.read_text())
    if m is None:
        return False
    test_file = REPO / m.group(1)
    assert test_file.exists(), f"{path.name}: {m.group(1)} does not exist"
    source = test_file.read_text()
    assert re.search(rf"^def {m.group(2)}\(", source, re.M), f"{path.name}: {m.group(1)} has no {m.group(2)}"
    assert path.relative_to(REPO).as_posix() in source or path.name in source, \
        f"{m.group(1)} does not name {path.relative_to(REPO).as_posix()}"
    return True


def test_every_sh_block_is_run_by_a_test():
    claimed = set(TOUR) | set(ELSEWHERE) | set(SETUP_COPIES)
    unclaimed = [(p.relative_to(REPO).as_posix(), sec) for p in doc_files() for sec, _ in sh_blocks(p)
                 if (p.relative_to(REPO).as_posix(), sec) not in claimed and not _page_runner(p)]
    assert not unclaimed, f"```sh blocks no test runs (run them, or make them ```console): {unclaimed}"
    for rel, section in TOUR + tuple(ELSEWHERE):
        assert section_commands(rel, section)


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
    for k in ("ICECTL_CONFIG", "ICECTL_CATALOG", "COLUMNS"):
        env.pop(k, None)
    return env


def _sh(cmd: str, work: pathlib.Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=work, env=env, capture_output=True,
                          text=True, timeout=900)


# A commit time or an epoch-millisecond cutoff (the demo's are relative to now), and a size (metadata
# files hold the warehouse's path, so theirs depend on the folder).
_TIMES = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} UTC|\(\d{13}\)| *\d+(\.\d+)? [KMG]iB")


def test_readme_quick_start_output_is_the_demos(tmp_path):
    """Each ```sh block of README's quick start that a ```text block follows prints that text on
    the demo table (times and sizes aside)."""
    env = _env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    assert _sh("icectl demo", work, env).returncode == 0
    section = README.read_text().split("\n## Quick start\n", 1)[1].split("\n## ", 1)[0]
    pairs = re.findall(r"```sh\n(.*?)```\n\n```text\n(.*?)```", section, re.S)
    assert len(pairs) >= 2
    for cmd, shown in pairs:
        proc = _sh(cmd.strip(), work, env)
        assert proc.returncode == 0, proc.stderr
        real = _TIMES.sub("T", proc.stdout).splitlines()
        for line in _TIMES.sub("T", shown).splitlines():
            assert line in real, f"README shows {line!r} for `{cmd.strip()}`; it prints:\n{proc.stdout}"


@pytest.mark.spark
@pytest.mark.slow
def test_readme_tour_runs_on_the_demo_table(tmp_path):
    env = _env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    setup = first_command().split("&&", 1)[1].strip()  # what follows the pip install
    tour = readme_commands()
    for cmd in [setup] + tour:
        proc = _sh(cmd, work, env)
        assert proc.returncode == 0, f"{cmd}\nexit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        assert "Traceback" not in proc.stderr, proc.stderr
