"""``remove-orphans --quarantine`` / ``--restore-quarantine`` / ``--purge-quarantine``
(icectl.ops.maintain.quarantine) on local disk: on the demo table (its orphan file) and on a table
with many orphans, the orphans move to the quarantine folder with a manifest, are never listed
again, come back byte for byte (hashes compared), and a purge deletes only the files moved before
its cutoff (the run's clock moved through ``icectl.cli.orphans.now_ms``, not slept). Refused
prefixes, a path that exists again, and the states a kill leaves behind are settled as
documented."""
from __future__ import annotations

import hashlib
import io
import json
import os
import pathlib

from dataclasses import asdict

import pytest

from icectl.catalog import CatalogConfig, build_catalog
from icectl.cli import orphans as orphans_cli
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode
from icectl.ops.maintain import quarantine as q
from icectl.ops.maintain.remove_orphans import POINTER, plan_orphans
from icectl.table.loaded import Table, load_table

DAY = 86_400_000


def icectl(wh: str, *args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(["--warehouse", wh, *args], env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def hashes(root: pathlib.Path, *, skip: str | None = None) -> dict[str, str]:
    """sha256 of every file under ``root`` (but those under ``skip`` and the quarantine record)."""
    out = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            p = os.path.join(d, f)
            if (skip and p.startswith(skip + "/")) or f == POINTER:
                continue
            out[p] = hashlib.sha256(pathlib.Path(p).read_bytes()).hexdigest()
    return out


@pytest.fixture
def demo(tmp_path, monkeypatch):
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    wh = str(tmp_path / "wh")
    code, _, err = icectl(wh, "demo")
    assert code == 0, err
    return wh, tmp_path / "wh" / "demo" / "events"


def clock(monkeypatch, ms: int) -> None:
    monkeypatch.setattr(orphans_cli, "now_ms", lambda: ms)


def test_demo_orphan_quarantined_restored_byte_for_byte_and_never_listed(demo, monkeypatch):
    wh, loc = demo
    qroot = f"{loc}/quarantine"
    before = hashes(loc)
    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--quarantine", "quarantine", "--dry-run")
    assert code == 0, err
    plan = json.loads(out)
    assert plan["action"] == "quarantine" and plan["dry_run"] and not plan["applied"]
    [orphan] = [f["original"] for f in plan["files"]]
    assert "failed-job" in orphan and plan["files"][0]["quarantine"].startswith(qroot + "/")
    assert hashes(loc) == before  # a dry run moves nothing

    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--quarantine", "quarantine", "-y")
    assert code == 0, err
    done = json.loads(out)
    assert done["applied"] and [f["original"] for f in done["files"]] == [orphan]
    moved = done["files"][0]
    assert not os.path.exists(orphan) and os.path.exists(moved["quarantine"])
    assert hashlib.sha256(pathlib.Path(moved["quarantine"]).read_bytes()).hexdigest() == before[orphan]
    [manifest] = [p for p in hashes(loc) if p.endswith(".jsonl")]
    [entry] = [json.loads(line) for line in pathlib.Path(manifest).read_text().splitlines()]
    assert entry["original"] == orphan and entry["quarantine"] == moved["quarantine"] and entry["state"] == "moved"
    assert entry["size"] == os.path.getsize(moved["quarantine"]) and entry["run_id"] == done["run_id"]

    # The quarantine folder is never listed as orphans (its files are older than any cutoff).
    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--older-than", "1s", "--force",
                            "--dry-run")
    assert code == 0, err
    assert json.loads(out)["orphan_files"] == []

    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--restore-quarantine", "-y")
    assert code == 0, err
    assert [f["original"] for f in json.loads(out)["files"]] == [orphan]
    assert hashes(loc, skip=qroot) == before  # every file back, byte for byte, nothing else changed
    assert not [p for p in hashes(loc) if p.startswith(qroot + "/")]  # manifest gone with its last entry


@pytest.fixture
def many(demo, monkeypatch):
    """The demo table with 250 more orphans (old enough) in several folders, quarantined in
    batches of 100 (three manifests)."""
    wh, loc = demo
    old = (orphans_cli.now_ms() - 10 * DAY) / 1000
    planted = []
    for i in range(250):
        p = loc / "data" / f"part={i % 7}" / f"orphan-{i}.parquet"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(os.urandom(50 + i))
        os.utime(p, (old, old))
        planted.append(str(p))
    monkeypatch.setattr(q, "BATCH", 100)
    return wh, loc, planted


def test_many_orphans_round_trip(many):
    wh, loc, planted = many
    before = hashes(loc)
    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--quarantine", "attic/q", "-y")
    assert code == 0, err
    moved = json.loads(out)["files"]
    assert set(planted) <= {f["original"] for f in moved} and len(moved) == 251
    assert not any(os.path.exists(p) for p in planted)
    manifests = sorted(p for p in hashes(loc) if p.endswith(".jsonl"))
    assert len(manifests) == 3
    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--restore-quarantine", "-y")
    assert code == 0, err
    assert len(json.loads(out)["files"]) == 251
    assert hashes(loc, skip=f"{loc}/attic/q") == before


def test_purge_deletes_only_files_moved_before_the_cutoff(many, monkeypatch):
    wh, loc, planted = many
    now = orphans_cli.now_ms()
    first, second = planted[:100], planted[100:]
    # Run one, ten days ago: the first 100 orphans (the others made "too new" for that run's cutoff).
    for p in first:
        os.utime(p, ((now - 20 * DAY) / 1000,) * 2)
    for p in second:
        os.utime(p, (now / 1000, now / 1000))
    clock(monkeypatch, now - 10 * DAY)
    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--quarantine", "quarantine",
                            "--older-than", "1d", "--force", "-y")
    assert code == 0, err
    run1 = json.loads(out)
    assert set(first) <= {f["original"] for f in run1["files"]}
    # Run two, today: the rest.
    for p in second:
        os.utime(p, ((now - 5 * DAY) / 1000,) * 2)
    clock(monkeypatch, now)
    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--quarantine", "quarantine", "-y")
    assert code == 0, err
    run2 = json.loads(out)
    assert set(second) <= {f["original"] for f in run2["files"]}  # and the demo's own orphan
    assert not {f["original"] for f in run2["files"]} & {f["original"] for f in run1["files"]}

    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--purge-quarantine",
                            "--older-than", "7d", "--dry-run")
    assert code == 0, err
    assert {f["original"] for f in json.loads(out)["files"]} == {f["original"] for f in run1["files"]}
    assert all(os.path.exists(f["quarantine"]) for f in run1["files"])  # a dry run deletes nothing

    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--purge-quarantine",
                            "--older-than", "7d", "-y")
    assert code == 0, err
    purged = json.loads(out)
    assert {f["quarantine"] for f in purged["files"]} == {f["quarantine"] for f in run1["files"]}
    assert not any(os.path.exists(f["quarantine"]) for f in run1["files"])
    assert all(os.path.exists(f["quarantine"]) for f in run2["files"])
    # Their entries went with them: a restore now brings back run two only.
    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--restore-quarantine", "--dry-run")
    assert code == 0, err
    assert {f["original"] for f in json.loads(out)["files"]} == {f["original"] for f in run2["files"]}


