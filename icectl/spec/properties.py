"""The table properties icectl reads or writes: one registry, with each property's name, type,
default and meaning (from Iceberg's "Configuration: Table properties" page), and one policy for
a bad value.

A property that is not set has its default. A property that is set must parse as its type and
lie within its bounds; otherwise reading it raises :class:`~icectl.errors.InvalidMetadataError`
(exit code 4) naming the property and its value. A bad value is never replaced by the default
and never clamped into range: the table's owner meant something, and guessing what could expire
snapshots they meant to keep or retry a commit they meant to stop.

Every reader goes through a registered property::

    retries = COMMIT_NUM_RETRIES.read(md.properties)        # int, 4 when unset
    path = WRITE_METADATA_PATH.read_if_set(md.properties)     # str | None

and no other module of ``icectl`` spells a registered name (``tests/meta`` checks it).
``docs/table-properties.md`` is generated from :data:`TABLE_PROPERTIES` and
:data:`PROPERTY_PREFIXES` (``python -m tools.gendocs``).

``format-version`` and Iceberg Java's other reserved properties are not here: they are never
stored in ``properties`` (the format version is a field of the metadata). Catalog and storage
properties (``s3.*``, ``rest.*``, ``client.*``) configure a catalog or a FileIO, not a table, and
live with the catalog and IO code.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Generic, Mapping, TypeVar

from icectl.errors import InvalidMetadataError, UsageError

T = TypeVar("T")

INT_MAX = 2**31 - 1  # a Java int
LONG_MAX = 2**63 - 1  # a Java long: Long.MAX_VALUE

_INTEGER = re.compile(r"[+-]?[0-9]+")  # as Java's Integer.parseInt / Long.parseLong: no spaces, no "_"
_METRICS_MODE = re.compile(r"none|counts|full|truncate\(([0-9]+)\)")

# Sections of the generated list, in order.
BEHAVIOR, WRITE, READ, ICECTL = "Table behavior", "Write", "Read", "icectl"
SECTIONS = (BEHAVIOR, WRITE, READ, ICECTL)


@dataclass(frozen=True)
class TableProperty(Generic[T]):
    """One table property: its name, type, default and meaning, and how its value parses."""

    name: str
    kind: str  # bool, int, long, duration-ms, size-bytes, enum, metrics-mode, string
    default: T
    meaning: str
    section: str
    parse_value: Callable[[str], T] = field(repr=False, compare=False)
    type_text: str = ""  # the type as the generated docs show it
    default_text: str = ""  # the default as the generated docs show it

    def parse(self, raw: str) -> T:
        """The value of ``raw``, or :class:`InvalidMetadataError` naming the property and value."""
        try:
            return self.parse_value(raw)
        except ValueError as e:
            raise InvalidMetadataError(
                f"table property {self.name}={raw!r} is invalid: {e}",
                hint=f"set it to a {self.type_text} (icectl properties TABLE set {self.name}=...) or unset it "
                     f"for the default ({self.default_text})") from None

    def read(self, properties: Mapping[str, str]) -> T:
        """The table's value, or the default when the property is not set."""
        raw = properties.get(self.name)
        return self.default if raw is None else self.parse(raw)

    def read_if_set(self, properties: Mapping[str, str]) -> T | None:
        """The table's value, or None when the property is not set."""
        raw = properties.get(self.name)
        return None if raw is None else self.parse(raw)


@dataclass(frozen=True)
class PropertyPrefix:
    """A family of properties named ``<prefix><suffix>`` (a column name, a policy key)."""

    prefix: str
    suffix: str  # what follows the prefix, as the docs show it
    type_text: str
    meaning: str
    section: str

    def suffixes(self, properties: Mapping[str, str]) -> dict[str, str]:
        """``{suffix: value}`` of the table's properties in this family."""
        n = len(self.prefix)
        return {k[n:]: v for k, v in properties.items() if k.startswith(self.prefix)}


# -- parsers -------------------------------------------------------------------------------------

def _integer(minimum: int, maximum: int) -> Callable[[str], int]:
    def parse(raw: str) -> int:
        if not _INTEGER.fullmatch(raw):
            raise ValueError("not an integer")
        v = int(raw)
        if not minimum <= v <= maximum:
            raise ValueError(f"out of range: must be {_bounds(minimum, maximum)}")
        return v

    return parse


