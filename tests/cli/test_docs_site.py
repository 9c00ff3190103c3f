"""The docs site (mkdocs.yml, docs/) builds without a warning: every link and anchor resolves and
every page is in the navigation. `.ci/run` installs the docs extra (`pip install -e '.[test,docs]'`)
and builds the site before the suite too; without mkdocs installed the build test is skipped,
except under CI."""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]


def _nav_pages(nav) -> list[str]:
    out: list[str] = []
    for item in nav:
        value = next(iter(item.values())) if isinstance(item, dict) else item
        if isinstance(value, list):
            out += _nav_pages(value)
        else:
            out.append(value)
    return out


def test_every_docs_page_is_in_the_nav():
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text())
    assert config["docs_dir"] == "docs" and config["strict"] is True
    nav = _nav_pages(config["nav"])
    pages = sorted(p.relative_to(REPO / "docs").as_posix() for p in (REPO / "docs").rglob("*.md"))
    assert sorted(nav) == pages, f"add to mkdocs.yml's nav: {sorted(set(pages) - set(nav))}; " \
                                 f"not in docs/: {sorted(set(nav) - set(pages))}"


def test_mkdocs_build_strict(tmp_path):
    try:
        import mkdocs  # noqa: F401  (only to know whether the docs extra is installed)
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("mkdocs not installed (pip install -e '.[docs]')")
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=REPO, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "WARNING" not in proc.stderr, proc.stderr[-4000:]
    assert (tmp_path / "site" / "reference" / "commands" / "index.html").exists()
