"""The rescue of a neglected table by ``expire`` (issue 26 item 3): the deletes an expiry owes are
recorded before its commit (:mod:`icectl.ops.maintain.expire_pending`), and a later run deletes only
what the current metadata no longer reaches; at scale (a ``slow`` test: thousands of snapshots from
bench/gen_large_table.py) every expired snapshot's manifest list and manifest goes, the retained
refs read the same files, and the peak memory stays bounded. The kill-and-rerun proof is
tests/crash/test_expire_resume.py.
"""
from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from test_expire_files import History, catalog_on, data_file  # noqa: E402  (tests/ops on sys.path)

from icectl.errors import CommitConflictError  # noqa: E402
from icectl.ops.maintain.expire import apply_expiry, delete_files  # noqa: E402
from icectl.ops.maintain.expire_pending import (  # noqa: E402
    FileToDelete, PENDING_NAME, finish_pending, pending_path, read_pending, write_pending,
)
from icectl.table.transaction import Transaction  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]


def _deleter(t):
    return lambda fs: delete_files(t.io, fs, location=t.location)


class Killed(BaseException):
    """The process died here."""


def test_a_run_killed_during_its_deletes_leaves_the_record_and_the_next_run_finishes(tmp_path):
    h = History(catalog_on(tmp_path))
    t = h.table
    seen = []

    def killed_after_one(files):
        delete_files(t.io, files[:1], location=t.location)
        seen.extend(files)
        raise Killed()

    with pytest.raises(Killed):
        apply_expiry(t, h.options(), delete=killed_after_one)
    assert len(seen) == 4 and not os.path.exists(seen[0].path) and all(os.path.exists(f.path) for f in seen[1:])
    t = t.refresh()
    assert {s.snapshot_id for s in t.metadata.snapshots} == {h.s3, h.s4}  # committed before any delete
    pending = read_pending(t)
    assert sorted(f.path for f in pending.files) == sorted(f.path for f in seen)
    done = finish_pending(t, pending, delete=_deleter(t))
    assert sorted(f.path for f in done.deleted) == sorted(f.path for f in seen) and not done.failed and not done.kept
    assert not any(os.path.exists(f.path) for f in seen)
    assert read_pending(t) is None


def test_the_record_never_deletes_what_the_current_metadata_reaches_or_what_lies_outside(tmp_path):
    h = History(catalog_on(tmp_path))
    t = h.table
    outside = tmp_path / "elsewhere.parquet"
    outside.write_bytes(b"x")
    manifest_list = h.manifest_list(h.s4)
    owed = [FileToDelete(h.d.file_path, "data", None), FileToDelete(manifest_list, "manifest-list", None),
            FileToDelete(t.metadata_location, "metadata", None), FileToDelete(str(outside), "data", 1)]
    gone = data_file(t, "gone", [7])  # referenced by nothing
    owed.append(FileToDelete(gone.file_path, "data", gone.file_size_in_bytes))
    write_pending(t, t.metadata_location, owed)
    done = finish_pending(t, read_pending(t), delete=_deleter(t))
    assert [f.path for f in done.deleted] == [gone.file_path]
    assert sorted(done.kept) == sorted([h.d.file_path, manifest_list, t.metadata_location, str(outside)])
    assert all(os.path.exists(p) for p in done.kept) and not os.path.exists(gone.file_path)
    assert read_pending(t) is None


def test_a_record_of_many_files_is_finished_without_comparing_them_pairwise(tmp_path, monkeypatch):
    """The full-scale kill test (bench/prove_rescue.py: 199,337 owed files) found finish_pending
    comparing each owed file with every other (a list membership test: days at that size). The
    files are sorted inside / outside the table in one pass: no FileToDelete is compared at all."""
    h = History(catalog_on(tmp_path))
    t = h.table
    owed = [FileToDelete(f"{t.location}/data/gone-{i}.parquet", "data", 1) for i in range(2_000)]
    owed += [FileToDelete(str(tmp_path / f"elsewhere-{i}.parquet"), "data", 1) for i in range(2_000)]
    write_pending(t, t.metadata_location, owed)
    pending = read_pending(t)
    compared = [0]
    plain_eq = FileToDelete.__eq__

    def counted(a, b):
        compared[0] += 1
        return plain_eq(a, b)

    monkeypatch.setattr(FileToDelete, "__eq__", counted)
    done = finish_pending(t, pending, delete=_deleter(t))
    assert len(done.deleted) == 2_000 and sorted(done.kept) == sorted(f.path for f in owed[2_000:])
    assert compared[0] < len(owed)  # was 5,999,000 before the fix
    assert read_pending(t) is None


def test_a_commit_that_fails_forgets_its_record_and_deletes_nothing(tmp_path, monkeypatch):
    h = History(catalog_on(tmp_path))
    t = h.table
    before = {p for d, _, fs in os.walk(t.location) for p in (os.path.join(d, f) for f in fs)}

    def refuse(self, *a, **kw):
        raise CommitConflictError("the table moved")

    monkeypatch.setattr(Transaction, "commit", refuse)
    with pytest.raises(CommitConflictError):
        apply_expiry(t, h.options())
    after = {p for d, _, fs in os.walk(t.location) for p in (os.path.join(d, f) for f in fs)}
    assert after == before and not os.path.exists(pending_path(t))