def _bounds(minimum: int, maximum: int) -> str:
    if maximum in (INT_MAX, LONG_MAX):
        return f">= {minimum}"
    return f"{minimum} to {maximum}"


def _boolean(raw: str) -> bool:
    # Java's Boolean.parseBoolean reads anything but "true" as false; a typo in gc.enabled must not
    # decide whether files are deleted, so only true and false are values.
    low = raw.lower()
    if low not in ("true", "false"):
        raise ValueError("not true or false")
    return low == "true"


def _choice(choices: tuple[str, ...]) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        low = raw.lower()  # Iceberg Java reads codec names case-insensitively
        if low not in choices:
            raise ValueError(f"not one of {', '.join(choices)}")
        return low

    return parse


def _string(raw: str) -> str:
    return raw


def parse_metrics_mode(raw: str) -> str:
    """A metrics mode: ``none``, ``counts``, ``truncate(N)`` (N > 0) or ``full``."""
    low = raw.lower()
    m = _METRICS_MODE.fullmatch(low)
    if m is None or (m.group(1) is not None and int(m.group(1)) <= 0):
        raise ValueError("not none, counts, truncate(N) with N > 0, or full")
    return low


MAX_INFERRED_METRICS_COLUMNS = 100  # write.metadata.metrics.max-inferred-column-defaults (Java's default)
DEFAULT_METRICS_MODE = "truncate(16)"


def column_metrics_modes(properties: dict[str, str], leaves: list[tuple[int, str]],
                         sorted_ids: set[int] | frozenset[int] = frozenset()) -> dict[int, str]:
    """The metrics mode of each leaf column (field id, dotted name), as Iceberg Java's
    MetricsConfig.forTable resolves it: ``write.metadata.metrics.column.<name>`` over
    ``write.metadata.metrics.default``; without an explicit default, the first
    ``write.metadata.metrics.max-inferred-column-defaults`` (100) leaves get truncate(16) and the
    rest none; a sort-order column whose mode is none or counts gets truncate(16). A value that
    is not a metrics mode counts as the default (Java: falls back to it with a warning)."""
    explicit = properties.get("write.metadata.metrics.default")
    try:
        default = parse_metrics_mode(explicit) if explicit is not None else DEFAULT_METRICS_MODE
    except ValueError:
        default = DEFAULT_METRICS_MODE
    limit_text = properties.get("write.metadata.metrics.max-inferred-column-defaults", "")
    limit = int(limit_text) if limit_text.isdigit() else MAX_INFERRED_METRICS_COLUMNS
    modes: dict[int, str] = {}
    for i, (fid, name) in enumerate(leaves):
        mode = default if explicit is not None or i < limit else "none"
        override = properties.get("write.metadata.metrics.column." + name)
        if override is not None:
            try:
                mode = parse_metrics_mode(override)
            except ValueError:
                pass
        if fid in sorted_ids and mode in ("none", "counts"):
            mode = DEFAULT_METRICS_MODE
        modes[fid] = mode
    return modes


def truncate_length(mode: str) -> int | None:
    """N of ``truncate(N)``; None for the other modes."""
    m = _METRICS_MODE.fullmatch(mode)
    return int(m.group(1)) if m is not None and m.group(1) is not None else None


# -- constructors --------------------------------------------------------------------------------

def _int(name: str, default: int, meaning: str, section: str, *, kind: str = "int", minimum: int = 0,
         maximum: int | None = None, default_text: str | None = None) -> TableProperty[int]:
    top = maximum if maximum is not None else (INT_MAX if kind == "int" else LONG_MAX)
    type_text = f"{kind} ({_bounds(minimum, top)})"
    return TableProperty(name, kind, default, meaning, section, _integer(minimum, top), type_text,
                         default_text or str(default))


def _bool(name: str, default: bool, meaning: str, section: str) -> TableProperty[bool]:
    return TableProperty(name, "bool", default, meaning, section, _boolean, "bool (true or false)",
                         str(default).lower())


