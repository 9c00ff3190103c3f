"""remove-orphans --quarantine / --restore-quarantine / --purge-quarantine on S3 (moto server on
loopback): orphans are copied into the quarantine prefix and their originals deleted in
``DeleteObjects`` batches; the quarantine prefix is never listed as orphans; a restore puts every
object back byte for byte (hashes compared); a purge deletes only the objects moved before its
cutoff (the run's clock moved through ``icectl.cli.orphans.now_ms``)."""
from __future__ import annotations

import datetime as dt
import hashlib
import json

import pytest

from icectl.cli import orphans as orphans_cli
from icectl.io import s3 as s3io
from icectl.io.safety import table_guard
from test_s3 import cli  # noqa: E402  (same folder)
from test_s3_lifecycle import s3_table  # noqa: F401,E402  (its fixture: the same table)

pytestmark = pytest.mark.s3

DAY = 86_400_000


def future() -> str:
    # moto stamps objects with the upload time: a cutoff in the future makes reachability alone decide.
    return (dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)).isoformat()


def _hashes(io, location: str) -> dict[str, str]:
    return {f.path: hashlib.sha256(io.read(f.path)).hexdigest() for f in io.list_files(location)
            if not f.path.endswith(".icectl-quarantine.json")}


def test_quarantine_restore_and_purge_on_s3(s3_table, monkeypatch):
    catalog, t = s3_table
    io = catalog.io
    planted = [f"{t.location}/data/id={i % 4}/orphan-{i}.parquet" for i in range(25)]
    for i, p in enumerate(planted):
        io.write(p, bytes([i]) * (100 + i))
    before = _hashes(io, t.location)
    batches: list[int] = []
    bulk = s3io.bulk_delete

    def counting(fs, keys, **kw):
        batches.append(len(keys))
        return bulk(fs, keys, **kw)

    monkeypatch.setattr(s3io, "bulk_delete", counting)
    args = ["-c", "s3cat", "-o", "json", "remove-orphans", "db.t", "--older-than", future(), "--force"]
    code, out, err = cli(args + ["--quarantine", "quarantine", "--yes"])
    assert code == 0, err
    run1 = json.loads(out)
    assert sorted(f["original"] for f in run1["files"]) == sorted(planted) and run1["failed"] == []
    assert batches == [25]  # the originals went in one batched delete, not one request each
    after = _hashes(io, t.location)
    for f in run1["files"]:
        assert f["original"] not in after and after[f["quarantine"]] == before[f["original"]]
        assert f["quarantine"].startswith(f"{t.location}/quarantine/{run1['run_id']}/data/")
    assert any(p.endswith(".jsonl") for p in after)

    code, out, err = cli(args + ["--dry-run"])  # the quarantine prefix is never listed as orphans
    assert code == 0, err
    assert json.loads(out)["orphan_files"] == []

    code, out, err = cli(args + ["--restore-quarantine", "--yes"])
    assert code == 0, err
    assert len(json.loads(out)["files"]) == 25
    assert {p: h for p, h in _hashes(io, t.location).items() if "/quarantine/" not in p} == before
    assert not [p for p in _hashes(io, t.location) if "/quarantine/" in p]  # manifests gone with their entries

    # Two runs, ten days apart by the run's clock: a purge of what moved over 7 days ago takes the first only.
    now = orphans_cli.now_ms()
    monkeypatch.setattr(orphans_cli, "now_ms", lambda: now - 10 * DAY)
    old_args = ["-c", "s3cat", "-o", "json", "remove-orphans", "db.t", "--older-than", str(now), "--force"]
    for p in planted[10:]:
        io.delete(p, guard=table_guard(io, t.location))
    code, out, err = cli(old_args + ["--quarantine", "quarantine", "--yes"])
    assert code == 0, err
    first = json.loads(out)["files"]
    assert sorted(f["original"] for f in first) == sorted(planted[:10])
    for i, p in enumerate(planted[10:], start=10):
        io.write(p, bytes([i]) * (100 + i))
    monkeypatch.setattr(orphans_cli, "now_ms", lambda: now)
    code, out, err = cli(args + ["--quarantine", "quarantine", "--yes"])
    assert code == 0, err
    second = json.loads(out)["files"]
    assert sorted(f["original"] for f in second) == sorted(planted[10:])

    code, out, err = cli(args[:-3] + ["--purge-quarantine", "--older-than", "7d", "--yes"])
    assert code == 0, err
    purged = json.loads(out)["files"]
    assert sorted(f["quarantine"] for f in purged) == sorted(f["quarantine"] for f in first)
    left = _hashes(io, t.location)
    assert not any(f["quarantine"] in left for f in first)
    assert all(f["quarantine"] in left for f in second)