def test_a_failed_delete_stays_owed_and_the_rest_is_forgotten(tmp_path):
    h = History(catalog_on(tmp_path))
    t = h.table

    def all_but_a(files):
        deleted, failed = delete_files(t.io, [f for f in files if f.path != h.a.file_path], location=t.location)
        return deleted, failed + [(h.a.file_path, "Permission denied")]

    res = apply_expiry(t, h.options(), delete=all_but_a)
    assert [p for p, _ in res.failed] == [h.a.file_path]
    pending = read_pending(t.refresh())
    assert [f.path for f in pending.files] == [h.a.file_path]
    done = finish_pending(t.refresh(), pending, delete=_deleter(t))
    assert [f.path for f in done.deleted] == [h.a.file_path] and not os.path.exists(h.a.file_path)


def test_a_record_cut_short_is_reported_and_forgotten(tmp_path):
    h = History(catalog_on(tmp_path))
    t = h.table
    pathlib.Path(pending_path(t)).write_text('{"format": "icectl-expire-pending/1", "files": [["/x", "da')
    pending = read_pending(t)
    assert pending.unreadable and pending.files == []
    finish_pending(t, pending, delete=_deleter(t))
    assert read_pending(t) is None


def _run(cfg: pathlib.Path, *args: str) -> tuple[int, str, str, int]:
    """``python -m icectl ARGS`` in a child process: exit code, stdout, stderr, peak RSS in bytes."""
    env = {**os.environ, "ICECTL_CONFIG": str(cfg)}
    out_path, err_path = cfg.with_name("out.txt"), cfg.with_name("err.txt")
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "icectl", *args], stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, out_path.read_text(), err_path.read_text(), usage.ru_maxrss * 1024


@pytest.mark.slow
def test_a_table_of_thousands_of_snapshots_is_rescued_in_one_command(tmp_path):
    n = 3000
    subprocess.run([sys.executable, str(REPO / "bench" / "gen_large_table.py"), "--out", str(tmp_path),
                    "--snapshots", str(n), "--files-per-snapshot", "2", "--quiet"], check=True)
    cfg = tmp_path / "icectl.yaml"
    code, out, err, _ = _run(cfg, "snapshots", "bench.large", "-o", "json")
    assert code == 0, err
    ids = [s["snapshot_id"] for s in sorted(json.loads(out), key=lambda s: s["timestamp_ms"])]
    assert len(ids) == n
    for argv in (["tag", "create", "bench.large", "old", "--snapshot", str(ids[10]), "-y"],
                 ["branch", "create", "bench.large", "audit", "--snapshot", str(ids[n // 2]), "-y"]):
        code, _, err, _ = _run(cfg, *argv)
        assert code == 0, err

    def files(ref: str) -> list[str]:
        code, out, err, _ = _run(cfg, "files", "bench.large", "--ref", ref, "-o", "json")
        assert code == 0, err
        return sorted(f["file_path"] for f in json.loads(out))

    def orphans() -> list[str]:
        code, out, err, _ = _run(cfg, "remove-orphans", "bench.large", "--older-than", "0d", "--force", "--dry-run",
                                 "-o", "json")
        assert code == 0, err
        return sorted(json.loads(out)["orphan_files"])

    refs = {r: files(r) for r in ("main", "old", "audit")}
    generators_own = orphans()
    assert len(generators_own) < n // 50
    metadata = tmp_path / "warehouse" / "bench" / "large" / "metadata"
    code, out, err, rss = _run(cfg, "expire", "bench.large", "--older-than", "0d", "--retain-last", "100",
                               "--clean-expired-metadata", "-y", "-o", "json")
    assert code == 0, err
    report = json.loads(out)
    kept = ids[-100:] + ids[n // 2 - 99:n // 2 + 1] + [ids[10]]  # --retain-last holds on each branch
    assert report["applied"] and len(report["expired_snapshot_ids"]) == n - len(kept)
    assert sorted(report["retained_snapshot_ids"]) == sorted(kept)
    assert "reading the expired manifests: " in err  # progress lines, timestamped, off a terminal
    assert rss < 1024 ** 3, f"peak RSS {rss / 2**20:.0f} MiB"
    assert {r: files(r) for r in refs} == refs
    assert not os.path.exists(metadata / PENDING_NAME)
    # Every manifest list and manifest left is one a retained snapshot reaches: the only unreferenced
    # ones are those the generator left (as Java's merges do: a commit's new manifest merged away).
    assert orphans() == generators_own
    lists = [p for p in os.listdir(metadata) if p.startswith("snap-")]
    assert len(lists) == len(kept)
    code, out, err, _ = _run(cfg, "validate", "bench.large")
    assert code == 0, out + err
