"""Output that fits the terminal: the installed ``icectl`` runs in a real pseudo-terminal (a pty
whose size is set with TIOCSWINSZ) at 80 and 120 columns on the demo table, and every line it
draws fits the width, with every snapshot id whole; piped, the same commands print plain lines
(no box drawing) with every column."""
from __future__ import annotations

import fcntl
import json
import os
import pathlib
import re
import shlex
import struct
import subprocess
import sys
import termios

import pytest

ICECTL = str(pathlib.Path(sys.executable).with_name("icectl"))
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
BOX = set("┏┳┓┃┡╇┩│└┴┘━─")
COMMANDS = [
    ["describe", "demo.events"],
    ["snapshots", "demo.events"],
    ["snapshots", "demo.events", "--tree"],
    ["files", "demo.events"],
    ["refs", "demo.events"],
    ["diff", "demo.events", "main", "audit"],
    ["health", "demo.events"],
    ["expire", "demo.events", "--dry-run", "--explain"],
]
# what each command shows of the table's snapshots (the others show the ids they are about)
ALL_IDS = {"snapshots", "snapshots --tree"}


def clean_env(home: pathlib.Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "ICECTL_CONFIG", "ICECTL_CATALOG")}
    env.update(HOME=str(home), TERM="xterm-256color", NO_COLOR="1")
    return env