@pytest.mark.parametrize("prefix, why", [
    ("data/q", "inside the table's data/ folder"), ("metadata", "inside the table's metadata/ folder"),
    ("/elsewhere/q", "is not inside the table location"), ("a/../../q", "must name a folder"),
])
def test_prefix_outside_or_inside_the_scanned_folders_is_refused(demo, prefix, why):
    wh, loc = demo
    before = hashes(loc)
    code, _, err = icectl(wh, "remove-orphans", "demo.events", "--quarantine", prefix, "-y")
    assert code == ExitCode.USAGE and why in err, err
    assert hashes(loc) == before


def test_restore_never_overwrites_a_path_that_exists_again(demo):
    wh, loc = demo
    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--quarantine", "quarantine", "-y")
    assert code == 0, err
    [moved] = json.loads(out)["files"]
    pathlib.Path(moved["original"]).write_bytes(b"a new file at the same path")
    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--restore-quarantine", "-y")
    assert code == ExitCode.QUARANTINE_LEFT, err
    report = json.loads(out)
    assert [n["path"] for n in report["not_restored"]] == [moved["original"]]
    assert "exists again" in report["not_restored"][0]["reason"]
    assert pathlib.Path(moved["original"]).read_bytes() == b"a new file at the same path"
    assert os.path.exists(moved["quarantine"])  # and its entry stays: a later restore can try again
    os.unlink(moved["original"])
    code, out, err = icectl(wh, "-o", "json", "remove-orphans", "demo.events", "--restore-quarantine", "-y")
    assert code == 0, err
    assert [f["original"] for f in json.loads(out)["files"]] == [moved["original"]]


