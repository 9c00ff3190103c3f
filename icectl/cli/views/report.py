"""What ``profile`` and ``report`` print. ``profile``: a table's shape as bar charts in the terminal
(rich tables with bars of block characters on a terminal, ``#`` bars in plain columns when piped),
fitted to the width. ``report --html``: one line naming the page :mod:`icectl.cli.views.report_html`
wrote."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from icectl.cli.context import Env
from icectl.cli.output import fmt_bytes, num, plain_table, say, text_renderer
from icectl.cli.views.validate import ValidationView

if TYPE_CHECKING:
    from icectl.ops.inspect.profile import DayActivity, PartitionLoad, SizeBin, TableProfile

# The charts, in the order the terminal shows them (the page adds the timeline).
TERMINAL_CHARTS = ("file sizes", "activity per day", "partition sizes", "delete load")
DAYS_SHOWN = 14  # the terminal shows the latest days; the page shows them all
PARTITIONS_SHOWN = 15
MIN_BAR, MAX_BAR = 8, 40


@dataclass
class ProfileView:
    """``profile``'s result: the numbers of the charts it draws."""

    table: str
    charts: list[str]  # the charts drawn, by title
    profile: TableProfile


@dataclass
class ReportView:
    """``report``'s result: the page written, its charts, the numbers they draw and the validate
    findings it shows."""

    table: str
    html: str  # the page written
    charts: list[str]
    profile: TableProfile
    validation: ValidationView


# -- bars -------------------------------------------------------------------------------------------

_EIGHTHS = " ▏▎▍▌▋▊▉"


def bar(value: float, top: float, width: int, *, plain: bool) -> str:
    """``value`` as a bar of ``width`` cells at most (``top`` fills it): block characters in
    eighths of a cell, or ``#`` per whole cell when plain. A value above 0 shows at least a sliver."""
    if top <= 0 or value <= 0:
        return ""
    cells = value / top * width
    if plain:
        return "#" * max(1, round(cells))
    whole, part = int(cells), int((cells - int(cells)) * 8)
    if whole == 0 and part == 0:
        part = 1
    return "█" * whole + (_EIGHTHS[part] if part else "")


def _width(env: Env) -> int:
    if env.is_terminal():
        return int(env.console().width)
    try:
        return int(os.environ.get("COLUMNS", "80"))
    except ValueError:
        return 80


