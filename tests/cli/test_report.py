"""``icectl profile`` and ``icectl report --html`` on the demo table. profile: the four charts in a
real pseudo-terminal at 80 and 120 columns (no line wider than the terminal, bars of block
characters, the snapshot id whole), piped (plain columns, ``#`` bars, no box drawing), ``-o json``
(the profile). report: one page with five inline SVG charts that loads nothing (no script, no
external URL), the validate findings on it, and one line naming the extra when matplotlib is
missing. (The page in a real browser: tests/cli/test_report_browser.py.)"""
from __future__ import annotations

import fcntl
import io
import json
import os
import pathlib
import pty
import re
import shlex
import struct
import subprocess
import sys
import termios

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))  # tests/cli for output_shapes
from output_shapes import SHAPES, check_shape  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
TITLES = ["Data file sizes, target 512 MiB", "Snapshots and data added per day (UTC)", "Partition sizes",
          "Delete load per partition"]
BOX_DRAWING = re.compile("[\u2500-\u257f]")
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> list[str]:
    """The catalog options of a SQL catalog holding demo.events."""
    root = tmp_path_factory.mktemp("report")
    opts = ["--uri", f"sqlite:///{root}/catalog.db", "--warehouse", str(root / "wh")]
    code, _, err = icectl(*opts, "demo")
    assert code == 0, err
    return opts


