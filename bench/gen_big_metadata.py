"""A metadata-only neglected table's metadata.json for the parse benchmark (bench_parse.py).

    python bench/gen_big_metadata.py --out /tmp/big.metadata.json --snapshots 100000

Streaming shape: each snapshot appends one file and carries a full Iceberg Java summary
(about 20 keys); a snapshot log per snapshot, a metadata log of 1,000 versions, 3 branches and
20 tags. Only the JSON is written. With ``--like`` (a real table's metadata.json, e.g. of `icectl demo`)
it takes that table's location, schemas, specs and properties, and every snapshot points at
its current manifest list, so `describe`, `snapshots` and `files` run on the result:

    icectl --warehouse /tmp/wh demo
    python bench/gen_big_metadata.py --like /tmp/wh/demo/events/metadata/v9.metadata.json \
        --out /tmp/wh/demo/events/metadata/v10.metadata.json   # and write 10 into version-hint.text
"""
from __future__ import annotations

import argparse
import json
import uuid


def build(n: int, location: str = "file:///tmp/neglected", like: dict | None = None) -> dict:
    t0 = 1_700_000_000_000
    snaps, log = [], []
    like_list = None
    if like is not None:
        location = like["location"]
        cur = next(s for s in like["snapshots"] if s["snapshot-id"] == like["current-snapshot-id"])
        like_list = cur["manifest-list"]
    files = records = size = 0
    for i in range(n):
        sid = 1_000_000_000_000 + i
        files += 1
        records += 100
        size += 4096
        summary = {
            "operation": "append", "spark.app.id": "local-1700000000000", "added-data-files": "1",
            "added-records": "100", "added-files-size": "4096", "changed-partition-count": "1",
            "total-records": str(records), "total-files-size": str(size), "total-data-files": str(files),
            "total-delete-files": "0", "total-position-deletes": "0", "total-equality-deletes": "0",
            "engine-version": "3.5.5", "app-id": "local-1700000000000", "engine-name": "spark",
            "iceberg-version": "Apache Iceberg 1.10.2 (commit 1234567890abcdef)",
        }
        mlist = f"{location}/metadata/snap-{sid}-1-{uuid.UUID(int=i)}.avro" if like_list is None else like_list
        s = {"sequence-number": i + 1, "snapshot-id": sid, "timestamp-ms": t0 + i * 5000, "summary": summary,
             "manifest-list": mlist, "schema-id": 0}
        if i:
            s["parent-snapshot-id"] = sid - 1
        snaps.append(s)
        log.append({"timestamp-ms": t0 + i * 5000, "snapshot-id": sid})
    last = snaps[-1]["snapshot-id"] if snaps else -1
    refs = {"main": {"snapshot-id": last, "type": "branch"}}
    for b in range(2):
        refs[f"branch-{b}"] = {"snapshot-id": snaps[n // 3 * (b + 1)]["snapshot-id"], "type": "branch"}
    for t in range(20):
        refs[f"tag-{t}"] = {"snapshot-id": snaps[(n // 21) * (t + 1)]["snapshot-id"], "type": "tag"}
    schema = {"type": "struct", "schema-id": 0, "fields": [
        {"id": 1, "name": "id", "required": False, "type": "long"},
        {"id": 2, "name": "ts", "required": False, "type": "timestamptz"},
        {"id": 3, "name": "payload", "required": False, "type": "string"}]}
    md = {
        "format-version": 2, "table-uuid": str(uuid.UUID(int=42)), "location": location,
        "last-sequence-number": n, "last-updated-ms": t0 + n * 5000, "last-column-id": 3,
        "current-schema-id": 0, "schemas": [schema], "default-spec-id": 0,
        "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
        "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}],
        "properties": {"write.format.default": "parquet"}, "current-snapshot-id": last, "refs": refs,
        "snapshots": snaps, "statistics": [], "partition-statistics": [], "snapshot-log": log,
        "metadata-log": [{"timestamp-ms": t0 + v, "metadata-file": f"{location}/metadata/{v:05d}-{uuid.UUID(int=v)}.metadata.json"}
                         for v in range(1000)],
    }
    if like is not None:
        for k in ("schemas", "current-schema-id", "partition-specs", "default-spec-id", "last-partition-id",
                  "last-column-id", "sort-orders", "default-sort-order-id", "properties", "table-uuid"):
            md[k] = like[k]
        for snap in snaps:
            snap["schema-id"] = like["current-schema-id"]
    return md


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", required=True)
    p.add_argument("--snapshots", type=int, default=100_000)
    p.add_argument("--location", default="file:///tmp/neglected")
    p.add_argument("--like", help="a real table's metadata.json: its location, schemas, specs, manifest list")
    a = p.parse_args()
    like = None
    if a.like:
        with open(a.like) as f:
            like = json.load(f)
    with open(a.out, "w") as f:
        json.dump(build(a.snapshots, a.location, like), f, indent=2)


if __name__ == "__main__":
    main()