def _bar_width(env: Env, rows: list[list[str]], headers: list[str], bars: int = 1) -> int:
    """What is left of the width for each bar column after the other columns (and their gaps)."""
    used = sum(max([len(h)] + [len(r[i]) for r in rows]) + 2 for i, h in enumerate(headers))
    return max(MIN_BAR, min(MAX_BAR, (_width(env) - used - 2 * bars - 1) // bars))


def _chart(env: Env, title: str, headers: list[str], rows: list[list[str]], bars: list[tuple[int, list[float]]],
           *, right: set[str], style: list[str | None] | None = None, note: str | None = None) -> None:
    """A table whose columns ``bars`` (index, values) are drawn as bars, fitted to the width."""
    plain = not env.is_terminal()
    others = [i for i in range(len(headers)) if i not in {b for b, _ in bars}]
    width = _bar_width(env, [[r[i] for i in others] for r in rows], [headers[i] for i in others], len(bars))
    cells = [list(r) for r in rows]
    for index, values in bars:
        top = max(values, default=0)
        for r, v in zip(cells, values):
            r[index] = bar(v, top, width, plain=plain)
    if plain:
        env.stdout.write(title + "\n")
        plain_table(env, headers, cells, right=right)
        if note:
            env.stdout.write(note + "\n")
        env.stdout.write("\n")
        return
    from rich.table import Table  # rich: on a terminal only
    from rich.text import Text

    # No box: columns two spaces apart (as piped), so the widths measured above are the ones drawn.
    t = Table(title=title, title_justify="left", box=None, padding=(0, 1), pad_edge=False,
              header_style="bold underline")
    bar_columns = {b for b, _ in bars}
    for i, h in enumerate(headers):
        t.add_column(h, justify="right" if h in right else "left", no_wrap=True,
                     min_width=width if i in bar_columns else None)
    for n, r in enumerate(cells):
        s = style[n] if style else None
        t.add_row(*(Text(c, style=s if i in bar_columns else None) for i, c in enumerate(r)))
    console = env.console()
    console.print(t)
    if note:
        console.print(Text(note, style="dim"))
    console.print()


def size_label(b: SizeBin) -> str:
    if b.upper is None:
        return f">= {fmt_bytes(b.lower)}"
    if b.lower == 0:
        return f"< {fmt_bytes(b.upper)}"
    return f"{fmt_bytes(b.lower)} - {fmt_bytes(b.upper)}"


KIND_NOTE = {"small": "", "target": "target range", "over": "over target", "large": "compact splits"}
KIND_STYLE = {"small": "yellow", "target": "green", "over": "green", "large": "red"}


def _file_sizes(env: Env, p: TableProfile) -> None:
    fs = p.file_sizes
    rows = [[size_label(b), num(b.files), "", KIND_NOTE[b.kind]] for b in fs.bins]
    note = f"{fs.small_files} of {fs.data_files} under {fmt_bytes(fs.min_file_size)} (compact rewrites them)"
    if fs.median_file_size is not None:
        note += f"; median {fmt_bytes(fs.median_file_size)}"
    _chart(env, f"Data file sizes, target {fmt_bytes(fs.target_file_size)}",
           ["size", "files", "", ""], rows, [(2, [b.files for b in fs.bins])], right={"files"},
           style=[KIND_STYLE[b.kind] for b in fs.bins], note=note)


def _activity(env: Env, days: list[DayActivity]) -> None:
    shown = days[-DAYS_SHOWN:]
    rows = [[d.day, num(d.snapshots), "", fmt_bytes(d.added_bytes), "",
             " ".join(([f"+{num(d.added_records)}"] if d.added_records else [])
                      + ([f"-{num(d.removed_records)}"] if d.removed_records else []))] for d in shown]
    note = f"{len(days) - len(shown)} earlier days not shown" if len(days) > len(shown) else None
    _chart(env, "Snapshots and data added per day (UTC)", ["day", "snapshots", "", "added", "", "records"], rows,
           [(2, [d.snapshots for d in shown]), (4, [d.added_bytes for d in shown])], right={"snapshots", "added"},
           note=note if days else "no snapshots")


def _partitions(env: Env, p: TableProfile) -> None:
    parts = [x for x in p.partitions if x.data_files][:PARTITIONS_SHOWN]
    skew = f"largest is {p.partition_skew}x the median" if p.partition_skew is not None else "fewer than 2 partitions"
    rows = [[x.partition or "(unpartitioned)", num(x.data_files), fmt_bytes(x.data_bytes), ""] for x in parts]
    more = len([x for x in p.partitions if x.data_files]) - len(parts)
    _chart(env, f"Partition sizes ({skew})", ["partition", "files", "size", ""], rows,
           [(3, [x.data_bytes for x in parts])], right={"files", "size"},
           note=f"{more} smaller partitions not shown" if more > 0 else None)


def _delete_load(env: Env, partitions: list[PartitionLoad]) -> None:
    loaded = sorted((x for x in partitions if x.delete_files), key=lambda x: (-x.delete_records, -x.delete_files))
    shown = loaded[:PARTITIONS_SHOWN]
    rows = [[x.partition or "(unpartitioned)", num(x.delete_files), num(x.delete_records),
             f"{x.delete_ratio:.1%}", ""] for x in shown]
    note = "no delete files" if not loaded else (
        f"{len(loaded) - len(shown)} more partitions with deletes" if len(loaded) > len(shown) else None)
    _chart(env, "Delete load per partition (rows deleted by live delete files)",
           ["partition", "delete files", "deleted rows", "of rows", ""], rows,
           [(4, [x.delete_records for x in shown])], right={"delete files", "deleted rows", "of rows"},
           style=["red" if x.delete_ratio >= 0.1 else "yellow" for x in shown], note=note)


@text_renderer(ReportView)
def _report_text(env: Env, r: ReportView) -> None:
    v = r.validation
    found = "no findings" if not v.findings else f"{v.errors} errors, {v.warnings} warnings"
    say(env, f"wrote {r.html}: {len(r.charts)} charts of {r.table}, validate: {found}")


@text_renderer(ProfileView)
def _profile_text(env: Env, r: ProfileView) -> None:
    p = r.profile
    fs = p.file_sizes
    say(env, (f"{p.table}", "bold"), f": format version {p.format_version}, snapshot {p.snapshot_id}")
    say(env, f"{num(fs.data_files)} data files, {fmt_bytes(fs.data_bytes)}, {len(p.timeline)} snapshots")
    say(env, "")
    _file_sizes(env, p)
    _activity(env, p.days)
    _partitions(env, p)
    _delete_load(env, p.partitions)