def test_entries_a_kill_left_are_settled(demo):
    """The three states a kill leaves: an entry written whose file never moved (dropped), a copy
    beside its intact original (deleted), a moved file (restored)."""
    wh, loc = demo
    t = _table(wh)
    plan = plan_orphans(t)
    root = q.quarantine_root(t, "quarantine")
    files = [*plan.orphans]
    extra = []
    for name in ("never-moved", "copied-not-deleted"):
        p = loc / "data" / f"{name}.parquet"
        p.write_bytes(name.encode() * 10)
        extra.append(str(p))
    planned = q.plan_quarantine(t, files, root, now_ms=1)
    for p in extra:
        planned.files.append(q.QuarantineEntry(p, q.quarantine_path(t, root, planned.run_id, p), os.path.getsize(p),
                                               None, 1, planned.run_id))
    done = q.apply_quarantine(t, q.QuarantineOutcome(root, planned.run_id, planned.files[:1]))
    # What a kill leaves: both extra entries "moving"; one file copied, never deleted.
    manifest = f"{root}/{planned.run_id}/manifest-00001.jsonl"
    pathlib.Path(planned.files[2].quarantine).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(planned.files[2].quarantine).write_bytes(pathlib.Path(extra[1]).read_bytes())
    pathlib.Path(manifest).write_text("".join(json.dumps(asdict(e)) + "\n" for e in planned.files[1:]))
    out = q.restore_quarantine(t, root)
    assert [e.original for e in out.files] == [done.files[0].original] and out.conflicts == []
    assert all(os.path.exists(p) for p in extra) and not os.path.exists(planned.files[2].quarantine)
    assert q.quarantined(t, root) == []


def _table(wh: str) -> Table:
    return load_table(build_catalog(CatalogConfig("default", {"warehouse": wh})), ("demo", "events"))


def test_maintain_policy_key_quarantines_instead_of_deleting(demo):
    wh, loc = demo
    code, _, err = icectl(wh, "properties", "demo.events", "set", "icectl.maintain.steps=remove-orphans",
                          "icectl.maintain.orphans-quarantine=attic", "-y")
    assert code == 0, err
    orphan = plan_orphans(_table(wh)).orphans[0].path
    digest = hashlib.sha256(pathlib.Path(orphan).read_bytes()).hexdigest()
    code, out, err = icectl(wh, "-o", "json", "health", "demo.events", "--orphans")
    fix = [f for f in json.loads(out)["tables"][0]["findings"] if f["step"] == "remove-orphans"][0]
    assert "remove-orphans demo.events --quarantine attic --yes" in fix["command"], fix
    code, out, err = icectl(wh, "-o", "json", "maintain", "demo.events", "-y")
    assert code == 0, err
    assert not os.path.exists(orphan)
    [entry] = [e for _, es in q.quarantined(_table(wh), f"{loc}/attic") for e in es]
    assert entry.original == orphan and entry.state == "moved"
    assert hashlib.sha256(pathlib.Path(entry.quarantine).read_bytes()).hexdigest() == digest


def test_policy_key_with_dot_dot_is_refused(demo):
    wh, _ = demo
    code, _, err = icectl(wh, "properties", "demo.events", "set", "icectl.maintain.orphans-quarantine=../x", "-y")
    assert code == 0, err
    code, _, err = icectl(wh, "maintain", "demo.events", "-y")
    assert code == ExitCode.MAINTENANCE_FAILED and "orphans-quarantine='../x' is not a folder" in err, err
    assert "demo.events: table properties" in err
