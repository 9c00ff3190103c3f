"""Avro writer schemas of manifest lists and manifests, per format version (spec: "Manifests",
"Manifest Lists", Appendix E), in the shape Iceberg Java writes them (field ids as ``field-id``,
maps with non-string keys as arrays of ``k<id>_v<id>`` records with ``logicalType: map``).
"""
from __future__ import annotations

from typing import Any

from icectl.spec.content_stats import NAN_TYPES, NO_BOUNDS, SPATIAL, VARLEN_TYPES, column_block, stats_columns
from icectl.spec.types import IcebergType, ListType, MapType, PrimitiveType, Schema, StructType


def _opt(t: Any, field_id: int, name: str, doc: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "type": ["null", t], "default": None, "field-id": field_id}
    if doc:
        d["doc"] = doc
    return d


def _req(t: Any, field_id: int, name: str, doc: str | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"name": name, "type": t, "field-id": field_id}
    if doc:
        d["doc"] = doc
    return d


def _int_map(field_id: int, name: str, key_id: int, value_id: int, value_type: Any) -> dict[str, Any]:
    return _opt({
        "type": "array", "logicalType": "map",
        "items": {"type": "record", "name": f"k{key_id}_v{value_id}", "fields": [
            {"name": "key", "type": "int", "field-id": key_id},
            {"name": "value", "type": value_type, "field-id": value_id},
        ]},
    }, field_id, name)


def _list(field_id: int, name: str, element_id: int, element_type: Any) -> dict[str, Any]:
    return _opt({"type": "array", "items": element_type, "element-id": element_id}, field_id, name)


def decimal_required_bytes(precision: int) -> int:
    """Minimum bytes for a decimal of this precision (as Iceberg's TypeUtil.decimalRequiredBytes)."""
    for n in range(1, 24):
        if 2 ** (8 * n - 1) - 1 >= 10 ** precision - 1:
            return n
    raise ValueError(precision)


def avro_type(t: IcebergType, names: dict[str, int] | None = None) -> Any:
    """The Avro type Iceberg uses for a value of this Iceberg type."""
    names = names if names is not None else {}
    if isinstance(t, PrimitiveType):
        b = t.base
        simple = {"boolean": "boolean", "int": "int", "long": "long", "float": "float", "double": "double",
                  "string": "string", "binary": "bytes", "unknown": "null"}
        if b in simple:
            return simple[b]
        if b == "date":
            return {"type": "int", "logicalType": "date"}
        if b == "time":
            return {"type": "long", "logicalType": "time-micros"}
        if b in ("timestamp", "timestamptz"):
            return {"type": "long", "logicalType": "timestamp-micros", "adjust-to-utc": b == "timestamptz"}
        if b in ("timestamp_ns", "timestamptz_ns"):
            return {"type": "long", "logicalType": "timestamp-nanos", "adjust-to-utc": b == "timestamptz_ns"}
        if b == "uuid":
            return _named_fixed(names, "uuid_fixed", 16, {"logicalType": "uuid"})
        if b == "fixed":
            return _named_fixed(names, f"fixed_{t.length}", t.length, {})
        if b == "decimal":
            return _named_fixed(names, f"decimal_{t.precision}_{t.scale}", decimal_required_bytes(t.precision),
                                {"logicalType": "decimal", "precision": t.precision, "scale": t.scale})
        if b in ("geometry", "geography", "variant"):
            return "bytes"
        raise ValueError(f"no Avro type for {t}")
    if isinstance(t, StructType):
        return {"type": "record", "name": f"r{id(t) % 100000}", "fields": [
            (_req if f.required else _opt)(avro_type(f.field_type, names), f.field_id, f.name) for f in t.fields]}
    if isinstance(t, ListType):
        el = avro_type(t.element_type, names)
        return {"type": "array", "items": el if t.element_required else ["null", el], "element-id": t.element_id}
    if isinstance(t, MapType):
        return {"type": "array", "logicalType": "map", "items": {
            "type": "record", "name": f"k{t.key_id}_v{t.value_id}", "fields": [
                {"name": "key", "type": avro_type(t.key_type, names), "field-id": t.key_id},
                {"name": "value", "type": avro_type(t.value_type, names) if t.value_required
                 else ["null", avro_type(t.value_type, names)], "field-id": t.value_id}]}}
    raise ValueError(f"no Avro type for {t}")