def in_terminal(args: list[str], *, columns: int, cwd: pathlib.Path,
                extra_env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run ``icectl ARGS`` with a pseudo-terminal of ``columns`` columns as its stdin, stdout and
    stderr; what it wrote, without escape sequences, with \\n line ends."""
    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    proc = subprocess.Popen([ICECTL, *args], stdin=follower, stdout=follower, stderr=follower, cwd=cwd,
                            env={**clean_env(cwd / "home"), **(extra_env or {})}, close_fds=True)
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    code = proc.wait(timeout=120)
    return code, ANSI.sub("", b"".join(chunks).decode()).replace("\r\n", "\n")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[pathlib.Path, list[int], dict[str, int]]:
    cwd = tmp_path_factory.mktemp("terminal")
    subprocess.run([ICECTL, "demo"], cwd=cwd, env=clean_env(cwd / "home"), check=True, capture_output=True)
    out = subprocess.run([ICECTL, "-o", "json", "snapshots", "demo.events"], cwd=cwd, env=clean_env(cwd / "home"),
                         check=True, capture_output=True, text=True).stdout
    refs = subprocess.run([ICECTL, "-o", "json", "refs", "demo.events"], cwd=cwd, env=clean_env(cwd / "home"),
                          check=True, capture_output=True, text=True).stdout
    return cwd, [r["snapshot_id"] for r in json.loads(out)], {r["name"]: r["snapshot_id"] for r in json.loads(refs)}


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(c[:1] + c[2:]) for c in COMMANDS])
def test_fits_the_terminal_and_ids_stay_whole(demo, args, columns):
    cwd, ids, refs = demo
    code, text = in_terminal(args, columns=columns, cwd=cwd)
    assert code in (0, 13), text  # health: 13 = maintenance recommended
    lines = text.splitlines()
    too_long = [line for line in lines if len(line) > columns]
    assert not too_long, f"{len(too_long)} lines wider than {columns}:\n" + "\n".join(too_long)
    assert any(c in BOX for c in text) or args[0] in ("health",) or "--tree" in args
    name = " ".join(args[:1] + args[2:])
    wanted = ids if name in ALL_IDS else list(refs.values()) if name in ("describe", "refs") else \
        [refs["main"], refs["audit"]] if name == "diff main audit" else []
    if name.startswith("expire"):
        wanted = json.loads(subprocess.run([ICECTL, "-o", "json", *args], cwd=cwd, env=clean_env(cwd / "home"),
                                           check=True, capture_output=True, text=True).stdout)["retained_snapshot_ids"]
    for sid in wanted:
        assert str(sid) in text, f"snapshot {sid} is not shown whole at {columns} columns:\n{text}"
    # no id is split over two lines: no line ends with the start of an id that is not whole on it
    for line in lines:
        for sid in map(str, ids):
            for k in range(6, len(sid)):
                assert not re.search(rf"\b{sid[:k]}\s*[│┃]?\s*$", line), f"{sid} broken in: {line}"


def test_narrow_terminal_leaves_lesser_columns_out_and_wide_shows_them(demo):
    cwd, ids, _ = demo
    _, narrow = in_terminal(["snapshots", "demo.events"], columns=80, cwd=cwd)
    header = next(line for line in narrow.splitlines() if "┃ snapshot" in line)
    assert "+records" not in header and "--wide shows them" in narrow
    _, wide = in_terminal(["--wide", "snapshots", "demo.events"], columns=80, cwd=cwd)
    header = next(line for line in wide.splitlines() if "┃ snapshot" in line)
    assert "+records" in header and "-deletes" in header and all(str(s) in wide for s in ids)


def test_paths_relative_to_the_table_location_and_shortened_in_the_middle(demo):
    cwd, _, _ = demo
    files = json.loads(subprocess.run([ICECTL, "-o", "json", "files", "demo.events"], cwd=cwd,
                                      env=clean_env(cwd / "home"), check=True, capture_output=True, text=True).stdout)
    location = str(cwd / "warehouse" / "demo" / "events")
    _, text = in_terminal(["files", "demo.events"], columns=80, cwd=cwd)
    assert f"paths under {location}" in text
    body = [line for line in text.splitlines() if line.startswith("│")]
    assert len(body) == len(files) and all("│ data/" in line and "\u2026" in line for line in body)
    rels = [f["file_path"][len(location) + 1:] for f in files]
    for line in body:  # each shown path is the head and the tail of one relative path
        head, tail = line.split("│")[2].strip().split("\u2026")
        assert len(head) >= 6 and len(tail) >= 12 and any(r.startswith(head) and r.endswith(tail) for r in rels), line


def test_piped_output_is_plain_lines_with_every_column(demo):
    cwd, ids, _ = demo
    env = clean_env(cwd / "home")
    out = subprocess.run([ICECTL, "snapshots", "demo.events"], cwd=cwd, env=env, check=True, capture_output=True,
                         text=True).stdout
    assert not BOX & set(out)
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["snapshot", "parent"] and "+records" in lines[0]
    assert [line.split()[0] for line in lines[1:]] == [str(s) for s in ids]  # one record a line, awk '{print $1}'
    files = subprocess.run([ICECTL, "files", "demo.events"], cwd=cwd, env=env, check=True, capture_output=True,
                           text=True).stdout
    assert str(cwd / "warehouse" / "demo" / "events" / "data") in files and "\u2026" not in files


def test_compact_dry_run_prints_one_pasteable_line_and_keeps_the_plan(demo, tmp_path):
    cwd, _, _ = demo
    keep = tmp_path / "plan"
    code, text = in_terminal(["compact", "demo.events", "--dry-run", "--keep-plan", str(keep)], columns=80, cwd=cwd)
    assert code == 0, text
    d = json.loads(subprocess.run([ICECTL, "-o", "json", "compact", "demo.events", "--dry-run", "--keep-plan",
                                   str(keep)], cwd=cwd, env=clean_env(cwd / "home"), check=True, capture_output=True,
                                  text=True).stdout)
    line = next(x for x in text.splitlines() if "spark-submit --master" in x or x.startswith(d["spark_submit"][0]))
    assert shlex.split(line) == d["spark_submit"]  # the whole command on one line, shell-quoted
    assert "plan_file" not in d and str(keep / "plan.json") in d["spark_submit"] and str(keep / "plan.json") in text
    assert json.loads((keep / "plan.json").read_text())  # kept, and the command's --plan names it


def test_columns_variable_is_honoured(demo):
    cwd, ids, _ = demo
    code, text = in_terminal(["snapshots", "demo.events"], columns=200, cwd=cwd, extra_env={"COLUMNS": "80"})
    assert code == 0 and max(len(line) for line in text.splitlines()) <= 80
    assert all(str(s) in text for s in ids)
