"""The job protocol between icectl and its PySpark job: typed messages, JSON on the wire, one version.

Three hops, each a JSON message decoded into these dataclasses on arrival:

- the plan file, client -> driver: :class:`RewritePlan` (``compact``, ``rewrite-deletes``) or
  :class:`NdvPlan` (``compute-stats``), told apart by ``kind``;
- each task, driver -> executor: :class:`RewriteTask` or :class:`NdvTask`, with the plan's settings
  (the plan without its groups or tasks);
- each task's outcome, executor -> driver (:class:`RewriteTaskResult`, :class:`NdvTaskResult`), and
  the result file, driver -> client (:class:`RewriteResult`, :class:`NdvResult`).

Every message that travels on its own carries ``version``. The job runs whatever icectl its
Python imports (the template's ``python``, a packed environment, the ``--py-files`` zip), which
need not be the client's; a message of another version is refused with one line naming both
versions, never misread. Bump :data:`PROTOCOL_VERSION` with any change to a message's fields.

No defaults live here or in the job: the client resolves every setting (compression codec,
row-group size, target file size, split size) from the table's properties and sends it; a
message that lacks one is refused. This module needs only the standard library and
:mod:`icectl.errors`, so executors import it as they import the rest of ``icectl.spark``.
"""
from __future__ import annotations

import dataclasses
import json
import types
import typing
from dataclasses import dataclass, field
from typing import Any, TypeVar, Union

from icectl.errors import ExternalCommandError

PROTOCOL_VERSION = 1
REWRITE = "rewrite"
NDV = "ndv"

T = TypeVar("T")


class ProtocolError(ExternalCommandError):
    """A job message this icectl cannot take: another protocol version, or a malformed one."""


# -- the rewrite job (compact, rewrite-deletes) -----------------------------------------------------------

@dataclass(frozen=True)
class PositionDelete:
    """A position delete file (``format`` parquet; ``path_aliases``: other spellings of the data
    file's path it may use) or a deletion vector (``format`` puffin, the blob's offset and length)."""

    path: str
    format: str
    offset: int | None = None
    length: int | None = None
    path_aliases: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class EqualityDelete:
    path: str
    equality_ids: list[int]


@dataclass(frozen=True)
class InputFile:
    """A data file to read, with the deletes that apply to it and what row lineage needs."""

    path: str
    format: str
    record_count: int
    size: int
    first_row_id: int | None
    data_sequence_number: int
    position_deletes: list[PositionDelete] = field(default_factory=list)
    equality_deletes: list[EqualityDelete] = field(default_factory=list)


@dataclass(frozen=True)
class PartitionField:
    """A field of the current partition spec, to repartition rows of files of older specs."""

    name: str
    transform: str
    column: str
    source_type: str


@dataclass(frozen=True)
class SortField:
    column: str
    transform: str
    direction: str  # asc | desc
    null_order: str  # nulls-first | nulls-last


@dataclass(frozen=True)
class RewriteTask:
    """Input files one executor rewrites into files under ``output_dir``."""

    task_id: str
    group_id: int
    output_dir: str
    inputs: list[InputFile]
    repartition: list[PartitionField] | None = None
    version: int = PROTOCOL_VERSION


@dataclass(frozen=True)
class RewriteGroup:
    group_id: int
    partition: str
    expected_outputs: int
    tasks: list[RewriteTask]


@dataclass(frozen=True)
class RewritePlan:
    """The plan file of a rewrite: the table's schema, the settings every task writes with, the groups."""

    table: str
    location: str
    format_version: int
    schema: dict[str, Any]  # the Iceberg schema JSON
    target_file_size: int
    row_lineage: bool
    sort: list[SortField] | None
    io_properties: dict[str, str]
    compression: str  # write.parquet.compression-codec
    row_group_bytes: int  # write.parquet.row-group-size-bytes
    app_name: str
    groups: list[RewriteGroup] = field(default_factory=list)
    kind: str = REWRITE
    version: int = PROTOCOL_VERSION

    def settings(self) -> "RewritePlan":
        """The plan without its groups: what every task needs besides itself."""
        return dataclasses.replace(self, groups=[])

    def all_tasks(self) -> list[RewriteTask]:
        return [t for g in self.groups for t in g.tasks]