def _named_fixed(names: dict[str, int], name: str, size: int, extra: dict[str, Any]) -> Any:
    # Avro allows a named type to be defined once per schema; later uses refer to it by name.
    if name in names:
        return name
    names[name] = size
    return {"type": "fixed", "name": name, "size": size, **extra}


def _valid_avro_char(c: str, first: bool) -> bool:
    return c == "_" or ("a" <= c.lower() <= "z") or (not first and "0" <= c <= "9")


def make_compatible_name(name: str) -> str:
    """An Avro-legal field name, as Iceberg Java's ``AvroSchemaUtil.makeCompatibleName`` makes
    one: a leading digit becomes ``_<digit>``, any other illegal character ``_x<HEX>`` (so the
    partition field ``s.a`` of a nested column is written as ``s_x2Ea``)."""
    if name and all(_valid_avro_char(c, i == 0) for i, c in enumerate(name)):
        return name
    out = []
    for i, c in enumerate(name):
        if _valid_avro_char(c, i == 0):
            out.append(c)
        elif "0" <= c <= "9":
            out.append("_" + c)
        else:
            out.append("_x" + format(ord(c), "X"))
    return "".join(out)


def partition_record(partition_fields: list[tuple[int, str, IcebergType]]) -> dict[str, Any]:
    """The partition struct (field 102); names made Avro-legal (values are read by position)."""
    names: dict[str, int] = {}
    return {"type": "record", "name": "r102", "fields": [
        _opt(avro_type(t, names), fid, make_compatible_name(name)) for fid, name, t in partition_fields]}


def data_file_schema(format_version: int, partition: dict[str, Any],
                     content_stats: dict[str, Any] | None = None) -> dict[str, Any]:
    v = format_version
    fields: list[dict[str, Any]] = []
    if v >= 2:
        fields.append(_req("int", 134, "content", "Contents of the file: 0=data, 1=position deletes, 2=equality deletes"))
    fields += [
        _req("string", 100, "file_path", "Location URI with FS scheme" if v < 4 else "Location, relative to the table location or absolute"),
        _req("string", 101, "file_format", "File format name: avro, orc, or parquet"),
        {"name": "partition", "type": partition, "doc": "Partition data tuple, schema based on the partition spec", "field-id": 102},
        _req("long", 103, "record_count", "Number of records in the file"),
        _req("long", 104, "file_size_in_bytes", "Total file size in bytes"),
    ]
    if v == 1:
        fields.append(_req("long", 105, "block_size_in_bytes"))
    if v < 4:
        fields += [
            _int_map(108, "column_sizes", 117, 118, "long"),
            _int_map(109, "value_counts", 119, 120, "long"),
            _int_map(110, "null_value_counts", 121, 122, "long"),
            _int_map(137, "nan_value_counts", 138, 139, "long"),
            _int_map(125, "lower_bounds", 126, 127, "bytes"),
            _int_map(128, "upper_bounds", 129, 130, "bytes"),
        ]
    fields += [
        _opt("bytes", 131, "key_metadata", "Encryption key metadata blob"),
        _list(132, "split_offsets", 133, "long"),
    ]
    if v >= 2:
        fields.append(_list(135, "equality_ids", 136, "int"))
    fields.append(_opt("int", 140, "sort_order_id", "Sort order ID"))
    if v >= 3:
        fields += [
            _opt("long", 142, "first_row_id", "The first row ID assigned to the first row in the data file"),
            _opt("string", 143, "referenced_data_file", "Fully qualified location (URI with FS scheme) of a data file that all deletes reference"),
            _opt("long", 144, "content_offset", "The offset in the file where the content starts"),
            _opt("long", 145, "content_size_in_bytes", "The length of referenced content stored in the file"),
        ]
    elif v == 2:
        fields.append(_opt("string", 143, "referenced_data_file", "Fully qualified location (URI with FS scheme) of a data file that all deletes reference"))
    if v >= 4 and content_stats is not None:
        fields.append(_opt(content_stats, 146, "content_stats", "Typed per-column statistics"))
    return {"type": "record", "name": "r2", "fields": fields}


