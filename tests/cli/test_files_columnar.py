"""``files`` rendered from the columnar frame (issue 26 item 4): the JSON rows, JSON lines and table
lines polars builds are the text the row-by-row path writes for the same files, byte for byte, for
every value kind a listing holds: format versions 1 to 4, partition values of every type and
transform (nulls, non-ASCII text, floats, binary, decimal, uuid, time), delete files of each kind,
paths that need JSON escapes, two partition specs, and every option of ``files``.

The reference is the same command with the columnar reader turned off: every manifest is then read
entry by entry (fastavro) and rendered one FileRow at a time, by the code that rendered every row
before. ``build_tables`` also serves ``bench/`` checks against another checkout's output."""
from __future__ import annotations

import io
import uuid
from decimal import Decimal

import pytest

from helpers import append_files, commit_snapshot
from icectl.catalog import build_catalog, parse_identifier, resolve_catalog_config
from icectl.cli import output
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.cli.views import files as files_view
from icectl.formats.manifest import DataFile, EntryStatus, FileContent, ManifestContent
from icectl.ops.inspect.files import FRAME_COLUMNS, FileRow
from icectl.table import listing
from icectl.table.listing import ColumnarUnavailable
from icectl.table.loaded import load_table
from icectl.table.snapshot_producer import SnapshotChange

DAY = 19723  # 2024-01-01
SCHEMA = ("id:long!, u:uuid, d:decimal(9,2), dt:date, ts:timestamp, tz:timestamptz, s:string, b:binary, "
          "n:struct<a:int>, f:fixed[3], t:time, bo:boolean, fl:float, db:double")
PARTITION = ("u, d, dt, ts, s, b, n.a, bucket(4, id), truncate(3, s), year(ts), month(tz), day(ts), hour(tz), f, t, "
             "bo, fl, db, void(s)")
# paths that need an escape in JSON (a quote, a backslash, a control character, DEL, non-ASCII),
# and one that holds the row boundary of a batch
ODD_NAMES = ('q"uote', "back\\slash", "tab\there", "del\x7f", "caf\u00e9", "snow\u2603-\U0001f600",
             'odd}, {"content": "data"}, {')


def _part(i: int) -> tuple:
    """Partition values (Iceberg's internal form) of the spec above, varied with ``i``."""
    if i % 6 == 5:
        return (None,) * 19
    floats = (1.5, 1e16, -0.0, 1e-7, float("nan"))[i % 5]
    text = ("x y", "caf\u00e9", "snow\u2603", "", "q\"\\")[i % 5]
    return (uuid.UUID(int=i * 7919), Decimal(f"{i}.{i % 100:02d}"), DAY + i, 1704067200123456 + i * 3_600_000_000,
            text, bytes([i % 256, 1, 2]), i, i % 4, text[:3], 54 + i % 3, 648 + i, DAY + i, 473352 + i,
            b"abc", 3_600_000_000 + i, i % 2 == 0, floats, -floats if i % 2 else floats * 3, None)


def build_tables(uri: str, warehouse: str) -> list[str]:
    """The tables the checks list (created in a SQL catalog at ``uri``): their identifiers."""
    def cli(*args: str) -> None:
        env = Env(stdout=io.StringIO(), stderr=io.StringIO())
        code = run(["--uri", uri, "--warehouse", warehouse, *args], env)
        assert code == 0, env.stderr.getvalue()

    catalog = build_catalog(resolve_catalog_config(None, uri=uri, warehouse=warehouse))
    names = []
    for version in (1, 2, 3, 4):
        name = f"db.kinds_v{version}"
        names.append(name)
        cli("create", "--yes", name, "--schema", SCHEMA, "--partition-by", PARTITION, "--format-version", str(version))
        t = load_table(catalog, parse_identifier(name))
        data = [DataFile(f"{t.location}/data/f-{i}-{(*ODD_NAMES, 'plain')[i % 8]}.parquet",
                         "PARQUET" if i % 4 == 1 else "parquet", _part(i), 10 + i, 1000 * i ** 3 + i)
                for i in range(12)]
        t = append_files(t, data[:6])
        t = append_files(t, data[6:])
        if version >= 2:
            deletes = [DataFile(f"{t.location}/data/pos-{i}.parquet", "parquet", _part(i), 2, 500 + i,
                                content=FileContent.POSITION_DELETES) for i in range(2)]
            deletes += [DataFile(f"{t.location}/data/eq-{i}.parquet", "parquet", _part(i + 1), 3, 700 + i,
                                 content=FileContent.EQUALITY_DELETES, equality_ids=[1, 7][: i + 1]) for i in range(2)]
            if version >= 3:
                deletes += [DataFile(f"{t.location}/data/dv-{i}.puffin", "puffin", _part(i), 1, 90 + i,
                                     content=FileContent.POSITION_DELETES, referenced_data_file=data[i].file_path,
                                     content_offset=4 + i, content_size_in_bytes=40 + i) for i in range(2)]
            t = append_files(t, deletes)
        # a second spec: the listing holds rows of both
        cli("alter", "--yes", name, "--add-partition-field", "bucket(8, id)")
        t = load_table(catalog, parse_identifier(name))
        t = append_files(t, [DataFile(f"{t.location}/data/s1-{i}.parquet", "parquet", _part(i + 2) + (i,), 5,
                                      2 ** 40 + i * 999_999, spec_id=t.metadata.default_spec_id) for i in range(3)])
        # a file replaced: its entry is deleted in the last snapshot, and is not listed
        gone = data[1].file_path.rsplit("/", 1)[1]
        [entry] = [e for m in t.manifests(t.metadata.current_snapshot) for e in t.read_entries(m, live_only=True)
                   if e.data_file.file_path.endswith(gone)]
        commit_snapshot(t, SnapshotChange("delete", removed=[(entry, entry.data_file)]))
    name = "db.unpartitioned"
    names.append(name)
    cli("create", "--yes", name, "--schema", "id:long!, s:string")
    t = load_table(catalog, parse_identifier(name))
    append_files(t, [DataFile(f"{t.location}/data/u-{i}.parquet", "parquet", (), i, 1023 + i * 1_048_575)
                     for i in range(5)])
    cli("create", "--yes", "db.empty", "--schema", "id:long!")
    names.append("db.empty")
    return names