@dataclass(frozen=True)
class WrittenFile:
    """A Parquet file the job wrote: what a manifest needs of it, bounds as Appendix D single
    values in hex, and where it belongs (its task and group, the current spec's partition values
    as JSON when the task repartitioned, ``sorted`` when written in the sort order)."""

    path: str
    size: int
    record_count: int
    column_sizes: dict[int, int]
    value_counts: dict[int, int]
    null_value_counts: dict[int, int]
    nan_value_counts: dict[int, int]
    lower_bounds: dict[int, str]
    upper_bounds: dict[int, str]
    split_offsets: list[int] = field(default_factory=list)
    task_id: str | None = None
    group_id: int | None = None
    sorted: bool = False
    partition: list[Any] | None = None


@dataclass(frozen=True)
class RewriteTaskResult:
    """What one task (or sorted group) wrote, or why it failed (its files then removed)."""

    task_id: str
    files: list[WrittenFile] = field(default_factory=list)
    error: str | None = None
    version: int = PROTOCOL_VERSION


@dataclass(frozen=True)
class RewriteResult:
    """The result file: every file written (those of failed tasks excepted) and the first error."""

    files: list[WrittenFile] = field(default_factory=list)
    error: str | None = None
    kind: str = REWRITE
    version: int = PROTOCOL_VERSION


# -- the NDV job (compute-stats) --------------------------------------------------------------------------

@dataclass(frozen=True)
class NdvColumn:
    field_id: int
    path: list[str]  # field names from the top level down
    type: str


@dataclass(frozen=True)
class NdvTask:
    task_id: str
    inputs: list[InputFile]
    version: int = PROTOCOL_VERSION


@dataclass(frozen=True)
class NdvPlan:
    table: str
    location: str
    schema: dict[str, Any]  # the read schema's JSON: the columns, and the fields equality deletes use
    io_properties: dict[str, str]
    columns: list[NdvColumn]
    app_name: str
    tasks: list[NdvTask] = field(default_factory=list)
    kind: str = NDV
    version: int = PROTOCOL_VERSION

    def settings(self) -> "NdvPlan":
        return dataclasses.replace(self, tasks=[])


@dataclass(frozen=True)
class NdvTaskResult:
    """One task's rows read and serialized theta sketches (base64), by field id."""

    task_id: str
    rows: int = 0
    sketches: dict[int, str] = field(default_factory=dict)
    error: str | None = None
    version: int = PROTOCOL_VERSION


@dataclass(frozen=True)
class NdvResult:
    rows: int = 0
    sketches: dict[int, str] = field(default_factory=dict)
    error: str | None = None
    kind: str = NDV
    version: int = PROTOCOL_VERSION


PLANS: dict[str, type] = {REWRITE: RewritePlan, NDV: NdvPlan}


# -- JSON ----------------------------------------------------------------------------------------------------

def to_json(message: Any) -> dict[str, Any]:
    """A message (or any of these dataclasses) as JSON data (integer keys as strings)."""
    return _encode(message)


def dumps(message: Any) -> str:
    return json.dumps(to_json(message))


def from_json(cls: type[T], data: Any, *, what: str | None = None) -> T:
    """``data`` decoded as ``cls``: the version checked first (for messages that carry one), then
    every field, typed; a missing or unknown field or a wrong type is a :class:`ProtocolError`."""
    what = what or _describe(cls)
    if not isinstance(data, dict):
        raise ProtocolError(f"{what}: not a JSON object")
    if "version" in {f.name for f in dataclasses.fields(cls)}:
        check_version(data.get("version"), what=what)
    return _decode(cls, data, what)


def loads(cls: type[T], text: str | bytes, *, what: str | None = None) -> T:
    what = what or _describe(cls)
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ProtocolError(f"{what}: invalid JSON: {e}") from None
    return from_json(cls, data, what=what)


def load_plan(text: str | bytes) -> RewritePlan | NdvPlan:
    """The plan file, of the kind it names."""
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ProtocolError(f"job plan: invalid JSON: {e}") from None
    if not isinstance(data, dict):
        raise ProtocolError("job plan: not a JSON object")
    check_version(data.get("version"), what="job plan")
    cls = PLANS.get(data.get("kind"))  # type: ignore[arg-type]
    if cls is None:
        raise ProtocolError(f"job plan: unknown kind {data.get('kind')!r} (one of {', '.join(PLANS)})")
    return from_json(cls, data)


def failed_result(plan_text: str | bytes, error: str) -> RewriteResult | NdvResult:
    """The result of a job that could not take its plan: of the kind the plan names, if any."""
    try:
        kind = json.loads(plan_text).get("kind")
    except (ValueError, AttributeError):
        kind = None
    return NdvResult(error=error) if kind == NDV else RewriteResult(error=error)


