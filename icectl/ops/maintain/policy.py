"""The maintenance policy of a table: which steps ``maintain`` may run and the thresholds ``health``
measures against. One policy serves both commands, so ``maintain`` runs exactly the steps
``health`` calls for.

Where a value comes from, last wins: the defaults below; the policy file's ``defaults``; the
table's properties ``icectl.maintain.<key>``; the policy file's ``tables`` entries whose pattern
(``fnmatch``, on ``namespace.table``) matches, in file order. The operator's file thus has the last
word over what a table's owner set, and a table can opt out with ``icectl.maintain.enabled=false``.

.. code-block:: yaml

    defaults:
      steps: [rewrite-deletes, compact, rewrite-manifests, expire, remove-orphans]
      delete-record-ratio: 0.05
      optional: [compact]   # skipped, not an error, where Spark is not installed
    tables:
      "raw.*": {steps: [expire, remove-orphans]}
      "db.events": {enabled: false}
"""
from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field, fields, replace
from typing import Any, Callable

from icectl.catalog.config import read_yaml
from icectl.errors import NotFoundError, UsageError
from icectl.spec.properties import MAINTAIN_POLICY
from icectl.expr.duration import parse_duration_ms

# The safe order: deletes merged or applied and small files rewritten first (compaction adds
# manifests and snapshots), then manifests rewritten, then snapshots expired (which deletes the
# files only the expired snapshots reach), and orphans last (what a failed delete or a crashed
# writer left, old enough that no running writer can still commit it).
STEPS = ("rewrite-deletes", "compact", "rewrite-manifests", "expire", "remove-orphans")
PROPERTY_PREFIX = MAINTAIN_POLICY.prefix


@dataclass(frozen=True)
class Policy:
    """Thresholds (each documented in docs/maintenance.md's "Health and maintenance" table)."""

    enabled: bool = True
    steps: tuple[str, ...] = STEPS
    compact_min_input_files: int = 5  # compact's --min-input-files
    delete_record_ratio: float = 0.1  # deleted rows / live rows at which deletes are applied (compact)
    delete_file_ratio: float = 0.5  # delete files / data files at which deletes are applied (compact)
    delete_record_ratio_critical: float = 0.5
    small_files_critical: int = 1000  # files a compaction would rewrite
    min_small_manifests: int = 10  # manifests under the target size before rewrite-manifests is called for
    snapshots_critical: int = 1000  # expirable snapshots
    metadata_size_critical: int = 32 * 1024 * 1024  # bytes of metadata.json, when expire can shrink it
    expire_clean_expired_metadata: bool = False  # expire's --clean-expired-metadata: drop unused schemas and specs
    orphans_older_than: str = "3d"
    orphans_quarantine: str = ""  # remove-orphans moves orphans to this folder of the table (--quarantine); "" deletes
    partition_skew: float = 10.0  # largest partition / median partition (bytes): info
    statistics_behind: int = 10  # snapshots since the table statistics' snapshot: info
    # Steps that maintain skips (reported) when their engine is missing (compact without Spark);
    # any other step whose engine is missing stops maintain before it commits anything.
    optional: tuple[str, ...] = ()
    source: tuple[str, ...] = field(default=(), compare=False)  # where the values came from

    def step_enabled(self, step: str) -> bool:
        return self.enabled and step in self.steps


_KEYS = {f.name.replace("_", "-"): f for f in fields(Policy) if f.name != "source"}


def _coerce(key: str, value: Any, *, origin: str) -> Any:
    f = _KEYS[key]
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    try:
        if kind == "bool":
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text not in ("true", "false"):
                raise ValueError
            return text == "true"
        if kind.startswith("tuple"):
            items = value if isinstance(value, (list, tuple)) else [s for s in str(value).split(",")]
            steps = tuple(str(s).strip() for s in items if str(s).strip())
            unknown = [s for s in steps if s not in STEPS]
            if unknown:
                raise UsageError(f"{origin}: unknown step {unknown[0]!r} in {key} (steps: {', '.join(STEPS)})")
            return steps
        if kind == "int":
            if isinstance(value, bool):
                raise ValueError
            out = int(value)
            if out < 0:
                raise ValueError
            return out
        if kind == "float":
            if isinstance(value, bool):
                raise ValueError
            out = float(value)
            if out < 0:
                raise ValueError
            return out
        if key == "orphans-older-than":
            parse_duration_ms(str(value), what=f"{origin}: {key}")
            return str(value)
        if key == "orphans-quarantine":
            if not isinstance(value, str) or any(seg in (".", "..") for seg in value.strip("/").split("/")):
                raise UsageError(f"{origin}: {key}={value!r} is not a folder of the table location (a relative "
                                 f"path without '.' or '..', outside data/ and metadata/)")
            return value.strip()
    except (TypeError, ValueError):
        raise UsageError(f"{origin}: {key}={value!r} is not a valid {kind}") from None
    return value