def option_sets(uri: str, warehouse: str, name: str) -> list[list[str]]:
    """Every option of ``files`` that selects rows, for table ``name``."""
    t = load_table(build_catalog(resolve_catalog_config(None, uri=uri, warehouse=warehouse)), parse_identifier(name))
    sets: list[list[str]] = [[]]
    if t.metadata.snapshots:
        sets += [["--ref", "main"], ["--snapshot", str(t.metadata.snapshots[0].snapshot_id)]]
    sets += [["--content", kind] for kind in ("data", "position-deletes", "equality-deletes", "deletion-vector")]
    return sets


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    root = tmp_path_factory.mktemp("kinds")
    uri, warehouse = f"sqlite:///{root}/catalog.db", str(root / "warehouse")
    return uri, warehouse, build_tables(uri, warehouse)


def _files(uri: str, warehouse: str, *args: str) -> str:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(["--uri", uri, "--warehouse", warehouse, *args], env)
    assert code == 0, env.stderr.getvalue()
    return env.stdout.getvalue()


def _entry_by_entry(monkeypatch) -> None:
    def unavailable(table, m, **kwargs):  # noqa: ANN001, ANN003, ANN202
        raise ColumnarUnavailable("turned off by the test")

    # every manifest of a listing, alone or in a run of small ones, is decoded by this first
    monkeypatch.setattr(listing, "decoded_manifest", unavailable)


@pytest.mark.parametrize("batch", [output.BATCH, 4])
@pytest.mark.parametrize("fmt", ["json", "jsonl", "table"])
def test_columnar_text_is_the_row_by_row_text(tables, monkeypatch, fmt, batch):
    uri, warehouse, names = tables
    # a small batch: rows of one manifest cut across batches, a table drawn a batch at a time
    monkeypatch.setattr(output, "BATCH", batch)
    monkeypatch.setattr(files_view, "BATCH", batch)
    cases = [(name, tuple(opts)) for name in names for opts in option_sets(uri, warehouse, name)]
    columnar = {case: _files(uri, warehouse, "-o", fmt, "files", case[0], *case[1]) for case in cases}
    with monkeypatch.context() as m:
        _entry_by_entry(m)
        rows = {case: _files(uri, warehouse, "-o", fmt, "files", case[0], *case[1]) for case in cases}
    for case in cases:
        assert columnar[case] == rows[case], case
    listed = "".join(columnar.values())
    for needle in ("\\u00e9", "1e+16", "-0.0", "NaN", "\\\\", "\\t", "\\u007f", "\\ud83d\\ude00", "deletion-vector",
                   "equality-deletes") if fmt != "table" else ("caf\u00e9", "fl=NaN", "d=1.01", "1 TiB", " KiB", "deletion-vector"):
        assert needle in listed, needle


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_diff_by_columns_is_the_diff_read_entry_by_entry(tables, monkeypatch, fmt):
    """``diff`` reads the manifests only one side lists by column, each entry's partition values
    kept as columns (listing.live_frames(keyed=False)) and formatted for the files it reports only:
    the same text as with every manifest read entry by entry, for every value kind above, both ways."""
    uri, warehouse, names = tables
    catalog = build_catalog(resolve_catalog_config(None, uri=uri, warehouse=warehouse))
    cases = []
    for name in names:
        snaps = load_table(catalog, parse_identifier(name)).metadata.snapshots
        if len(snaps) > 1:
            cases += [(name, str(snaps[0].snapshot_id), "main"), (name, "main", str(snaps[0].snapshot_id))]
    columnar = {case: _files(uri, warehouse, "-o", fmt, "diff", *case) for case in cases}
    with monkeypatch.context() as m:
        _entry_by_entry(m)
        rows = {case: _files(uri, warehouse, "-o", fmt, "diff", *case) for case in cases}
    assert len(cases) >= 8
    for case in cases:
        assert columnar[case] == rows[case], case
    if fmt == "json":
        listed = "".join(columnar.values())
        for needle in ('"fl": "NaN"', '"db": -1e+16', '"fl": -0.0', '"deletion-vector"', '"equality-deletes"',
                       '"caf\\u00e9"'):
            assert needle in listed, needle