def _enum(name: str, default: str, choices: tuple[str, ...], meaning: str, section: str) -> TableProperty[str]:
    return TableProperty(name, "enum", default, meaning, section, _choice(choices), f"enum ({', '.join(choices)})",
                         default)


def _str(name: str, meaning: str, section: str, *, default_text: str) -> TableProperty[str | None]:
    return TableProperty(name, "string", None, meaning, section, _string, "string", default_text)


# -- the registry ----------------------------------------------------------------------------------

COMMIT_NUM_RETRIES = _int(
    "commit.retry.num-retries", 4, "Number of times to retry a commit before failing", BEHAVIOR)
COMMIT_MIN_RETRY_WAIT_MS = _int(
    "commit.retry.min-wait-ms", 100, "Minimum time in milliseconds to wait before retrying a commit", BEHAVIOR,
    kind="duration-ms")
COMMIT_MAX_RETRY_WAIT_MS = _int(
    "commit.retry.max-wait-ms", 60_000, "Maximum time in milliseconds to wait before retrying a commit", BEHAVIOR,
    kind="duration-ms", default_text="60000 (1 min)")
COMMIT_TOTAL_RETRY_TIME_MS = _int(
    "commit.retry.total-timeout-ms", 1_800_000, "Total retry timeout period in milliseconds for a commit", BEHAVIOR,
    kind="duration-ms", default_text="1800000 (30 min)")
COMMIT_STATUS_CHECKS_NUM_RETRIES = _int(
    "commit.status-check.num-retries", 3,
    "Number of times to read the table again to learn whether a commit whose connection broke succeeded "
    "(Hive catalog)", BEHAVIOR)
MANIFEST_TARGET_SIZE_BYTES = _int(
    "commit.manifest.target-size-bytes", 8 * 1024 * 1024,
    "Target size when merging manifest files (rewrite-manifests)", BEHAVIOR, kind="size-bytes", minimum=1,
    default_text="8388608 (8 MB)")
MAX_SNAPSHOT_AGE_MS = _int(
    "history.expire.max-snapshot-age-ms", 5 * 24 * 60 * 60 * 1000,
    "Default max age of snapshots to keep on the table and all of its branches while expiring snapshots",
    BEHAVIOR, kind="duration-ms", maximum=LONG_MAX, default_text="432000000 (5 days)")
MIN_SNAPSHOTS_TO_KEEP = _int(
    "history.expire.min-snapshots-to-keep", 1,
    "Default min number of snapshots to keep on the table and all of its branches while expiring snapshots",
    BEHAVIOR, minimum=1)
MAX_REF_AGE_MS = _int(
    "history.expire.max-ref-age-ms", LONG_MAX,
    "For snapshot references except the main branch, default max age of snapshot references to keep while "
    "expiring snapshots; the main branch never expires", BEHAVIOR, kind="duration-ms",
    default_text="Long.MAX_VALUE (forever)")
GC_ENABLED = _bool(
    "gc.enabled", True,
    "Whether files may be deleted by expire and drop --purge; false when other tables may share this one's files",
    BEHAVIOR)
ENGINE_HIVE_ENABLED = _bool(
    "engine.hive.enabled", False,
    "Whether a Hive catalog writes Hive's Iceberg storage handler, input/output formats and SerDe for the table",
    BEHAVIOR)
METADATA_DELETE_AFTER_COMMIT_ENABLED = _bool(
    "write.metadata.delete-after-commit.enabled", False,
    "Whether to delete the oldest tracked metadata files after each commit", BEHAVIOR)
METADATA_PREVIOUS_VERSIONS_MAX = _int(
    "write.metadata.previous-versions-max", 100,
    "Number of previous metadata files kept in the metadata log (at least one) before the oldest are dropped "
    "(and deleted with write.metadata.delete-after-commit.enabled)", BEHAVIOR)
METADATA_COMPRESSION = _enum(
    "write.metadata.compression-codec", "none", ("none", "gzip"), "Metadata compression codec: none or gzip", WRITE)
METADATA_PATH = _str(
    "write.metadata.path", "Base location for metadata files", WRITE, default_text="table location + /metadata")
DATA_PATH = _str(
    "write.data.path", "Base location for data files", WRITE, default_text="table location + /data")
