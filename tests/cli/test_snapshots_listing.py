"""``snapshots`` of a long history (issue 26 item 4): rows built from snapshots the load built
(``every_snapshot_read``) or from their bytes, the order read off the columns, and the text table
written a column at a time, give what the rules from before give (a sort by (sequence number,
time), each snapshot's ancestry walked, and a list of cells a row through ``plain_table``)."""
from __future__ import annotations

import io
import json
import random

import pytest

from icectl.cli import output
from icectl.cli.context import Env
from icectl.cli.output import num, opt, plain_columns, plain_table, print_table, render
from icectl.cli.views.snapshots import SNAPSHOT_COLUMNS, SNAPSHOT_DROP, SnapshotList
from icectl.ops.inspect.snapshots import SnapshotRow, list_snapshots, refs_by_snapshot, summary_count
from icectl.spec.metadata import MAIN_BRANCH, every_snapshot_read, parse_table_metadata
from icectl.spec.temporal import millis_to_iso
from icectl.table.loaded import Table

COUNTS = ["1", "0", "12", "-5", "", "x", "1,000", "\u0663", " 7", None]  # \u0663: an Arabic-Indic three


def _doc(n: int, *, version: int = 2, shuffle: bool = False, seed: int = 1) -> dict:
    rnd = random.Random(seed)
    snaps = []
    for i in range(n):
        summary = {"operation": rnd.choice(["append", "overwrite", "delete", "replace"])}
        for k in ("added-data-files", "deleted-data-files", "added-delete-files", "removed-delete-files",
                  "added-records", "deleted-records"):
            v = rnd.choice(COUNTS)
            if v is not None:
                summary[k] = v
        # pairs of snapshots committed in the same millisecond: ties the order keeps as the file has them
        s = {"snapshot-id": 1000 + i, "timestamp-ms": 1_735_689_600_000 + (i - i % 2) * 61_001,
             "summary": summary if i % 17 else {}, "manifest-list": f"s3://b/t/metadata/snap-{1000 + i}.avro",
             "schema-id": i % 2}
        if version >= 2:
            s["sequence-number"] = i + 1 if not shuffle else rnd.randint(1, n // 2)
        if i % 50:  # a few roots; the rest in a line
            s["parent-snapshot-id"] = 1000 + rnd.randint(max(0, i - 3), i - 1) if i % 7 == 0 else 999 + i
        snaps.append(s)
    refs = {MAIN_BRANCH: {"snapshot-id": 1000 + n - 1, "type": "branch"},
            "audit": {"snapshot-id": 1000 + n // 2, "type": "branch"},
            **{f"tag-{k}": {"snapshot-id": 1000 + k * 7 % n, "type": "tag"} for k in range(5)}}
    doc = {"format-version": version, "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1", "location": "s3://b/t",
           "last-updated-ms": 5000, "last-column-id": 1, "current-schema-id": 0,
           "schemas": [{"type": "struct", "schema-id": 0, "fields": [
               {"id": 1, "name": "a", "required": False, "type": "long"}]}],
           "default-spec-id": 0, "partition-specs": [{"spec-id": 0, "fields": []}], "last-partition-id": 999,
           "default-sort-order-id": 0, "sort-orders": [{"order-id": 0, "fields": []}], "properties": {},
           "current-snapshot-id": 1000 + n - 1, "refs": refs, "snapshots": snaps, "metadata-log": []}
    if version >= 2:
        doc["last-sequence-number"] = n
    return doc


def _table(doc: dict, *, built: bool) -> Table:
    with every_snapshot_read(built):
        md = parse_table_metadata(json.dumps(doc).encode())
    return Table(("db", "t"), md, "s3://b/t/metadata/v1.metadata.json", None, io=object())  # type: ignore[arg-type]


def rows_before(table: Table, *, ref: str | None = None, limit: int | None = None,
                since: int | None = None) -> list[SnapshotRow]:
    """``list_snapshots`` as it was: snapshots built, sorted by a key a row, ancestry walked."""
    md = table.metadata
    refs = md.all_refs
    snaps = md.ancestors_of(refs[ref].snapshot_id) if ref else \
        sorted(md.snapshots, key=lambda s: (s.sequence_number, s.timestamp_ms), reverse=True)
    if since is not None:
        snaps = [s for s in snaps if s.timestamp_ms >= since]
    if limit is not None:
        snaps = snaps[:limit]
    main_ids = {s.snapshot_id for s in md.ancestors_of(refs[MAIN_BRANCH].snapshot_id)}
    by_snap = refs_by_snapshot(md)
    return [SnapshotRow(
        s.snapshot_id, s.parent_snapshot_id, s.timestamp_ms, millis_to_iso(s.timestamp_ms), s.operation,
        s.sequence_number, s.schema_id, summary_count(s.summary.get("added-data-files")),
        summary_count(s.summary.get("deleted-data-files")), summary_count(s.summary.get("added-delete-files")),
        summary_count(s.summary.get("removed-delete-files")), summary_count(s.summary.get("added-records")),
        summary_count(s.summary.get("deleted-records")), by_snap.get(s.snapshot_id, []),
        s.snapshot_id == md.current_snapshot_id, s.snapshot_id in main_ids, s.manifest_list, s.summary,
        s.first_row_id, s.added_rows) for s in snaps]


def text_before(rows: list[SnapshotRow]) -> str:
    """The text table as it was written: a list of cells a row, through print_table."""
    env = Env(stdout=io.StringIO())
    cells = [[str(r.snapshot_id), opt(r.parent_snapshot_id), r.committed_at[:-1].replace("T", " ", 1),
              r.operation or "", str(r.sequence_number), opt(r.schema_id), num(r.added_data_files),
              num(r.removed_data_files), num(r.added_delete_files), num(r.removed_delete_files),
              num(r.added_records), num(r.removed_records), ", ".join(r.refs), "yes" if r.in_main else "no"]
             for r in rows]
    print_table(env, SNAPSHOT_COLUMNS, cells,
                right={c for c in SNAPSHOT_COLUMNS if c.startswith(("+", "-", "seq", "schema"))},
                ids={"snapshot", "parent", "committed at (UTC)", "refs"}, drop=SNAPSHOT_DROP)
    return env.stdout.getvalue()


def _render(rows: list[SnapshotRow], fmt: str = "table") -> str:
    env = Env(stdout=io.StringIO())
    env.output = fmt
    render(env, SnapshotList(rows))
    return env.stdout.getvalue()


@pytest.mark.parametrize("version,shuffle", [(2, False), (2, True), (1, False)])
@pytest.mark.parametrize("built", [True, False])
def test_rows_and_text_are_what_they_were(version, shuffle, built, monkeypatch):
    # 700 snapshots: plain columns (over RICH_ROW_LIMIT) written in batches of 64 lines
    monkeypatch.setattr(output, "PLAIN_LINES", 64)
    doc = _doc(700, version=version, shuffle=shuffle)
    t = _table(doc, built=built)
    rows = list_snapshots(t)
    want = rows_before(_table(doc, built=False))
    assert rows == want  # v1 (sequence numbers all 0) and shuffled ones are sorted; rising ones read backwards
    text = _render(rows)
    assert text == text_before(want) and len(text.splitlines()) == 701
    assert _render(rows, "json") == "[\n" + ",\n".join(json.dumps(r.__dict__) for r in want) + "\n]\n"
    for kw in ({"ref": "audit"}, {"ref": "tag-3"}, {"limit": 5}, {"limit": 0},
               {"since": doc["snapshots"][600]["timestamp-ms"]}, {"ref": MAIN_BRANCH, "limit": 40}):
        got = list_snapshots(t, **{k: str(v) if k == "since" else v for k, v in kw.items()})
        assert got == rows_before(_table(doc, built=False), **kw), kw


def test_a_short_list_is_drawn_as_before():
    rows = list_snapshots(_table(_doc(12), built=True))
    assert _render(rows) == text_before(rows_before(_table(_doc(12), built=False)))


@pytest.mark.parametrize("n", [0, 1, 5, 64, 65, 200])
def test_plain_columns_is_plain_table_of_the_rows(n, monkeypatch):
    monkeypatch.setattr(output, "PLAIN_LINES", 64)
    rnd = random.Random(n)
    headers = ["id", "name", "note", "n"]
    rows = [[str(rnd.randint(0, 10 ** rnd.randint(0, 12))), rnd.choice(["", "a", "\u00e9t\u00e9", "x y z"]),
             rnd.choice(["", "  ", "{}", "q"]), rnd.choice(["", "1,000"])] for _ in range(n)]
    columns = [list(c) for c in zip(*rows)] if rows else [[] for _ in headers]
    a, b = Env(stdout=io.StringIO()), Env(stdout=io.StringIO())
    plain_columns(a, headers, columns, right={"id", "n"})
    plain_table(b, headers, rows, right={"id", "n"})
    assert a.stdout.getvalue() == b.stdout.getvalue()