def manifest_entry_schema(format_version: int, partition: dict[str, Any],
                          content_stats: dict[str, Any] | None = None) -> dict[str, Any]:
    v = format_version
    fields = [_req("int", 0, "status")]
    if v == 1:
        fields.append(_req("long", 1, "snapshot_id"))
    else:
        fields += [_opt("long", 1, "snapshot_id"), _opt("long", 3, "sequence_number"),
                   _opt("long", 4, "file_sequence_number")]
    fields.append({"name": "data_file", "type": data_file_schema(v, partition, content_stats), "field-id": 2})
    return {"type": "record", "name": "manifest_entry", "fields": fields}


def manifest_file_schema(format_version: int) -> dict[str, Any]:
    v = format_version
    summary = {"type": "record", "name": "r508", "fields": [
        _req("boolean", 509, "contains_null", "True if any file has a null partition value"),
        _opt("boolean", 518, "contains_nan", "True if any file has a nan partition value"),
        _opt("bytes", 510, "lower_bound", "Partition lower bound for all files"),
        _opt("bytes", 511, "upper_bound", "Partition upper bound for all files"),
    ]}
    fields = [
        _req("string", 500, "manifest_path", "Location URI with FS scheme" if v < 4 else "Location, relative to the table location or absolute"),
        _req("long", 501, "manifest_length", "Total file size in bytes"),
        _req("int", 502, "partition_spec_id", "Spec ID used to write"),
    ]
    if v >= 2:
        fields += [
            _req("int", 517, "content", "Contents of the manifest: 0=data, 1=deletes"),
            _req("long", 515, "sequence_number", "Sequence number when the manifest was added"),
            _req("long", 516, "min_sequence_number", "Lowest sequence number in the manifest"),
        ]
    fields.append((_opt if v == 1 else _req)("long", 503, "added_snapshot_id", "Snapshot ID that added the manifest"))
    cnt = _opt if v == 1 else _req
    fields += [
        cnt("int", 504, "added_files_count", "Added entry count"),
        cnt("int", 505, "existing_files_count", "Existing entry count"),
        cnt("int", 506, "deleted_files_count", "Deleted entry count"),
        cnt("long", 512, "added_rows_count", "Added rows count"),
        cnt("long", 513, "existing_rows_count", "Existing rows count"),
        cnt("long", 514, "deleted_rows_count", "Deleted rows count"),
        _list(507, "partitions", 508, summary),
        _opt("bytes", 519, "key_metadata", "Encryption key metadata blob"),
    ]
    if v >= 3:
        fields.append(_opt("long", 520, "first_row_id", "Starting row ID to assign to new rows in ADDED data files"))
    return {"type": "record", "name": "manifest_file", "fields": fields}


def content_stats_schema(schema: Schema) -> dict[str, Any]:
    """The Avro record of v4 ``content_stats`` (data_file field 146) for a table schema, in the id
    layout of :mod:`icectl.spec.content_stats`."""
    names: dict[str, int] = {}
    columns = []
    for fid, t in stats_columns(schema):
        b = column_block(fid)
        fields: list[dict[str, Any]] = [
            _opt("long", b + 1, "value_count"), _opt("long", b + 2, "null_value_count")]
        if t.base in NAN_TYPES:
            fields.append(_opt("long", b + 3, "nan_value_count"))
        if t.base in VARLEN_TYPES:
            fields.append(_opt("int", b + 4, "avg_value_size_in_bytes"))
        if t.base in SPATIAL:
            for off, name in ((5, "lower_bound"), (6, "upper_bound")):
                fields.append(_opt({"type": "record", "name": f"geo_{name}_{fid}", "fields": [
                    {"name": "x", "type": "double", "field-id": b + 10 + off * 4},
                    {"name": "y", "type": "double", "field-id": b + 11 + off * 4},
                    _opt("double", b + 12 + off * 4, "z"), _opt("double", b + 13 + off * 4, "m")]}, b + off, name))
        elif t.base not in NO_BOUNDS:
            fields.append(_opt(avro_type(t, names), b + 5, "lower_bound"))
            fields.append(_opt(avro_type(t, names), b + 6, "upper_bound"))
        fields.append(_opt("boolean", b + 7, "tight_bounds"))
        fields.append(_opt("long", b + 8, "column_size_in_bytes"))
        columns.append(_opt({"type": "record", "name": f"f{fid}", "fields": fields}, b, f"f{fid}"))
    # A namespace of its own: the fixed types it defines (decimal_9_2, uuid_fixed...) would
    # otherwise redefine those of the partition struct in the same manifest schema.
    return {"type": "record", "name": "content_stats", "namespace": "content_stats", "fields": columns}


