"""``report --html``: one self-contained HTML page for an incident ticket. The charts are drawn by
matplotlib as SVG, inline in the page, text as paths (they look the same in any browser, with no
font installed); the page has no script and loads nothing: it opens with the network off, in a
ticket system's viewer that blocks scripts, and prints to PDF as it is shown.

matplotlib is the extra ``icectl[report]``: only this page needs it, and only ``icectl report``
loads this module (``profile``, the same charts in the terminal, does not); without it, writing a
page is one line naming the extra.
"""
from __future__ import annotations

import datetime as dt
import html
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

try:
    import matplotlib
    import matplotlib.dates
    import matplotlib.figure
    import matplotlib.ticker
except ImportError:  # the extra icectl[report] is not installed: write_report_html says so
    matplotlib = None  # type: ignore[assignment]

from icectl import __version__
from icectl.cli.output import fmt_bytes, fmt_ts, num
from icectl.cli.views.report import size_label
from icectl.errors import StorageError, UnsupportedError

if TYPE_CHECKING:
    from icectl.cli.views.validate import ValidationView
    from icectl.ops.inspect.profile import TableProfile

INSTALL_HINT = "pip install 'icectl[report]' (from a checkout: pip install '.[report]')"
PARTITIONS_CHARTED = 30
KIND_COLOR = {"small": "#e0a030", "target": "#3a9a4a", "over": "#6cbf6c", "large": "#c84040"}
OPERATION_COLOR = {"append": "#3a9a4a", "overwrite": "#e07b20", "delete": "#c84040", "replace": "#3070c0"}
WIDTH_IN = 9.0  # figure width in inches (at 96 px an inch in the page)


def _matplotlib() -> Any:
    if matplotlib is None:
        raise UnsupportedError("report --html needs matplotlib, in the extra icectl[report]", hint=INSTALL_HINT)
    return matplotlib