def icectl(*args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(list(args), env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def in_terminal(args: list[str], columns: int) -> str:
    """``icectl ARGS`` in a pseudo-terminal ``columns`` wide: what a person sees, without colors."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env["TERM"] = "xterm-256color"
    proc = subprocess.Popen([sys.executable, "-m", "icectl", *args], stdin=follower, stdout=follower,
                            stderr=subprocess.PIPE, env=env, close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # the follower side closed: the command ended
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(timeout=120) == 0, proc.stderr.read().decode()
    proc.stderr.close()
    return ANSI.sub("", b"".join(chunks).decode("utf-8")).replace("\r\n", "\n")


@pytest.mark.parametrize("columns", [80, 120])
def test_charts_fit_the_terminal(demo, columns):
    out = in_terminal([*demo, "profile", "demo.events"], columns)
    lines = out.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= columns, out
    assert "…" not in out, out  # the bars took only the room left: no column was cut to fit
    for title in TITLES:
        assert any(line.startswith(title) for line in lines), f"{title!r} not in:\n{out}"
    assert "█" in out and not BOX_DRAWING.search(out)
    code, doc, _ = icectl(*demo, "-o", "json", "profile", "demo.events")
    profile = json.loads(doc)["profile"]
    assert str(profile["snapshot_id"]) in out  # an identifier is never cut or wrapped
    # the largest bar fills the width it is given, the bars of the other rows are shorter
    sizes = [line for line in lines if re.match(r"^\d+(\.\d)? \w?i?B - ", line)]
    assert len(sizes) == sum(1 for b in profile["file_sizes"]["bins"] if b["lower"] and b["upper"])


def test_piped_text_is_plain_columns(demo):
    code, out, err = icectl(*demo, "profile", "demo.events")
    assert code == 0 and err == ""
    assert not BOX_DRAWING.search(out) and "█" not in out
    for title in TITLES:
        assert title in out
    # one record a line: the bin with 13 of the 14 files has the longest bar
    row = next(line for line in out.splitlines() if line.startswith("1 KiB - 4 KiB"))
    assert row.split()[5] == "13" and row.rstrip().endswith("#" * 10)
    assert "14 of 14 under 384 MiB (compact rewrites them)" in out
    assert re.search(r"^ts_day=2026-03-01 +2 +8 +3\.3% +#+$", out, re.M), out


def test_json_is_the_profile(demo):
    code, out, err = icectl(*demo, "-o", "json", "profile", "demo.events")
    assert code == 0 and err == ""
    doc = json.loads(out)
    check_shape(doc, SHAPES["profile"])
    assert doc["charts"] == ["file sizes", "activity per day", "partition sizes", "delete load"]
    p = doc["profile"]
    assert sum(b["files"] for b in p["file_sizes"]["bins"]) == p["file_sizes"]["data_files"] == 14
    assert sum(d["snapshots"] for d in p["days"]) == len(p["timeline"]) == 11
    assert {r["name"] for r in p["refs"]} == {"main", "audit", "before-overwrite"}


def test_html_page_is_self_contained(demo, tmp_path):
    page = tmp_path / "report.html"
    code, out, err = icectl(*demo, "-o", "json", "report", "demo.events", "--html", str(page))
    assert code == 0 and err == ""
    doc = json.loads(out)
    check_shape(doc, SHAPES["report"])
    assert doc["html"] == str(page) and len(doc["charts"]) == 5
    assert doc["validation"]["ok"] is True
    text = page.read_text()
    assert text.count('<figure class="chart"') == 5 == len(re.findall(r'<figure class="chart"[^>]*><svg', text))
    # nothing to fetch: no script, no stylesheet or image by URL, links only to ids inside the page
    assert not re.search(r"<script|<link|<img|<iframe|@import|url\((?!#)", text, re.I)
    assert not re.search(r"\b(?:src|href)=\"(?!#)", text), re.findall(r"\b(?:src|href)=\"[^#][^\"]*\"", text)[:3]
    for ref in doc["profile"]["refs"]:
        assert f"<code>{ref['snapshot_id']}</code>" in text and ref["name"] in text
    assert "valid: no findings" in text
    code, out, err = icectl(*demo, "report", "demo.events", "--html", str(page))
    assert code == 0 and out == f"wrote {page}: 5 charts of demo.events, validate: no findings\n"


def test_html_page_shows_the_validate_findings(demo, tmp_path):
    """A table with an error (the tag's manifest list is gone; the current snapshot, which the
    charts read, is whole): the page is written (exit 0: the report is the result) and lists the
    finding with its code and snapshot."""
    code, out, _ = icectl(*demo, "-o", "json", "snapshots", "demo.events")
    tagged = next(s for s in json.loads(out) if "before-overwrite" in s["refs"])
    victim = pathlib.Path(tagged["manifest_list"])
    saved = victim.read_bytes()
    victim.unlink()
    try:
        page = tmp_path / "broken.html"
        code, out, err = icectl(*demo, "-o", "json", "report", "demo.events", "--html", str(page))
        assert code == 0, err
        doc = json.loads(out)
        assert doc["validation"]["ok"] is False and doc["validation"]["errors"] == 1
        text = page.read_text()
        assert "MANIFEST_LIST_UNREADABLE" in text and f"snapshot {tagged['snapshot_id']}" in text
        assert "valid: no findings" not in text
        code, out, err = icectl(*demo, "report", "demo.events", "--html", str(page))
        assert out.endswith("validate: 1 errors, 0 warnings\n")
    finally:
        victim.write_bytes(saved)


def test_without_matplotlib_one_line_names_the_extra(demo, tmp_path):
    """A Python where ``import matplotlib`` fails (as without the extra): report is one line and a
    hint naming the extra both ways (exit 7), profile still draws."""
    page = tmp_path / "r.html"
    script = ("import sys; sys.modules['matplotlib'] = None; from icectl.cli.main import run; "
              "sys.exit(run(sys.argv[1:]))")

    def without(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-c", script, *demo, *args], capture_output=True, text=True,
                              timeout=120)

    done = without("report", "demo.events", "--html", str(page))
    assert done.returncode == ExitCode.UNSUPPORTED and done.stdout == "" and not page.exists()
    assert done.stderr.splitlines() == [
        "icectl: error: report --html needs matplotlib, in the extra icectl[report]",
        "hint: pip install 'icectl[report]' (from a checkout: pip install '.[report]')"]
    done = without("profile", "demo.events")
    assert done.returncode == 0 and "Delete load per partition" in done.stdout


def test_a_page_that_cannot_be_written_is_one_line(demo, tmp_path):
    code, out, err = icectl(*demo, "report", "demo.events", "--html", str(tmp_path / "no" / "such" / "r.html"))
    assert code == ExitCode.STORAGE and "cannot write" in err and "Traceback" not in err


def test_the_docs_page_runs(tmp_path, monkeypatch):
    """docs/report.md: its ``sh`` blocks run as written (the local default catalog in a fresh folder;
    the install lines are the reader's), and the error it quotes is the one icectl prints."""
    text = (REPO / "docs" / "report.md").read_text()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    commands = [line.split("#")[0].strip() for block in re.findall(r"```sh\n(.*?)```", text, re.S)
                for line in block.splitlines() if line.strip()]
    assert [c for c in commands if c.startswith("pip install")] == ["pip install 'icectl[report]'",
                                                                     "pip install '.[report]'"]
    ran = [c for c in commands if not c.startswith("pip install")]
    assert ran == ["icectl demo", "icectl profile demo.events", "icectl report demo.events --html report.html"]
    for command in ran:
        code, out, err = icectl(*shlex.split(command)[1:])
        assert code == 0, f"{command}: {err}"
    assert (tmp_path / "report.html").exists()
    assert out == "wrote report.html: 5 charts of demo.events, validate: no findings\n"
    assert out in text
    assert "icectl: error: report --html needs matplotlib, in the extra icectl[report]\n" \
           "hint: pip install 'icectl[report]' (from a checkout: pip install '.[report]')\n" in text
    assert (REPO / "docs" / "images" / "report.png").exists() and "](images/report.png)" in text