# -- reading: the writer's field types against the spec's ------------------------------------------

# Avro "Schema Resolution": a writer's value is read as the reader's type when both are the same,
# or by one of these promotions.
_PROMOTES = {("int", "long"), ("int", "float"), ("int", "double"), ("long", "float"), ("long", "double"),
             ("float", "double"), ("string", "bytes"), ("bytes", "string")}
_SPEC_DEPENDENT = ("partition", "content_stats")  # their types follow the table's spec and schema


def _named_types(t: Any, named: dict[str, Any]) -> None:
    stack = [t]
    while stack:
        x = stack.pop()
        if isinstance(x, list):
            stack.extend(x)
        elif isinstance(x, dict):
            if x.get("type") in ("record", "enum", "fixed") and isinstance(x.get("name"), str):
                named.setdefault(x["name"], x)
            stack.extend(f.get("type") for f in x.get("fields", []) if isinstance(f, dict))
            stack.extend(x[k] for k in ("items", "values") if k in x)
            if isinstance(x.get("type"), (dict, list)):
                stack.append(x["type"])


def _shape(t: Any, named: dict[str, Any]) -> Any:
    """A type without its null branch, named references and logical types: a primitive name, or the
    record/array/map dict."""
    if isinstance(t, list):
        other = [x for x in t if x != "null"]
        return _shape(other[0], named) if len(other) == 1 else ("union", len(other))
    if isinstance(t, str):
        return _shape(named[t], named) if t in named else t
    if isinstance(t, dict):
        kind = t.get("type")
        if isinstance(kind, (str, list)) and kind not in ("record", "array", "map", "enum", "fixed") \
                and not (isinstance(kind, str) and kind in named):
            return _shape(kind, named)
        return t if kind in ("record", "array", "map", "enum", "fixed") else _shape(kind, named)
    return repr(t)


def _kind(s: Any) -> str:
    return s.get("type") if isinstance(s, dict) else s if isinstance(s, str) else f"union of {s[1]} types"


def _mismatch(writer: Any, reader: Any, wn: dict[str, Any], rn: dict[str, Any], name: str) -> str | None:
    w, r = _shape(writer, wn), _shape(reader, rn)
    wk, rk = _kind(w), _kind(r)
    if wk == rk:
        if wk == "record":
            return record_mismatch(w, [r], wn, rn, prefix=name + ".")
        if wk == "array":
            return _mismatch(w.get("items"), r.get("items"), wn, rn, name + "[]")
        if wk == "map":
            return _mismatch(w.get("values"), r.get("values"), wn, rn, name + "{}")
        return None
    if (wk, rk) in _PROMOTES:
        return None
    return f"field {name} is an Avro {wk}, not {rk}"


def record_mismatch(writer: Any, readers: list[Any], wn: dict[str, Any] | None = None,
                    rn: dict[str, Any] | None = None, *, prefix: str = "") -> str | None:
    """The first field of the ``writer`` record whose type none of ``readers`` (the same record in
    several format versions) resolves, as ``field data_file.record_count is an Avro string, not
    long``; None when every field the readers know resolves. Fields the readers do not know, and
    missing fields, are left to the reader (read tolerantly)."""
    if wn is None:
        wn = {}
        _named_types(writer, wn)
    if rn is None:
        rn = {}
        for r in readers:
            _named_types(r, rn)
    fields = writer.get("fields") if isinstance(writer, dict) else None
    if not isinstance(fields, list):
        return f"the writer schema is not a record with fields ({_kind(_shape(writer, wn))})"
    for f in fields:
        if not isinstance(f, dict) or f.get("name") in _SPEC_DEPENDENT:
            continue
        candidates = [g["type"] for r in readers for g in r.get("fields", []) if g.get("name") == f.get("name")]
        if not candidates:
            continue
        problems = [_mismatch(f.get("type"), c, wn, rn, prefix + str(f.get("name"))) for c in candidates]
        if all(problems):
            return problems[0]
    return None


MANIFEST_LIST_READERS = tuple(manifest_file_schema(v) for v in (1, 2, 3, 4))
MANIFEST_ENTRY_READERS = tuple(manifest_entry_schema(v, partition_record([])) for v in (1, 2, 3, 4))
