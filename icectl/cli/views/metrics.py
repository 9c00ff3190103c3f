"""``--metrics-file``: what ``health`` and ``maintain`` measured, in the Prometheus text exposition
format, for node_exporter's textfile collector (docs/metrics.md lists the series).

Written through ``prometheus_client`` (the extra ``icectl[metrics]``) and atomically: a temporary
file in the same folder (a dot name not ending in ``.prom``, which the collector skips), flushed and
fsynced, then renamed over the file. A run killed while writing leaves the previous file as it was;
the collector never reads half a file.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

try:
    from prometheus_client import CollectorRegistry, Gauge, generate_latest
except ImportError:  # the extra icectl[metrics] is not installed: require_metrics says so
    CollectorRegistry = Gauge = generate_latest = None  # type: ignore[assignment,misc]

from icectl.errors import StorageError, UnsupportedError, install_hint
from icectl.ops.maintain.fleet import need_score, score_of

if TYPE_CHECKING:
    from icectl.ops.maintain.health import HealthRun, Metrics
    from icectl.ops.maintain.maintain import MaintainRun

LABELS = ("catalog", "table")
HEALTH_VALUE = {"healthy": 0, "warning": 1, "critical": 2, "error": 3}


@dataclass(frozen=True)
class Series:
    name: str
    type: str  # the Prometheus type
    labels: tuple[str, ...]
    commands: tuple[str, ...]  # which commands write it
    help: str


# The documented series (docs/metrics.md has this list; a test compares the two).
SERIES = (
    Series("icectl_table_snapshots", "gauge", LABELS, ("health", "maintain"), "Snapshots in the table metadata."),
    Series("icectl_table_metadata_file_bytes", "gauge", LABELS, ("health", "maintain"),
           "Size of the current metadata file (metadata.json)."),
    Series("icectl_table_data_files", "gauge", LABELS, ("health", "maintain"), "Live data files of the main branch."),
    Series("icectl_table_data_bytes", "gauge", LABELS, ("health", "maintain"), "Bytes of the live data files."),
    Series("icectl_table_small_files", "gauge", LABELS, ("health", "maintain"),
           "Live data files under compact's minimum size (0.75 x the target file size)."),
    Series("icectl_table_delete_files", "gauge", LABELS, ("health", "maintain"), "Live delete files."),
    Series("icectl_table_orphan_bytes", "gauge", LABELS, ("health", "maintain"),
           "Bytes of orphan files; written only when the location was listed (health --orphans, "
           "maintain with remove-orphans in the policy)."),
    Series("icectl_table_health", "gauge", LABELS, ("health", "maintain"),
           "Health verdict: 0 healthy, 1 warning, 2 critical, 3 error (could not be measured)."),
    Series("icectl_table_need_score", "gauge", LABELS, ("health", "maintain"),
           "Need score the fleet ranking uses (higher: needs maintenance more)."),
    Series("icectl_table_maintenance_status", "gauge", LABELS + ("status",), ("maintain",),
           "Outcome of the last maintenance: 1 for the status that holds (healthy, done, failed, "
           "skipped, locked, disabled)."),
    Series("icectl_table_maintenance_duration_seconds", "gauge", LABELS, ("maintain",),
           "Duration of the last maintenance of the table."),
    Series("icectl_table_maintenance_timestamp_seconds", "gauge", LABELS, ("maintain",),
           "When the last maintenance of the table ended (Unix time)."),
)
MEASURED = ("icectl_table_snapshots", "icectl_table_metadata_file_bytes", "icectl_table_data_files",
            "icectl_table_data_bytes", "icectl_table_small_files", "icectl_table_delete_files")


def require_metrics() -> None:
    """Refuse --metrics-file before anything runs when prometheus_client is missing."""
    if Gauge is None:
        raise UnsupportedError("--metrics-file needs prometheus_client, in the extra icectl[metrics]",
                               hint=install_hint("metrics"))


class _Writer:
    def __init__(self, command: str):
        require_metrics()
        self.registry = CollectorRegistry()
        self.gauges = {s.name: Gauge(s.name, s.help, list(s.labels), registry=self.registry)
                       for s in SERIES if command in s.commands}

    def table(self, catalog: str, table: str, status: str, m: Metrics | None, score: float | None) -> None:
        g, lab = self.gauges, (catalog, table)
        g["icectl_table_health"].labels(*lab).set(HEALTH_VALUE.get(status, 3))
        if m is None:
            return
        values = (m.snapshots, m.metadata_size, m.data_files, m.data_bytes, m.small_files, m.delete_files)
        for name, value in zip(MEASURED, values):
            if value is not None:
                g[name].labels(*lab).set(value)
        if m.orphan_bytes is not None:
            g["icectl_table_orphan_bytes"].labels(*lab).set(m.orphan_bytes)
        if score is not None:
            g["icectl_table_need_score"].labels(*lab).set(score)

    def text(self) -> bytes:
        return generate_latest(self.registry)


def health_metrics(run: HealthRun, *, catalog: str) -> bytes:
    w = _Writer("health")
    for t in run.tables:
        w.table(catalog, t.table, t.status, t.metrics, need_score(t))
    return w.text()


def maintain_metrics(run: MaintainRun, *, catalog: str, now: float | None = None) -> bytes:
    w = _Writer("maintain")
    ended = now if now is not None else time.time()
    for t in run.tables:
        verdict = t.health_after or t.health_before or "error"
        w.table(catalog, t.table, verdict, t.metrics, score_of(verdict, t.metrics))
        w.gauges["icectl_table_maintenance_status"].labels(catalog, t.table, t.status).set(1)
        w.gauges["icectl_table_maintenance_duration_seconds"].labels(catalog, t.table).set(t.seconds)
        w.gauges["icectl_table_maintenance_timestamp_seconds"].labels(catalog, t.table).set(round(ended, 3))
    return w.text()


def write_metrics_file(path: str, text: bytes) -> None:
    """Replace ``path`` with ``text`` atomically (see the module docstring)."""
    target = Path(path)
    tmp = target.parent / f".{target.name}.{os.getpid()}.tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise StorageError(f"cannot write the metrics file {path}: {e.strerror or e}") from None
    except BaseException:  # interrupted (Ctrl-C, a signal handled as an exception): no temporary file left
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


__all__ = ["HEALTH_VALUE", "SERIES", "Series", "health_metrics", "maintain_metrics", "require_metrics",
           "write_metrics_file"]
