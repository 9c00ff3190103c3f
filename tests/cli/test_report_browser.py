"""``icectl report demo.events --html r.html`` opened in headless Chromium (Debian's ``chromium``),
with the network emulated offline and no proxy or DNS to reach anything: the page loads, draws its
charts (each an SVG with a real size and drawn marks), logs no console error, throws nothing and
requests nothing but itself. The screenshot of the whole page is written to tmp_path, and to
docs/images/report.png (the picture on docs/report.md) with ICECTL_UPDATE_DOCS_IMAGES=1.

The driver is tests/chromium.py (the DevTools protocol over a pipe). A page with a console error,
an uncaught exception and an image from the internet is seen failing by the same checks, so they
cannot pass by seeing nothing."""
from __future__ import annotations

import io
import os
import pathlib
import shutil
import struct
import sys

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for chromium
from chromium import chromium_path, open_page  # noqa: E402

pytestmark = pytest.mark.browser

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCS_IMAGE = REPO / "docs" / "images" / "report.png"

# The charts drawn: an inline SVG at least 300x100 CSS pixels with at least 5 drawn paths.
CHARTS_DRAWN = """Array.from(document.querySelectorAll('figure.chart > svg')).map(s => {
  const r = s.getBoundingClientRect();
  return {chart: s.parentElement.dataset.chart, width: r.width, height: r.height,
          marks: s.querySelectorAll('path, rect, use').length};
})"""


@pytest.fixture(scope="module")
def chromium() -> str:
    found = chromium_path()
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed (.ci/run installs Debian's chromium)")
        pytest.skip("chromium is not installed (Debian: apt-get install chromium)")
    return found


def icectl(*args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(list(args), env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


def test_the_page_renders_its_charts_offline_without_errors(chromium, tmp_path):
    opts = ["--uri", f"sqlite:///{tmp_path}/catalog.db", "--warehouse", str(tmp_path / "wh")]
    code, _, err = icectl(*opts, "demo")
    assert code == 0, err
    page = tmp_path / "r.html"
    code, out, err = icectl(*opts, "report", "demo.events", "--html", str(page))
    assert code == 0, err
    result = open_page(str(page), CHARTS_DRAWN)
    assert result.errors == [], result.errors
    assert result.requests == [page.resolve().as_uri()], result.requests  # the page itself, nothing else
    charts = result.value
    drawn = [c for c in charts if c["width"] >= 300 and c["height"] >= 100 and c["marks"] >= 5]
    assert len(drawn) >= 4, charts
    assert [c["chart"] for c in charts] == ["file sizes", "activity per day", "snapshot timeline", "partition skew",
                                            "delete load"]
    width, height = png_size(result.screenshot)
    assert width == 1000 and height > 1500
    (tmp_path / "report.png").write_bytes(result.screenshot)
    if os.environ.get("ICECTL_UPDATE_DOCS_IMAGES") == "1":
        DOCS_IMAGE.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tmp_path / "report.png", DOCS_IMAGE)
    assert DOCS_IMAGE.exists(), f"{DOCS_IMAGE} is missing: run this test with ICECTL_UPDATE_DOCS_IMAGES=1"


def test_the_checks_see_errors_and_requests(chromium, tmp_path):
    page = tmp_path / "bad.html"
    page.write_text('<!DOCTYPE html><html><body><img src="https://example.com/x.png">'
                    '<script>console.error("boom"); no_such_function();</script></body></html>')
    result = open_page(str(page), "document.querySelectorAll('figure.chart > svg').length")
    assert result.value == 0
    assert any("boom" in e for e in result.errors), result.errors
    assert any("no_such_function" in e for e in result.errors), result.errors
    assert any("example.com" in e for e in result.errors), result.errors  # the offline network refused it
    assert "https://example.com/x.png" in result.requests