def _apply(policy: Policy, values: dict[str, Any], *, origin: str,
           where: Callable[[str], str] | None = None) -> Policy:
    """``policy`` with ``values`` applied; ``where(key)`` names a key's file and line in errors."""
    if not isinstance(values, dict):
        raise UsageError(f"{origin}: expected a mapping of policy keys")
    changes = {}
    for key, value in values.items():
        here = where(key) if where is not None else origin
        if key not in _KEYS:
            raise UsageError(f"{here}: unknown policy key {key!r} (keys: {', '.join(sorted(_KEYS))})")
        changes[_KEYS[key].name] = _coerce(key, value, origin=here)
    if not changes:
        return policy
    return replace(policy, **changes, source=policy.source + (origin,))


@dataclass(frozen=True)
class PolicyFile:
    """A parsed policy file: ``defaults`` and ``tables`` (pattern -> values), in file order."""

    path: str | None = None
    defaults: dict[str, Any] = field(default_factory=dict)
    tables: tuple[tuple[str, dict[str, Any]], ...] = ()

    def policy_for(self, table: str, properties: dict[str, str]) -> Policy:
        policy = _apply(Policy(), self.defaults, origin=f"{self.path}: defaults") if self.defaults else Policy()
        props = {k[len(PROPERTY_PREFIX):]: v for k, v in properties.items() if k.startswith(PROPERTY_PREFIX)}
        if props:
            policy = _apply(policy, props, origin=f"table properties of {table} ({PROPERTY_PREFIX}*)")
        for pattern, values in self.tables:
            if fnmatch.fnmatchcase(table, pattern):
                policy = _apply(policy, values, origin=f"{self.path}: tables[{pattern!r}]")
        return policy


def load_policy_file(path: str | None) -> PolicyFile:
    """Read and check a YAML policy file (every entry is checked now, before any table is touched)."""
    if path is None:
        return PolicyFile()
    import yaml

    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except FileNotFoundError:
        raise NotFoundError(f"policy file not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"policy file {path} is a folder") from None
    except UnicodeDecodeError:
        raise UsageError(f"policy file {path} is not UTF-8 text") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise UsageError(f"policy file {path} is not valid YAML{where}") from None
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise UsageError(f"policy file {path}: expected a mapping with 'defaults' and/or 'tables'")
    _, lines = read_yaml(path, pyiceberg=False)  # the line of every key, for the errors below

    def at(*keys: Any) -> str:
        line = lines.get(tuple(str(k) for k in keys))
        return f"policy file {path}:{line}" if line is not None else f"policy file {path}"

    unknown = sorted(set(doc) - {"defaults", "tables"})
    if unknown:
        raise UsageError(f"{at(unknown[0])}: unknown section {unknown[0]!r} (sections: defaults, tables)")
    defaults = doc.get("defaults") or {}
    _apply(Policy(), defaults, origin=f"{at('defaults')}: defaults",
           where=lambda key: f"{at('defaults', key)}: defaults")
    tables_doc = doc.get("tables") or {}
    if not isinstance(tables_doc, dict):
        raise UsageError(f"{at('tables')}: 'tables' must map table patterns to policy keys")
    tables = []
    for pattern, values in tables_doc.items():
        _apply(Policy(), values or {}, origin=f"{at('tables', pattern)}: tables[{pattern!r}]",
               where=lambda key, p=pattern: f"{at('tables', p, key)}: tables[{p!r}]")
        tables.append((str(pattern), dict(values or {})))
    return PolicyFile(path, dict(defaults), tuple(tables))


__all__ = ["Policy", "PolicyFile", "PROPERTY_PREFIX", "STEPS", "load_policy_file"]