OBJECT_STORAGE_PATH = _str(
    "write.object-storage.path", "Base location for data files with object storage enabled (deprecated: "
    "write.data.path)", WRITE, default_text="(not set)")
FOLDER_STORAGE_PATH = _str(
    "write.folder-storage.path", "Base location for data files (deprecated: write.data.path)", WRITE,
    default_text="(not set)")
TARGET_FILE_SIZE_BYTES = _int(
    "write.target-file-size-bytes", 512 * 1024 * 1024, "Target size of the data files compact writes", WRITE,
    kind="size-bytes", minimum=1, default_text="536870912 (512 MB)")
PARQUET_COMPRESSION = _enum(
    "write.parquet.compression-codec", "zstd", ("zstd", "brotli", "lz4", "gzip", "snappy", "uncompressed"),
    "Parquet compression codec of the files icectl writes", WRITE)
PARQUET_ROW_GROUP_SIZE_BYTES = _int(
    "write.parquet.row-group-size-bytes", 128 * 1024 * 1024, "Parquet row group size", WRITE, kind="size-bytes",
    minimum=1, default_text="134217728 (128 MB)")
METRICS_DEFAULT = TableProperty(
    "write.metadata.metrics.default", "metrics-mode", "truncate(16)",
    "Default metrics mode for all columns in the table; none, counts, truncate(length), or full (the files "
    "compact writes carry truncate(16) metrics whatever it says)", WRITE,
    parse_metrics_mode, "metrics mode", "truncate(16)")
NAME_MAPPING = _str(
    "schema.name-mapping.default", "Default name mapping (JSON) for files written without field ids; alter "
    "keeps it in step with renames and added columns", READ, default_text="(not set)")
SPLIT_SIZE = _int(
    "read.split.target-size", 128 * 1024 * 1024, "Target size when combining data input splits (compute-stats)",
    READ, kind="size-bytes", minimum=1, default_text="134217728 (128 MB)")

TABLE_PROPERTIES: dict[str, TableProperty] = {p.name: p for p in (
    COMMIT_NUM_RETRIES, COMMIT_MIN_RETRY_WAIT_MS, COMMIT_MAX_RETRY_WAIT_MS, COMMIT_TOTAL_RETRY_TIME_MS,
    COMMIT_STATUS_CHECKS_NUM_RETRIES, ENGINE_HIVE_ENABLED, MANIFEST_TARGET_SIZE_BYTES, MAX_SNAPSHOT_AGE_MS, MIN_SNAPSHOTS_TO_KEEP, MAX_REF_AGE_MS, GC_ENABLED,
    METADATA_DELETE_AFTER_COMMIT_ENABLED, METADATA_PREVIOUS_VERSIONS_MAX, METADATA_COMPRESSION, METADATA_PATH,
    DATA_PATH, OBJECT_STORAGE_PATH, FOLDER_STORAGE_PATH, TARGET_FILE_SIZE_BYTES, PARQUET_COMPRESSION,
    PARQUET_ROW_GROUP_SIZE_BYTES, METRICS_DEFAULT, NAME_MAPPING, SPLIT_SIZE)}

# Properties that hold a location: rewrite-table-path rewrites them.
PATH_PROPERTIES = (OBJECT_STORAGE_PATH, FOLDER_STORAGE_PATH, DATA_PATH, METADATA_PATH)

METRICS_COLUMN = PropertyPrefix(
    "write.metadata.metrics.column.", "<column>", "metrics mode",
    "Metrics mode for the column; alter renames and drops it with the column", WRITE)
BLOOM_FILTER_COLUMN = PropertyPrefix(
    "write.parquet.bloom-filter-enabled.column.", "<column>", "bool",
    "Whether writers build a Parquet bloom filter for the column; alter renames and drops it with the column", WRITE)
STATS_ENABLED_COLUMN = PropertyPrefix(
    "write.parquet.stats-enabled.column.", "<column>", "bool",
    "Whether writers collect Parquet column statistics for the column; alter renames and drops it with the column",
    WRITE)
MAINTAIN_POLICY = PropertyPrefix(
    "icectl.maintain.", "<key>", "policy value",
    "The table's own maintenance policy for health and maintain (a policy file's tables entries win)", ICECTL)

