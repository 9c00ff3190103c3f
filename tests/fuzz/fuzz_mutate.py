"""The mutations of the fuzzer: each breaks one thing in a table's metadata JSON, manifest list or
manifest, deterministically from a ``random.Random``, and says what it did.

A mutation returns ``(data, detail, names)``: the mutant's bytes, a one-line description for the
failure report (``snapshots[1].timestamp-ms = 2**62``), and the words a ``validate`` finding about
it may use to name what is wrong (the file's name, the field, the new path). It returns None when
it does not apply to that file (a manifest without the field it looks for).

Metadata JSON: bit flips, truncation, a removed field, a value of the wrong type, huge numbers
(2**62, -2**62, 2**63-1, 2**70, 1e308, 1e400), 100, 1,000 and 3,000 levels of nesting, invalid UTF-8,
a lone surrogate, a NUL byte or a newline in a path, an unknown URI scheme (``zz://``), a list item
dropped or repeated.

Avro (manifest lists and manifests, written back with :mod:`fuzz_avro` or fastavro): bit flips,
truncation, a block's record count of 2**62, 2**63-1, 2**70, -1 or one too many, a negative or
huge block size, a broken sync marker, an unknown codec, a writer schema 100 to 3,000 levels deep, broken
schema JSON, Iceberg header metadata (``schema``, ``partition-spec``, ``format-version`` ...)
removed, of the wrong type or 1,000 levels deep, a string whose length is negative, invalid UTF-8,
a NUL byte or an unknown scheme in a path, a field of the wrong Avro type, a field removed, a long
set to a huge value or to a varint of 2**70, a required field null.
"""
from __future__ import annotations

import io
import json
import os
import random
from typing import Any, Callable

import fuzz_avro

Result = "tuple[bytes, str, tuple[str, ...]] | None"
HUGE_INTS = (2**62, -2**62, 2**63 - 1, 2**63, -2**63 - 1, 2**70, -2**70)
HUGE_NUMBERS = HUGE_INTS + (1e308, -1e308)
HUGE_TEXT = ("1e400", "-1e400", "NaN", "Infinity", "1" * 400)  # not what json.dumps writes for any value
DEEP = 1000
DEEPER = 3000
SHALLOW = 100  # deep, but within what Python's JSON parser and icectl's Avro reader take: the code after them sees it
PATH_ENDINGS = (".avro", ".parquet", ".puffin", ".json", ".orc", ".stats")


# -- JSON -------------------------------------------------------------------------------------

