"""The fleet view: one number per table saying how much it needs maintenance (its *need score*),
and the ranking of many tables by it (``health --all`` prints the ranking, ``maintain --all``
works down it, worst first, so a ``--budget`` that runs out leaves the tables that need it least).

The score is a sum of terms, each from health's verdict and measurements
(:class:`~icectl.ops.maintain.health.Metrics`); docs/metrics.md has the same table:

- the verdict: 100 for ``critical``, 10 for ``warning``, 0 for ``healthy`` (so an overdue table is
  ranked above any table whose maintenance is only recommended);
- metadata: the metadata file's size in MiB, plus the snapshot count / 100;
- small files: the data files under compact's minimum size / 100;
- delete load: the delete files / 10, plus 10 x the delete-record ratio (delete records / records);
- time since the last maintenance (``maintenance_age_ms``: since the newest ``replace`` snapshot,
  or the oldest snapshot when there is none): days / 30.

Rounded to 2 decimals. A table that could not be measured (status ``error``) has no score and is
ranked last. Ties are broken by table name, so the ranking is deterministic.
"""
from __future__ import annotations

from icectl.ops.maintain.health import Metrics, TableHealth

VERDICT_POINTS = {"critical": 100.0, "warning": 10.0, "healthy": 0.0}
MIB = 1 << 20
DAY_MS = 86_400_000


def need_score(health: TableHealth) -> float | None:
    """The need score of one measured table (see the module docstring); None when it could not be measured."""
    return score_of(health.status, health.metrics)


def score_of(status: str, m: Metrics | None) -> float | None:
    """The need score of a verdict and its measurements."""
    if m is None or status not in VERDICT_POINTS:
        return None
    score = VERDICT_POINTS[status]
    score += (m.metadata_size or 0) / MIB + m.snapshots / 100
    score += m.small_files / 100
    score += m.delete_files / 10 + 10 * m.delete_record_ratio
    score += max(m.maintenance_age_ms or 0, 0) / DAY_MS / 30
    return round(score, 2)


def ranked(tables: list[TableHealth]) -> list[TableHealth]:
    """The tables, most in need first (highest score; no score last; ties by name)."""
    scored = [(need_score(t), t) for t in tables]
    scored.sort(key=lambda st: (st[0] is None, -(st[0] or 0.0), st[1].table))
    return [t for _, t in scored]


__all__ = ["DAY_MS", "MIB", "VERDICT_POINTS", "need_score", "ranked", "score_of"]