PROPERTY_PREFIXES: tuple[PropertyPrefix, ...] = (METRICS_COLUMN, BLOOM_FILTER_COLUMN, STATS_ENABLED_COLUMN,
                                                 MAINTAIN_POLICY)
# The per-column families: alter renames and removes them with their column.
COLUMN_PREFIXES = (METRICS_COLUMN, BLOOM_FILTER_COLUMN, STATS_ENABLED_COLUMN)


def check_setting(name: str, raw: str) -> None:
    """A value a user is about to set: a registered property's must parse, so that icectl never
    writes a value it would refuse to read (a usage error, exit code 2, before anything is written).
    Other names pass: Iceberg tables carry properties of every engine."""
    prop = TABLE_PROPERTIES.get(name)
    if prop is None:
        return
    try:
        prop.parse_value(raw)
    except ValueError as e:
        raise UsageError(f"cannot set table property {name}={raw!r}: {e}",
                         hint=f"{name} is a {prop.type_text} (default {prop.default_text})") from None


def properties_markdown() -> str:
    """The table-properties reference (``docs/table-properties.md``), generated from the registry."""
    lines = ["# Table properties", "",
             "<!-- Generated from icectl/spec/properties.py by `python -m tools.gendocs`; do not edit. -->", "",
             "The Iceberg table properties icectl reads or writes, with Iceberg's defaults. A property that",
             "is set but does not parse as its type, or lies outside its bounds, is an error naming the",
             "property and its value (exit code 4) in every command that reads it: icectl never falls back",
             "to the default or clamps the value. Fix it with `icectl properties TABLE set NAME=VALUE`, or",
             "`unset NAME` for the default.", ""]
    for section in SECTIONS:
        props = [p for p in TABLE_PROPERTIES.values() if p.section == section]
        prefixes = [p for p in PROPERTY_PREFIXES if p.section == section]
        if not props and not prefixes:
            continue
        lines += [f"## {section}", "", "| Property | Type | Default | Meaning |", "|---|---|---|---|"]
        lines += [f"| `{p.name}` | {p.type_text} | {p.default_text} | {p.meaning} |" for p in props]
        lines += [f"| `{p.prefix}{p.suffix}` | {p.type_text} | (not set) | {p.meaning} |" for p in prefixes]
        lines.append("")
    return "\n".join(lines)


__all__ = ["BEHAVIOR", "BLOOM_FILTER_COLUMN", "COLUMN_PREFIXES", "COMMIT_MAX_RETRY_WAIT_MS", "COMMIT_MIN_RETRY_WAIT_MS",
           "COMMIT_NUM_RETRIES", "COMMIT_STATUS_CHECKS_NUM_RETRIES", "ENGINE_HIVE_ENABLED", "COMMIT_TOTAL_RETRY_TIME_MS", "DATA_PATH", "FOLDER_STORAGE_PATH", "GC_ENABLED",
           "ICECTL", "INT_MAX", "LONG_MAX", "MAINTAIN_POLICY", "MANIFEST_TARGET_SIZE_BYTES", "MAX_REF_AGE_MS",
           "MAX_SNAPSHOT_AGE_MS", "METADATA_COMPRESSION", "METADATA_DELETE_AFTER_COMMIT_ENABLED", "METADATA_PATH",
           "METADATA_PREVIOUS_VERSIONS_MAX", "METRICS_COLUMN", "METRICS_DEFAULT", "MIN_SNAPSHOTS_TO_KEEP",
           "NAME_MAPPING", "OBJECT_STORAGE_PATH", "PARQUET_COMPRESSION", "PARQUET_ROW_GROUP_SIZE_BYTES",
           "PATH_PROPERTIES", "PROPERTY_PREFIXES", "PropertyPrefix", "READ", "SECTIONS", "SPLIT_SIZE",
           "STATS_ENABLED_COLUMN", "TABLE_PROPERTIES", "TARGET_FILE_SIZE_BYTES", "TableProperty", "WRITE",
           "check_setting", "column_metrics_modes", "parse_metrics_mode", "truncate_length", "properties_markdown"]