def _walk(obj: Any, path: tuple = ()) -> list[tuple[tuple, Any]]:
    out = [(path, obj)]
    if isinstance(obj, dict):
        for k, v in obj.items():
            out += _walk(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            out += _walk(v, path + (i,))
    return out


def _set(obj: Any, path: tuple, value: Any) -> None:
    for p in path[:-1]:
        obj = obj[p]
    obj[path[-1]] = value


def _delete(obj: Any, path: tuple) -> None:
    for p in path[:-1]:
        obj = obj[p]
    del obj[path[-1]]


def show(path: tuple) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "<document>"


def _keys(path: tuple) -> tuple[str, ...]:
    return tuple(p for p in path if isinstance(p, str))


def _is_path(v: Any) -> bool:
    return isinstance(v, str) and ("/" in v or v.endswith(PATH_ENDINGS))


def _dump(obj: Any, marker_text: dict[str, str] | None = None, marker_bytes: dict[str, bytes] | None = None) -> bytes:
    """The JSON text (ASCII: a lone surrogate is written as its ``\\ud800`` escape), with each
    ``"marker"`` string replaced by raw text or raw bytes (nesting deeper than json.dumps can
    write, a number json.dumps never writes, bytes that are not UTF-8)."""
    data = json.dumps(obj, indent=2).encode()
    for m, text in (marker_text or {}).items():
        data = data.replace(json.dumps(m).encode(), text.encode())
    for m, raw in (marker_bytes or {}).items():
        data = data.replace(m.encode(), raw)
    return data


def _depth(rng: random.Random) -> int:
    return rng.choice([SHALLOW, DEEP, DEEP, DEEPER])


def deep_json(depth: int, rng: random.Random) -> str:
    kind = rng.choice(["list", "object", "mixed"])
    if kind == "list":
        return "[" * depth + "1" + "]" * depth
    if kind == "object":
        return '{"a":' * depth + "1" + "}" * depth
    return '{"a":[' * (depth // 2) + "1" + "]}" * (depth // 2)


def json_mutations() -> dict[str, Callable[..., Any]]:
    return {
        "json.bitflip": m_bitflip, "json.truncate": m_truncate, "json.remove-field": j_remove,
        "json.wrong-type": j_wrong_type, "json.huge-number": j_huge, "json.deep-nesting": j_deep,
        "json.invalid-utf8": j_invalid_utf8, "json.lone-surrogate": j_surrogate, "json.nul-in-path": j_nul,
        "json.newline-in-path": j_newline, "json.unknown-scheme": j_scheme, "json.list-item": j_list_item,
    }


def j_remove(rng: random.Random, data: bytes, name: str) -> Result:
    obj = json.loads(data)
    paths = [p for p, _ in _walk(obj) if p and isinstance(p[-1], str)]
    path = rng.choice(paths)
    _delete(obj, path)
    return _dump(obj), f"removed {show(path)}", (name,) + _keys(path)


WRONG_VALUES: tuple[Any, ...] = ("zz", "", 7, -1, 1.5, True, None, [], [1, "a"], {}, {"zz": 1})


def j_wrong_type(rng: random.Random, data: bytes, name: str) -> Result:
    obj = json.loads(data)
    path, old = rng.choice([(p, v) for p, v in _walk(obj) if p])
    new = rng.choice([v for v in WRONG_VALUES if type(v) is not type(old)])
    _set(obj, path, new)
    return _dump(obj), f"{show(path)} = {json.dumps(new)} (was {type(old).__name__})", (name,) + _keys(path)


def j_huge(rng: random.Random, data: bytes, name: str) -> Result:
    obj = json.loads(data)
    numeric = [p for p, v in _walk(obj) if p and isinstance(v, (int, float)) and not isinstance(v, bool)]
    # The fields the issue names, more often than the rest.
    hot = [p for p in numeric if p[-1] in ("timestamp-ms", "last-updated-ms", "snapshot-id", "sequence-number",
                                           "current-snapshot-id", "last-sequence-number", "next-row-id")]
    path = rng.choice(hot if hot and rng.random() < 0.6 else numeric)
    if rng.random() < 0.25:
        text = rng.choice(HUGE_TEXT)
        _set(obj, path, "__HUGE__")
        return _dump(obj, {"__HUGE__": text}), f"{show(path)} = {text[:12]}", (name,) + _keys(path)
    value = rng.choice(HUGE_NUMBERS)
    _set(obj, path, value)
    return _dump(obj), f"{show(path)} = {value!r}", (name,) + _keys(path)


def j_deep(rng: random.Random, data: bytes, name: str) -> Result:
    obj = json.loads(data)
    nodes = [p for p, _ in _walk(obj) if p]
    summaries = [p for p in nodes if p[-1] in ("summary", "properties", "refs", "schemas", "fields", "type")]
    path = rng.choice(summaries if summaries and rng.random() < 0.6 else nodes)
    depth = _depth(rng)
    _set(obj, path, "__DEEP__")
    return (_dump(obj, {"__DEEP__": deep_json(depth, rng)}), f"{show(path)} nested {depth} levels deep",
            (name,) + _keys(path))


def _string_nodes(obj: Any, *, paths_only: bool) -> list[tuple[tuple, str]]:
    return [(p, v) for p, v in _walk(obj) if p and isinstance(v, str) and (_is_path(v) or not paths_only)]


def j_invalid_utf8(rng: random.Random, data: bytes, name: str) -> Result:
    obj = json.loads(data)
    path, old = rng.choice(_string_nodes(obj, paths_only=rng.random() < 0.5))
    raw = rng.choice([b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80"])
    cut = rng.randint(0, len(old))
    _set(obj, path, old[:cut] + "__BADUTF8__" + old[cut:])
    return _dump(obj, marker_bytes={"__BADUTF8__": raw}), f"{show(path)}: bytes {raw!r} in the string", \
        (name,) + _keys(path)


def _mutate_string(rng: random.Random, data: bytes, name: str, insert: str, what: str) -> Result:
    obj = json.loads(data)
    nodes = _string_nodes(obj, paths_only=True) or _string_nodes(obj, paths_only=False)
    path, old = rng.choice(nodes)
    cut = rng.randint(0, len(old))
    new = old[:cut] + insert + old[cut:]
    _set(obj, path, new)
    return _dump(obj), f"{show(path)}: {what} at {cut}", (name,) + _keys(path)


def j_surrogate(rng: random.Random, data: bytes, name: str) -> Result:
    return _mutate_string(rng, data, name, rng.choice(["\ud800", "\udfff", "\udc80"]), "a lone surrogate")


def j_nul(rng: random.Random, data: bytes, name: str) -> Result:
    return _mutate_string(rng, data, name, "\x00", "a NUL byte")


def j_newline(rng: random.Random, data: bytes, name: str) -> Result:
    return _mutate_string(rng, data, name, rng.choice(["\n", "\r", "\n\x1b[31m"]), "a line break")


def j_scheme(rng: random.Random, data: bytes, name: str) -> Result:
    obj = json.loads(data)
    nodes = _string_nodes(obj, paths_only=True)
    if not nodes:
        return None
    path, old = rng.choice(nodes)
    new = rng.choice(["zz://bucket/", "zz:", "hdfs://nn:8020/", "gs://b/", "abfss://c@a.dfs.core.windows.net/",
                      "http://127.0.0.1:9/"]) + old.lstrip("/")
    _set(obj, path, new)
    return _dump(obj), f"{show(path)} = {new[:40]}", (name, new) + _keys(path)


def j_list_item(rng: random.Random, data: bytes, name: str) -> Result:
    obj = json.loads(data)
    lists = [(p, v) for p, v in _walk(obj) if p and isinstance(v, list) and v]
    if not lists:
        return None
    path, old = rng.choice(lists)
    i = rng.randrange(len(old))
    if rng.random() < 0.5:
        del old[i]
        what = f"removed {show(path)}[{i}]"
    else:
        old.insert(i, json.loads(json.dumps(old[i])))
        what = f"repeated {show(path)}[{i}]"
    return _dump(obj), what, (name,) + _keys(path)


# -- raw bytes --------------------------------------------------------------------------------

def m_bitflip(rng: random.Random, data: bytes, name: str) -> Result:
    b = bytearray(data)
    n = rng.choice([1, 1, 2, 4, 16])
    at = []
    for _ in range(n):
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
        at.append(i)
    return bytes(b), f"{n} bit(s) flipped at {sorted(at)[:4]}", (name,)


def m_truncate(rng: random.Random, data: bytes, name: str) -> Result:
    cut = rng.choice([0, 1, 4, rng.randrange(len(data)), len(data) - 1, len(data) // 2])
    return data[:cut], f"truncated to {cut} of {len(data)} bytes", (name,)


# -- Avro -------------------------------------------------------------------------------------

def avro_mutations() -> dict[str, Callable[..., Any]]:
    return {
        "avro.bitflip": m_bitflip, "avro.truncate": m_truncate, "avro.block-count": a_block_count,
        "avro.block-size": a_block_size, "avro.sync": a_sync, "avro.codec": a_codec,
        "avro.schema-deep": a_schema_deep, "avro.schema-broken": a_schema_broken, "avro.meta": a_meta,
        "avro.meta-deep": a_meta_deep, "avro.string-length": a_string_length, "avro.string-bytes": a_string_bytes,
        "avro.path-scheme": a_path_scheme, "avro.wrong-type": a_wrong_type, "avro.remove-field": a_remove_field,
        "avro.huge-long": a_huge_long, "avro.huge-varint": a_huge_varint, "avro.null-required": a_null_required,
    }


def a_block_count(rng: random.Random, data: bytes, name: str) -> Result:
    c = fuzz_avro.parse(data)
    if not c.blocks:
        return None
    b = rng.choice(c.blocks)
    count = rng.choice([2**62, 2**63 - 1, 2**70, -1, -2**62, b.count + 1, 0])
    b.count_bytes = fuzz_avro.encode_long(count)
    return c.to_bytes(), f"block record count {count} (was {b.count})", (name,)


def a_block_size(rng: random.Random, data: bytes, name: str) -> Result:
    c = fuzz_avro.parse(data)
    if not c.blocks:
        return None
    b = rng.choice(c.blocks)
    size = rng.choice([-1, -2**62, 2**62, 2**70, 0])
    b.size_bytes = fuzz_avro.encode_long(size)
    return c.to_bytes(), f"block size {size}", (name,)


def a_sync(rng: random.Random, data: bytes, name: str) -> Result:
    c = fuzz_avro.parse(data)
    if not c.blocks:
        return None
    good = c.to_bytes()
    last = good.rfind(c.sync)
    broken = bytearray(good)
    broken[last + rng.randrange(16)] ^= 0xFF
    return bytes(broken), "the last sync marker changed", (name,)


def a_codec(rng: random.Random, data: bytes, name: str) -> Result:
    c = fuzz_avro.parse(data)
    codec = rng.choice(["zz", "snappy", "zstandard", "null", "bzip2", ""])
    blocks_as = c.codec
    c.metadata["avro.codec"] = codec.encode()
    return c.to_bytes(codec=blocks_as), f"avro.codec {codec!r}, blocks still {blocks_as}", (name, "codec")


def _deep_schema(depth: int, rng: random.Random) -> str:
    kind = rng.choice(["array", "record", "union", "map"])
    if kind == "array":
        return '{"type":"array","items":' * depth + '"long"' + "}" * depth
    if kind == "map":
        return '{"type":"map","values":' * depth + '"long"' + "}" * depth
    if kind == "union":
        return '["null",' * depth + '"long"' + "]" * depth
    return "".join(f'{{"type":"record","name":"zz{i}","fields":[{{"name":"f","type":' for i in range(depth)) \
        + '"long"' + "}]}" * depth


def a_schema_deep(rng: random.Random, data: bytes, name: str) -> Result:
    c = fuzz_avro.parse(data)
    schema = json.loads(c.metadata["avro.schema"])
    fields = schema["fields"]
    f = rng.choice(fields)
    old = f["type"]
    f["type"] = "__DEEP__"
    depth = _depth(rng)
    c.metadata["avro.schema"] = _dump(schema, {"__DEEP__": _deep_schema(depth, rng)})
    return c.to_bytes(), f"writer schema: field {f['name']} nested {depth} levels deep (was {str(old)[:20]})", \
        (name, f["name"], "schema")


def a_schema_broken(rng: random.Random, data: bytes, name: str) -> Result:
    c = fuzz_avro.parse(data)
    text = c.metadata["avro.schema"]
    choice = rng.choice(["truncate", "not-record", "unknown-type", "no-fields", "bad-utf8"])
    if choice == "truncate":
        c.metadata["avro.schema"] = text[:rng.randrange(len(text))]
    elif choice == "not-record":
        c.metadata["avro.schema"] = rng.choice([b'"long"', b"[]", b"null", b'{"type": "array", "items": "long"}'])
    elif choice == "unknown-type":
        c.metadata["avro.schema"] = text.replace(b'"long"', b'"zzlong"', 1)
    elif choice == "no-fields":
        s = json.loads(text)
        s.pop("fields")
        c.metadata["avro.schema"] = json.dumps(s).encode()
    else:
        c.metadata["avro.schema"] = text[:10] + b"\xff\xfe" + text[10:]
    return c.to_bytes(), f"writer schema: {choice}", (name, "schema")


ICEBERG_KEYS = ("schema", "partition-spec", "partition-spec-id", "format-version", "content", "schema-id",
                "snapshot-id", "parent-snapshot-id", "sequence-number", "first-row-id", "iceberg.schema")


def a_meta(rng: random.Random, data: bytes, name: str) -> Result:
    c = fuzz_avro.parse(data)
    keys = [k for k in c.metadata if not k.startswith("avro.")]
    if not keys:
        return None
    k = rng.choice(keys)
    action = rng.choice(["remove", "zz", "empty", "huge", "json", "bad-utf8"])
    if action == "remove":
        del c.metadata[k]
    else:
        c.metadata[k] = {"zz": b"zz", "empty": b"", "huge": str(rng.choice(HUGE_INTS)).encode(),
                         "json": rng.choice([b"[]", b"{}", b"null", b'{"type": 7}', b'[{"x": 1}]']),
                         "bad-utf8": b"\xff\xfe" + c.metadata[k]}[action]
    return c.to_bytes(), f"header metadata {k!r}: {action}", (name, k)


def a_meta_deep(rng: random.Random, data: bytes, name: str) -> Result:
    c = fuzz_avro.parse(data)
    keys = [k for k in c.metadata if k in ("schema", "partition-spec", "iceberg.schema")]
    if not keys:
        return None
    k = rng.choice(keys)
    depth = _depth(rng)
    if k == "partition-spec" or rng.random() < 0.5:
        c.metadata[k] = deep_json(depth, rng).encode()
    else:  # a struct type nested that deep, as an Iceberg schema could be
        c.metadata[k] = ('{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"x","required":false,"type":'
                         * depth + '"long"' + "}]}" * depth).encode()
    return c.to_bytes(), f"header metadata {k!r} nested {depth} levels deep", (name, k)


def _known_strings(data: bytes) -> list[str]:
    import fastavro

    out: set[str] = set()

    def walk(v: Any) -> None:
        if isinstance(v, str) and _is_path(v):
            out.add(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for rec in fastavro.reader(io.BytesIO(data)):
        walk(rec)
    return sorted(out)


def _string_in_block(rng: random.Random, c: fuzz_avro.Container, data: bytes) -> tuple[Any, str, tuple] | None:
    texts = _known_strings(data)
    rng.shuffle(texts)
    for text in texts:
        for b in c.blocks:
            spans = fuzz_avro.string_spans(b.data, text.encode())
            if spans:
                return b, text, rng.choice(spans)
    return None


def a_string_length(rng: random.Random, data: bytes, name: str) -> Result:
    c = fuzz_avro.parse(data)
    found = _string_in_block(rng, c, data)
    if found is None:
        return None
    b, text, (lp, sp, end) = found
    n = rng.choice([-5, -1, -2**62, 2**62, 2**31, len(text) + 1000])
    b.data = b.data[:lp] + fuzz_avro.encode_long(n) + b.data[sp:]
    return c.to_bytes(), f"string length {n} for {text[-30:]!r}", (name,)


def a_string_bytes(rng: random.Random, data: bytes, name: str) -> Result:
    c = fuzz_avro.parse(data)
    found = _string_in_block(rng, c, data)
    if found is None:
        return None
    b, text, (lp, sp, end) = found
    raw = rng.choice([b"\x00", b"\xff", b"\xed\xa0\x80", b"\n", b"\x80"])
    i = rng.randrange(sp, end)
    new = b.data[sp:i] + raw + b.data[i:end]
    b.data = b.data[:lp] + fuzz_avro.encode_bytes(new) + b.data[end:]
    return c.to_bytes(), f"bytes {raw!r} inside {text[-30:]!r}", (name,)


def a_path_scheme(rng: random.Random, data: bytes, name: str) -> Result:
    c = fuzz_avro.parse(data)
    found = _string_in_block(rng, c, data)
    if found is None:
        return None
    b, text, (lp, sp, end) = found
    new = rng.choice(["zz://bucket/", "zz:", "hdfs://nn:8020/", "gs://b/"]) + text.lstrip("/")
    b.data = b.data[:lp] + fuzz_avro.encode_bytes(new.encode()) + b.data[end:]
    return c.to_bytes(), f"path {new[:40]}", (name, new)


def a_huge_varint(rng: random.Random, data: bytes, name: str) -> Result:
    """A long right after a path string (a manifest list's manifest_length, a manifest's next
    field) written as a varint of 2**70, or of 2**64 (one bit too many for a long)."""
    c = fuzz_avro.parse(data)
    found = _string_in_block(rng, c, data)
    if found is None:
        return None
    b, text, (lp, sp, end) = found
    _, after = fuzz_avro.decode_long(b.data, end)
    n = rng.choice([2**70, 2**64, -2**70])
    b.data = b.data[:end] + fuzz_avro.encode_long(n) + b.data[after:]
    return c.to_bytes(), f"the value after {text[-30:]!r} as a varint of {n}", (name,)


# -- Avro records rewritten with fastavro -------------------------------------------------------

def _read_all(data: bytes) -> tuple[dict[str, Any], dict[str, str], list[dict[str, Any]]]:
    import fastavro

    r = fastavro.reader(io.BytesIO(data))
    records = list(r)
    c = fuzz_avro.parse(data)
    schema = json.loads(c.metadata["avro.schema"])
    meta = {k: v for k, v in r.metadata.items() if not k.startswith("avro.")}
    return schema, meta, records


def _write_all(schema: dict[str, Any], meta: dict[str, str], records: list[dict[str, Any]]) -> bytes:
    import fastavro

    buf = io.BytesIO()
    # A fixed sync marker: the same seed gives the same mutant, byte for byte.
    fastavro.writer(buf, fastavro.parse_schema(schema), records, metadata=meta, codec="deflate",
                    sync_marker=b"icectl-fuzz-sync")
    return buf.getvalue()


def _fields(schema: dict[str, Any]) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """(path of field names, field) of the top-level fields and those of ``data_file``."""
    out = []
    for f in schema["fields"]:
        out.append(((f["name"],), f))
        if isinstance(f["type"], dict) and f["type"].get("type") == "record" and f["name"] == "data_file":
            for g in f["type"]["fields"]:
                out.append(((f["name"], g["name"]), g))
    return out


def _map_values(records: list[dict[str, Any]], path: tuple[str, ...], fn: Callable[[Any], Any]) -> None:
    for r in records:
        for p in path[:-1]:
            r = r[p]
        r[path[-1]] = fn(r[path[-1]])


def _drop(records: list[dict[str, Any]], path: tuple[str, ...]) -> None:
    for r in records:
        for p in path[:-1]:
            r = r[p]
        r.pop(path[-1], None)


NEW_TYPES: tuple[tuple[Any, Any], ...] = (
    ("string", "zz"), ("long", 7), ("int", -3), ("boolean", True), ("double", 1.5), ("bytes", b"zz"),
    ({"type": "array", "items": "long"}, [1, 2]), ({"type": "map", "values": "string"}, {"zz": "zz"}),
    ({"type": "record", "name": "zz_record", "fields": [{"name": "zz", "type": "long"}]}, {"zz": 1}),
)


def a_wrong_type(rng: random.Random, data: bytes, name: str) -> Result:
    schema, meta, records = _read_all(data)
    path, f = rng.choice(_fields(schema))
    old = json.dumps(f["type"])
    new_type, value = rng.choice([(t, v) for t, v in NEW_TYPES if json.dumps(t) not in old])
    optional = isinstance(f["type"], list)
    f["type"] = ["null", new_type] if optional else new_type
    f.pop("default", None)
    _map_values(records, path, lambda v: None if optional and v is None else value)
    return _write_all(schema, meta, records), f"field {'.'.join(path)} of Avro type {json.dumps(new_type)[:30]} " \
        f"(was {old[:30]})", (name, path[-1])


def a_remove_field(rng: random.Random, data: bytes, name: str) -> Result:
    schema, meta, records = _read_all(data)
    path, f = rng.choice(_fields(schema))
    parent = schema if len(path) == 1 else next(x for x in schema["fields"] if x["name"] == path[0])["type"]
    parent["fields"] = [x for x in parent["fields"] if x["name"] != path[-1]]
    _drop(records, path)
    return _write_all(schema, meta, records), f"field {'.'.join(path)} removed", (name, path[-1])


def _numeric(t: Any) -> bool:
    t = [x for x in t if x != "null"][0] if isinstance(t, list) and len(t) == 2 else t
    return t in ("int", "long") or (isinstance(t, dict) and t.get("type") in ("int", "long"))


def a_huge_long(rng: random.Random, data: bytes, name: str) -> Result:
    schema, meta, records = _read_all(data)
    numeric = [(p, f) for p, f in _fields(schema) if _numeric(f["type"])]
    if not numeric:
        return None
    path, f = rng.choice(numeric)
    value = rng.choice([2**63 - 1, -2**63, 2**62, -2**62, -1, 2**31])
    f["type"] = ["null", "long"] if isinstance(f["type"], list) else "long"  # int -> long: a valid promotion
    _map_values(records, path, lambda v: value)
    return _write_all(schema, meta, records), f"field {'.'.join(path)} = {value}", (name, path[-1])


def a_null_required(rng: random.Random, data: bytes, name: str) -> Result:
    schema, meta, records = _read_all(data)
    required = [(p, f) for p, f in _fields(schema) if not isinstance(f["type"], list)]
    if not required:
        return None
    path, f = rng.choice(required)
    f["type"] = ["null", f["type"]]
    _map_values(records, path, lambda v: None)
    return _write_all(schema, meta, records), f"required field {'.'.join(path)} null", (name, path[-1])


# -- choosing ---------------------------------------------------------------------------------

def mutate(rng: random.Random, data: bytes, target_path: str, kind: str,
           only: str | None = None) -> tuple[str, bytes, str, tuple[str, ...]]:
    """(mutation name, bytes, detail, names) of one mutation of a file of ``kind`` (metadata,
    manifest-list, manifest); ``only`` forces a mutation by name."""
    table = json_mutations() if kind == "metadata" else avro_mutations()
    names = list(table)
    name = os.path.basename(target_path)
    for _ in range(50):
        m = only or rng.choice(names)
        out = table[m](rng, data, name)
        if out is not None and out[0] != data:
            return (m,) + out  # type: ignore[return-value]
        if only:
            raise ValueError(f"mutation {only} does not apply to {target_path}")
    raise RuntimeError(f"no mutation applies to {target_path}")