def _svg(mpl: Any, fig: Any) -> str:
    buf = io.StringIO()
    with mpl.rc_context({"svg.fonttype": "path", "svg.hashsalt": "icectl"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = buf.getvalue()
    return svg[svg.index("<svg"):]  # without the XML declaration and DOCTYPE: inline in HTML


def _figure(mpl: Any, *, height: float) -> Any:
    # A Figure without pyplot: no global state, no GUI backend (savefig picks matplotlib's SVG writer by the format).
    return mpl.figure.Figure(figsize=(WIDTH_IN, height), layout="constrained")


def _unit(largest: float) -> tuple[int, str]:
    """The binary unit to plot byte counts in, so that the axis ticks fall on round numbers of it."""
    for power, name in ((4, "TiB"), (3, "GiB"), (2, "MiB"), (1, "KiB")):
        if largest >= 1024 ** power:
            return 1024 ** power, name
    return 1, "bytes"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" + ("" if n == 1 else "s")


def _message(ax: Any, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color="#666666")
    ax.set_xticks([])
    ax.set_yticks([])


def chart_file_sizes(mpl: Any, p: TableProfile) -> Any:
    fs = p.file_sizes
    fig = _figure(mpl, height=0.32 * len(fs.bins) + 1.2)
    ax = fig.subplots()
    labels = [size_label(b) for b in fs.bins]
    y = list(range(len(fs.bins)))
    ax.barh(y, [b.files for b in fs.bins], color=[KIND_COLOR[b.kind] for b in fs.bins])
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    for i, b in enumerate(fs.bins):
        if b.files:
            ax.annotate(f"{b.files:,}", (b.files, i), xytext=(3, 0), textcoords="offset points", va="center",
                        fontsize=8)
    target = next(i for i, b in enumerate(fs.bins) if b.kind == "target")
    ax.axhspan(target - 0.5, target + 1.5, color="#3a9a4a", alpha=0.1, zorder=0)
    ax.annotate("compact's target range", (1, target + 0.5), xycoords=("axes fraction", "data"), xytext=(-4, 0),
                textcoords="offset points", ha="right", va="center", fontsize=8, color="#2a7a3a")
    ax.set_xlabel("data files")
    ax.xaxis.set_major_locator(mpl.ticker.MaxNLocator(integer=True))
    ax.set_title(f"Data file sizes against the target {fmt_bytes(fs.target_file_size)}: {fs.small_files} of "
                 f"{fs.data_files} under {fmt_bytes(fs.min_file_size)} (compact rewrites them)", fontsize=10, loc="left")
    return fig


def _day(s: str) -> dt.datetime:
    return dt.datetime.strptime(s, "%Y-%m-%d").replace(tzinfo=dt.timezone.utc)


def _dates(mpl: Any, ax: Any) -> None:
    locator = mpl.dates.AutoDateLocator(tz=dt.timezone.utc)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mpl.dates.ConciseDateFormatter(locator, tz=dt.timezone.utc))


def chart_activity(mpl: Any, p: TableProfile) -> Any:
    fig = _figure(mpl, height=3.6)
    top, bottom = fig.subplots(2, 1, sharex=True)
    if not p.days:
        _message(top, "no snapshots")
        _message(bottom, "no snapshots")
        return fig
    days = [_day(d.day) for d in p.days]
    top.bar(days, [d.snapshots for d in p.days], width=0.8, color="#3070c0")
    top.set_ylabel("snapshots")
    top.yaxis.set_major_locator(mpl.ticker.MaxNLocator(integer=True))
    top.set_title("Snapshots and data added per day (UTC)", fontsize=10, loc="left")
    div, unit = _unit(max(d.added_bytes for d in p.days))
    bottom.bar(days, [d.added_bytes / div for d in p.days], width=0.8, color="#3a9a4a")
    bottom.set_ylabel(f"{unit} added")
    _dates(mpl, bottom)
    return fig


def chart_timeline(mpl: Any, p: TableProfile) -> Any:
    branches = [r.name for r in p.refs if r.type == "branch"]
    lanes = branches + (["(no branch)"] if any(not s.branches for s in p.timeline) else [])
    fig = _figure(mpl, height=0.55 * max(len(lanes), 1) + 1.6)
    ax = fig.subplots()
    if not p.timeline:
        _message(ax, "no snapshots")
        return fig

    def lane(s: Any) -> int:
        return lanes.index(s.branches[0]) if s.branches else len(lanes) - 1

    at = {s.snapshot_id: (dt.datetime.fromtimestamp(s.timestamp_ms / 1000, dt.timezone.utc), lane(s))
          for s in p.timeline}
    for s in p.timeline:  # parent -> child
        if s.parent_snapshot_id in at:
            (x0, y0), (x1, y1) = at[s.parent_snapshot_id], at[s.snapshot_id]
            ax.plot([x0, x1], [y0, y1], color="#999999", linewidth=1, zorder=1)
    seen: set[str] = set()
    for s in p.timeline:
        op = s.operation or "unknown"
        x, y = at[s.snapshot_id]
        ax.scatter([x], [y], s=40, color=OPERATION_COLOR.get(op, "#777777"), zorder=2,
                   label=None if op in seen else op, edgecolors="white", linewidths=0.5)
        seen.add(op)
    for r in p.refs:
        if r.snapshot_id in at:
            x, y = at[r.snapshot_id]
            ax.annotate(r.name if r.type == "branch" else f"tag {r.name}", (x, y), xytext=(4, 7 if r.type == "branch"
                        else -12), textcoords="offset points", fontsize=8,
                        color="#000000" if r.type == "branch" else "#7040a0")
    ax.set_yticks(range(len(lanes)), lanes)
    ax.set_ylim(len(lanes) - 0.4, -0.6)
    ax.legend(loc="upper left", fontsize=8, frameon=False, ncols=len(seen))
    ax.set_title("Snapshot timeline: each branch's history, refs where they point", fontsize=10, loc="left")
    _dates(mpl, ax)
    return fig


def chart_partitions(mpl: Any, p: TableProfile) -> Any:
    parts = [x for x in p.partitions if x.data_files][:PARTITIONS_CHARTED]
    fig = _figure(mpl, height=0.26 * max(len(parts), 1) + 1.2)
    ax = fig.subplots()
    if not parts:
        _message(ax, "no data files")
        return fig
    y = list(range(len(parts)))
    div, unit = _unit(max(x.data_bytes for x in parts))
    ax.barh(y, [x.data_bytes / div for x in parts], color="#3070c0")
    ax.set_yticks(y, [x.partition or "(unpartitioned)" for x in parts], fontsize=8)
    ax.invert_yaxis()
    sizes = sorted(x.data_bytes for x in p.partitions if x.data_files)
    median = (sizes[(len(sizes) - 1) // 2] + sizes[len(sizes) // 2]) / 2
    ax.axvline(median / div, color="#c84040", linestyle="--", linewidth=1, label=f"median {fmt_bytes(int(median))}")
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    ax.set_xlabel(unit)
    skew = f"the largest is {p.partition_skew}x the median" if p.partition_skew is not None else "one partition"
    more = f" (largest {len(parts)} of {len(sizes)})" if len(sizes) > len(parts) else ""
    ax.set_title(f"Partition skew: data bytes per partition, {skew}{more}", fontsize=10, loc="left")
    return fig


def chart_delete_load(mpl: Any, p: TableProfile) -> Any:
    loaded = sorted((x for x in p.partitions if x.delete_files),
                    key=lambda x: (-x.delete_records, -x.delete_files))[:PARTITIONS_CHARTED]
    fig = _figure(mpl, height=0.3 * max(len(loaded), 1) + 1.2)
    ax = fig.subplots()
    ax.set_title("Delete load per partition: rows deleted by live delete files, of the partition's rows",
                 fontsize=10, loc="left")
    if not loaded:
        _message(ax, "no delete files")
        return fig
    y = list(range(len(loaded)))
    ax.barh(y, [x.records for x in loaded], color="#dddddd", label="rows in data files")
    ax.barh(y, [x.delete_records for x in loaded], color="#c84040", label="rows deleted")
    for i, x in enumerate(loaded):
        ax.annotate(f"{_plural(x.delete_files, 'file')}, {_plural(x.delete_records, 'row')} ({x.delete_ratio:.1%})",
                    (x.records, i),
                    xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set_yticks(y, [x.partition or "(unpartitioned)" for x in loaded], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("rows")
    ax.set_xlim(0, max(x.records for x in loaded) * 1.45 or 1)
    ax.legend(loc="lower right", fontsize=8, frameon=False)
    return fig


# (title, drawing) in the page's order; the page has one <figure class="chart"> per entry.
CHARTS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("file sizes", chart_file_sizes), ("activity per day", chart_activity), ("snapshot timeline", chart_timeline),
    ("partition skew", chart_partitions), ("delete load", chart_delete_load)]

_CSS = """
body { font-family: "DejaVu Sans", "Liberation Sans", Arial, sans-serif; margin: 24px auto; max-width: 940px;
       color: #222; }
h1 { font-size: 20px; margin-bottom: 4px; } h2 { font-size: 16px; margin-top: 28px; }
.meta { color: #555; font-size: 13px; } code { font-size: 12px; }
.numbers { display: grid; grid-template-columns: repeat(4, 1fr); gap: 8px; margin: 16px 0; }
.numbers div { background: #f4f6f8; padding: 8px; border-radius: 4px; font-size: 12px; color: #555; }
.numbers b { display: block; font-size: 18px; color: #222; }
figure.chart { margin: 12px 0; } figure.chart svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: 12px; width: 100%; }
th, td { text-align: left; padding: 3px 6px; border-bottom: 1px solid #e4e4e4; vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
.error { color: #b02020; font-weight: bold; } .warning { color: #a06000; font-weight: bold; }
.ok { color: #2a7a3a; font-weight: bold; }
"""


def _e(v: Any) -> str:
    return html.escape("" if v is None else str(v))


def _table(headers: list[str], rows: list[list[str]], numeric: set[str] = frozenset()) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f'<td class="n">{c}</td>' if h in numeric else f"<td>{c}</td>"
                                   for h, c in zip(headers, r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _numbers(p: TableProfile) -> str:
    fs = p.file_sizes
    deletes = sum(x.delete_files for x in p.partitions)
    cells = [("data files", num(fs.data_files)), ("data size", fmt_bytes(fs.data_bytes)),
             ("small files", f"{num(fs.small_files)} of {num(fs.data_files)}"),
             ("median file", fmt_bytes(fs.median_file_size) if fs.median_file_size is not None else "-"),
             ("delete files", num(deletes)), ("partitions", num(len(p.partitions))),
             ("partition skew", f"{p.partition_skew}x" if p.partition_skew is not None else "-"),
             ("snapshots", num(len(p.timeline)))]
    return '<div class="numbers">' + "".join(f"<div><b>{_e(v)}</b>{_e(k)}</div>" for k, v in cells) + "</div>"


def _findings(v: ValidationView) -> str:
    if not v.findings:
        return '<p class="ok">valid: no findings</p>'
    summary = f'<p><span class="error">{v.errors} errors</span>, <span class="warning">{v.warnings} warnings</span></p>'
    rows = [[f'<span class="{_e(f.severity)}">{_e(f.severity)}</span>', _e(f.code), _e(f.where), _e(f.message),
             _e(f.rule)] for f in v.findings]
    return summary + _table(["severity", "code", "where", "message", "rule"], rows)


def _snapshots(p: TableProfile) -> str:
    rows = [[f"<code>{s.snapshot_id}</code>", _e(fmt_ts(s.timestamp_ms)), _e(s.operation), _e(num(s.added_records)),
             _e(num(s.removed_records)), _e(num(s.total_records)), _e(", ".join(s.refs)), _e(", ".join(s.branches))]
            for s in reversed(p.timeline)]
    return _table(["snapshot", "committed at", "operation", "+records", "-records", "total records", "refs",
                   "in branches"], rows, {"+records", "-records", "total records"})


def page(p: TableProfile, v: ValidationView, svgs: list[tuple[str, str]], *, generated_ms: int) -> str:
    charts = "\n".join(f'<figure class="chart" data-chart="{_e(name)}">{svg}</figure>' for name, svg in svgs)
    refs = _table(["ref", "type", "snapshot"], [[_e(r.name), _e(r.type), f"<code>{r.snapshot_id}</code>"]
                                                for r in p.refs])
    scope = f"format version {p.format_version}, snapshot {p.snapshot_id}"
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>icectl report: {_e(p.table)}</title>
<style>{_CSS}</style>
</head>
<body>
<h1>{_e(p.table)}</h1>
<p class="meta">{_e(scope)}<br><code>{_e(p.metadata_location)}</code><br>
generated by icectl {_e(__version__)} at {_e(fmt_ts(generated_ms))}</p>
{_numbers(p)}
<h2>Charts</h2>
{charts}
<h2>Refs</h2>
{refs}
<h2>Validate findings</h2>
<p class="meta">{_e(v.checked.snapshots)} snapshots, {_e(v.checked.manifests)} manifests,
{_e(f"{v.checked.entries:,}")} entries checked (icectl validate{" --deep" if v.deep else ""})</p>
{_findings(v)}
<h2>Snapshots</h2>
{_snapshots(p)}
</body>
</html>
"""


def write_report_html(path: Path, p: TableProfile, v: ValidationView, *, generated_ms: int | None = None) -> list[str]:
    """Draw the charts and write the page to ``path``; return the charts' titles."""
    mpl = _matplotlib()
    svgs = [(name, _svg(mpl, draw(mpl, p))) for name, draw in CHARTS]
    now = generated_ms if generated_ms is not None else int(dt.datetime.now(dt.timezone.utc).timestamp() * 1000)
    text = page(p, v, svgs, generated_ms=now)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise StorageError(f"cannot write {path}: {e.strerror or e}") from None
    return [name for name, _ in CHARTS]