def test_frame_columns_are_the_json_fields_of_a_row():
    assert FRAME_COLUMNS == output.json_fields(FileRow)


@pytest.mark.parametrize("n", [0, 1, 1023, 1024, 1025, 1535, 1536, 1537, 10239, 10240, 1048575, 1048576, 1100585369,
                               2 ** 40 - 1, 2 ** 40, 2 ** 50 * 1500 + 17, 2 ** 53 - 1, 2 ** 53, 2 ** 62, 5 * 1024 + 51,
                               5 * 1024 + 52, 5 * 1024 + 153, 999_999_999_999])
def test_sizes_and_counts_are_formatted_as_in_python(n):
    import polars as pl

    values = pl.Series([n, None, 3 * n // 7, n // 1024 * 1024 + 512], dtype=pl.Int64)
    assert files_view._sizes(pl, values).to_list() == [output.fmt_bytes(v) for v in values.to_list()]
    assert files_view._thousands(pl, values).to_list() == [output.num(v) for v in values.to_list()]


def test_half_way_sizes_round_to_even():
    import polars as pl

    # 1024 * 1.05 = 1075.2: exact halves of a tenth of a KiB are 1024 * (k + 0.05) = 1024k + 51.2, never whole;
    # halves of a tenth exist from MiB on: 1 MiB * 1.25 = 1310720 (1.2 MiB, to even), 1.35 MiB (1.4)
    values = pl.Series([1310720, 1415577, 1415578, 1153434, 1205862, 1205863], dtype=pl.Int64)
    assert files_view._sizes(pl, values).to_list() == [output.fmt_bytes(v) for v in values.to_list()]


def _bytes_out(uri: str, warehouse: str, fmt: str) -> str:
    """``files db.kinds_v2`` in ``fmt`` through a stdout with a byte buffer (as a terminal's)."""
    raw = io.BytesIO()
    stdout = io.TextIOWrapper(raw, encoding="utf-8", write_through=False)
    env = Env(stdout=stdout, stderr=io.StringIO())
    assert run(["--uri", uri, "--warehouse", warehouse, "-o", fmt, "files", "db.kinds_v2"], env) == 0
    stdout.flush()
    return raw.getvalue().decode()


def test_output_goes_to_the_byte_buffer_unless_a_secret_is_in_it(tables, monkeypatch):
    """A listing's ASCII text is written to stdout's byte buffer (no text encoding on the way), and
    through the redaction when a known secret occurs in it."""
    from icectl import secrets

    uri, warehouse, names = tables
    plain = _bytes_out(uri, warehouse, "json")
    assert plain == _files(uri, warehouse, "-o", "json", "files", "db.kinds_v2")
    secret = "plain.parquet"  # a path of the listing plays the secret
    monkeypatch.setattr(secrets, "_VALUES", set(secrets.known()) | {secret})
    monkeypatch.setattr(secrets, "_PATTERN", secrets.re.compile(secrets.re.escape(secret)))
    masked = _bytes_out(uri, warehouse, "jsonl")
    assert secret not in masked and "****" in masked


def _entry_fields(e) -> tuple:
    f = e.data_file
    return (e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number, f.file_path, f.file_format.lower(),
            f.partition, f.record_count, f.file_size_in_bytes, f.content, f.spec_id, f.first_row_id,
            f.referenced_data_file, f.content_offset, f.content_size_in_bytes, f.equality_ids)


def test_live_data_entries_are_what_the_entry_reader_gives(tables):
    """``health`` plans its files from listing.live_data_entries (by column): the same entries, field
    for field, as Table.live_entries reads entry by entry, for every value kind above."""
    uri, warehouse, names = tables
    catalog = build_catalog(resolve_catalog_config(None, uri=uri, warehouse=warehouse))
    checked = 0
    for name in names:
        t = load_table(catalog, parse_identifier(name))
        snap = t.metadata.current_snapshot
        if snap is None:
            continue
        columnar = [_entry_fields(e) for e in listing.live_data_entries(t, snap)]
        by_entry = [_entry_fields(e) for e in t.live_entries(snap, with_stats=False, content=ManifestContent.DATA)]
        assert repr(columnar) == repr(by_entry), name  # repr: a NaN partition value equals itself
        assert all(type(e.status) is EntryStatus and type(e.data_file.content) is FileContent
                   for e in listing.live_data_entries(t, snap))
        checked += len(columnar)
    assert checked > 50