def check_version(version: Any, *, what: str) -> None:
    if version is None:
        raise ProtocolError(f"{what} has no protocol version; this icectl speaks job protocol version "
                            f"{PROTOCOL_VERSION}", hint=_SAME_ICECTL)
    if type(version) is not int or version != PROTOCOL_VERSION:
        raise ProtocolError(f"{what} is of job protocol version {version!r}; this icectl speaks version "
                            f"{PROTOCOL_VERSION}: the client and the Spark job run different icectl releases",
                            hint=_SAME_ICECTL)


_SAME_ICECTL = ("the job must import the icectl that plans it: check the job template's python, "
                "pack_environment and archives")


def _describe(cls: type) -> str:
    return {RewritePlan: "job plan", NdvPlan: "job plan", RewriteTask: "job task", NdvTask: "job task",
            RewriteTaskResult: "job task result", NdvTaskResult: "job task result",
            RewriteResult: "job result", NdvResult: "job result"}.get(cls, cls.__name__)


def _encode(v: Any) -> Any:
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: _encode(getattr(v, f.name)) for f in dataclasses.fields(v)}
    if isinstance(v, (list, tuple)):
        return [_encode(x) for x in v]
    if isinstance(v, dict):
        return {str(k) if isinstance(k, int) else k: _encode(x) for k, x in v.items()}
    return v


_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _decode(cls: type, data: dict[str, Any], what: str) -> Any:
    names = {f.name: f for f in dataclasses.fields(cls)}
    if "kind" in names and data.get("kind", names["kind"].default) != names["kind"].default:
        raise ProtocolError(f"{what}: a {data['kind']!r} message, not {names['kind'].default!r}")
    unknown = sorted(set(data) - set(names))
    if unknown:
        raise ProtocolError(f"{what}: unknown field {unknown[0]!r} in {cls.__name__}")
    hints = _hints(cls)
    kwargs = {}
    for name, f in names.items():
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ProtocolError(f"{what}: {cls.__name__} lacks {name!r}")
            continue
        kwargs[name] = _value(hints[name], data[name], f"{what}: {cls.__name__}.{name}")
    return cls(**kwargs)


def _value(t: Any, v: Any, where: str) -> Any:
    origin = typing.get_origin(t)
    if t is Any:
        return v
    if origin in (Union, types.UnionType):
        args = typing.get_args(t)
        if v is None:
            if type(None) in args:
                return None
            raise ProtocolError(f"{where} is null")
        (inner,) = [a for a in args if a is not type(None)]
        return _value(inner, v, where)
    if dataclasses.is_dataclass(t):
        if not isinstance(v, dict):
            raise ProtocolError(f"{where}: not a JSON object")
        return _decode(t, v, where)
    if origin is list:
        if not isinstance(v, list):
            raise ProtocolError(f"{where}: not a list")
        (inner,) = typing.get_args(t)
        return [_value(inner, x, where) for x in v]
    if origin is dict:
        if not isinstance(v, dict):
            raise ProtocolError(f"{where}: not a JSON object")
        kt, vt = typing.get_args(t)
        out = {}
        for k, x in v.items():
            if kt is int:
                try:
                    k = int(k)
                except ValueError:
                    raise ProtocolError(f"{where}: key {k!r} is not an integer") from None
            out[k] = _value(vt, x, where)
        return out
    if t is int:
        if isinstance(v, bool) or not isinstance(v, int):
            raise ProtocolError(f"{where}: {v!r} is not an integer")
        return v
    if t is bool:
        if not isinstance(v, bool):
            raise ProtocolError(f"{where}: {v!r} is not true or false")
        return v
    if t is str:
        if not isinstance(v, str):
            raise ProtocolError(f"{where}: {v!r} is not a string")
        return v
    raise TypeError(f"no JSON decoding for {t}")  # a field type this module does not know: a bug here


__all__ = ["EqualityDelete", "InputFile", "NdvColumn", "NdvPlan", "NdvResult", "NdvTask", "NdvTaskResult",
           "PROTOCOL_VERSION", "PartitionField", "PositionDelete", "ProtocolError", "RewriteGroup", "RewritePlan",
           "RewriteResult", "RewriteTask", "RewriteTaskResult", "SortField", "WrittenFile", "check_version",
           "dumps", "failed_result", "from_json", "load_plan", "loads", "to_json"]
