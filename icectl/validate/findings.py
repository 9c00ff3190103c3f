"""Findings and the report of ``validate``: what one check found (code, message, where), the
collector that deduplicates them, the options of a run, what was looked at, and the report.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from icectl.validate.codes import CODES, Severity


@dataclass(frozen=True)
class Finding:
    """One broken rule, and where."""

    code: str
    message: str
    file: str | None = None
    snapshot_id: int | None = None
    manifest: str | None = None
    entry: int | None = None  # position of the entry in its manifest (or list), from 0
    severity: Severity = field(default=None)  # type: ignore[assignment]  # from CODES
    rule: str = ""

    def __post_init__(self) -> None:
        sev, rule, _ = CODES[self.code]
        if self.severity is None:
            object.__setattr__(self, "severity", sev)
        if not self.rule:
            object.__setattr__(self, "rule", rule)

    @property
    def where(self) -> str:
        parts = []
        if self.snapshot_id is not None:
            parts.append(f"snapshot {self.snapshot_id}")
        if self.manifest is not None:
            parts.append(f"manifest {self.manifest}")
        if self.entry is not None:
            parts.append(f"entry {self.entry}")
        if self.file is not None and self.file != self.manifest:
            parts.append(self.file)
        return ", ".join(parts)


@dataclass
class ValidateOptions:
    deep: bool = False
    all_snapshots: bool = False
    check_bounds: bool = True
    workers: int | None = None  # threads scanning manifests: None = automatic, 1 = none


@dataclass
class Checked:
    """How much was looked at."""

    snapshots: int = 0
    manifest_lists: int = 0
    manifests: int = 0
    entries: int = 0
    files: int = 0  # --deep: distinct data, delete and statistics files


@dataclass
class ValidationReport:
    table: str
    metadata_location: str | None
    format_version: int | None
    deep: bool
    all_snapshots: bool
    checked: Checked
    findings: list[Finding]
    seconds: float = 0.0
    kind: str = "table"  # or "view": a view's metadata, checked against the view spec

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == Severity.ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == Severity.WARNING]

    @property
    def ok(self) -> bool:
        return not self.errors


class Collector:
    """Findings, deduplicated (a manifest shared by many snapshots is reported once)."""

    def __init__(self) -> None:
        self.findings: list[Finding] = []
        self._seen: set[tuple[Any, ...]] = set()

    def add(self, code: str, message: str, **where: Any) -> None:
        f = Finding(code, message, **where)
        self.extend([f])

    def extend(self, findings: list[Finding]) -> None:
        for f in findings:
            key = (f.code, f.message, f.file, f.manifest, f.entry, f.severity)
            if key not in self._seen:
                self._seen.add(key)
                self.findings.append(f)
