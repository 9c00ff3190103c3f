"""The manifest-entry frame (icectl.formats.entries): the inheritance rules written once
(spec: "Manifest Entry Fields", "Sequence Number Inheritance", "First Row ID Inheritance",
Appendix E), and every shape of an entry (the frame read by polars, the frame read by the lean
decoder, the object view) giving the same inherited values."""
from __future__ import annotations

import copy

import pytest
from hypothesis import given, strategies as st

from icectl.formats.avro import open_avro
from icectl.formats.entries import INHERITED_INPUTS, inherit_values, inherited, read_entry_frame
from icectl.formats.manifest import (
    DataFile,
    EntryStatus,
    FileContent,
    ManifestContent,
    ManifestEntry,
    ManifestFile,
    read_manifest,
    write_manifest,
)
from icectl.spec.partitioning import PartitionSpec
from icectl.spec.types import NestedField, Schema, primitive

LOCATION = "s3://bucket/wh/db/t"
SCHEMA = Schema((NestedField(1, "a", primitive("int")),))


def _file(name: str, n: int, *, first: int | None = None, content: FileContent = FileContent.DATA) -> DataFile:
    return DataFile(f"{LOCATION}/data/{name}.parquet", "parquet", (), n, 100, content=content, first_row_id=first)


def _manifest(version: int, content: ManifestContent = ManifestContent.DATA) -> bytes:
    """Entries as Java writes them (ADDED: nulls to inherit) and as a broken writer would
    (an EXISTING entry without sequence numbers)."""
    f = FileContent.DATA if content == ManifestContent.DATA else FileContent.POSITION_DELETES
    entries = [ManifestEntry(EntryStatus.EXISTING, 1, 3, 3, _file("e", 25, first=800, content=f)),
               ManifestEntry(EntryStatus.ADDED, None, None, None, _file("a1", 50, content=f)),
               ManifestEntry(EntryStatus.EXISTING, 2, None, None, _file("e2", 10, content=f)),
               ManifestEntry(EntryStatus.ADDED, None, None, 9, _file("a2", 30, content=f)),
               ManifestEntry(EntryStatus.DELETED, 5, 4, 4, _file("d", 7, content=f))]
    if version == 1:  # v1 requires snapshot_id
        for e in entries:
            e.snapshot_id = 42 if e.snapshot_id is None else e.snapshot_id
    return write_manifest(entries, format_version=version, spec=PartitionSpec(0, ()), schema=SCHEMA,
                          content=content)


def _frame_values(blob: bytes, m: ManifestFile, version: int) -> list[tuple]:
    frame = read_entry_frame(open_avro(blob, source="m"), with_bounds=False)
    out = frame.with_columns(**inherited(manifest_sequence_number=m.sequence_number,
                                         added_snapshot_id=m.added_snapshot_id, first_row_id=m.first_row_id,
                                         format_version=version))
    return out.select("snapshot_id", "sequence_number", "file_sequence_number", "first_row_id").rows()


def _object_values(blob: bytes, m: ManifestFile) -> list[tuple]:
    return [(e.snapshot_id, e.sequence_number, e.file_sequence_number, e.data_file.first_row_id)
            for e in read_manifest(blob, m)]


EXPECTED = {
    # v3, manifest sequence number 7, snapshot 42, first_row_id 1000
    3: [(1, 3, 3, 800), (42, 7, 7, 1000), (2, None, None, None), (42, 7, 9, 1050), (5, 4, 4, None)],
    # v2: no first_row_id (a v3 field); an EXISTING entry without sequence numbers inherits
    # nothing (validate reports it)
    2: [(1, 3, 3, None), (42, 7, 7, None), (2, None, None, None), (42, 7, 9, None), (5, 4, 4, None)],
    # v1 (Appendix E): sequence numbers are 0, whatever the manifest list says
    1: [(1, 0, 0, 800), (42, 0, 0, None), (2, 0, 0, None), (42, 0, 0, None), (5, 0, 0, None)],
}


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize("reader", ["polars", "lean"])
def test_every_shape_inherits_the_same(version, reader, monkeypatch):
    if reader == "lean":
        monkeypatch.setenv("ICECTL_AVRO_READER", "lean")
    blob = _manifest(version)
    m = ManifestFile("m", len(blob), 0, sequence_number=7 if version > 1 else 0, added_snapshot_id=42,
                     first_row_id=1000 if version >= 3 else None)
    expected = EXPECTED[version]
    if version == 1:  # a v1 manifest holds no first_row_id, and a v1 list no sequence numbers
        expected = [(s, q, f, None) for s, q, f, _ in expected]
    assert _object_values(blob, m) == expected
    assert _frame_values(blob, m, version) == expected


def test_a_manifest_of_sequence_number_0_reads_nulls_as_0():
    """A v2 manifest added before sequence numbers were assigned (its manifest-list entry says 0):
    an EXISTING entry's null sequence numbers are 0, as in v1."""
    blob = _manifest(2)
    m = ManifestFile("m", len(blob), 0, sequence_number=0, added_snapshot_id=42)
    assert _object_values(blob, m)[2] == (2, 0, 0, None)
    assert _frame_values(blob, m, 2)[2] == (2, 0, 0, None)


def test_delete_files_inherit_no_first_row_id():
    blob = _manifest(3, ManifestContent.DELETES)
    m = ManifestFile("m", len(blob), 0, ManifestContent.DELETES, 7, added_snapshot_id=42, first_row_id=1000)
    assert [v[3] for v in _object_values(blob, m)] == [800] + [None] * 4  # 800: written, not inherited
    assert [v[3] for v in _frame_values(blob, m, 3)] == [800] + [None] * 4


def test_inherited_takes_columns_for_stacked_manifests():
    """validate stacks many manifests, each with its values as columns."""
    import polars as pl

    frame = pl.DataFrame({"status": [1, 0, 1, 0], "snapshot_id": [None, None, 3, 4],
                          "sequence_number": [None, None, None, 2], "file_sequence_number": [None, None, 5, 2],
                          "mseq": [7, 7, 0, 9], "msnap": [42, 42, 43, 44], "mfv": [2, 2, 2, 1]},
                         schema_overrides={k: pl.Int64 for k in ("snapshot_id", "sequence_number",
                                                                 "file_sequence_number")})
    exprs = inherited(manifest_sequence_number=pl.col("mseq"), added_snapshot_id=pl.col("msnap"), first_row_id=None,
                      format_version=pl.col("mfv"))
    got = frame.select(**exprs).rows()
    assert got == [(42, 7, 7), (42, None, None), (3, 0, 5), (4, 2, 2)]


# The object view's Python form of the inheritance rules gives what the frame's polars form gives.
_maybe = lambda s: st.one_of(st.none(), s)  # noqa: E731
_entries = st.lists(st.tuples(st.sampled_from([0, 1, 2]), _maybe(st.integers(1, 10**18)), _maybe(st.integers(0, 50)),
                              _maybe(st.integers(0, 50)), _maybe(st.sampled_from([0, 1, 2])),
                              _maybe(st.integers(0, 10**6)), _maybe(st.integers(0, 10**9))), max_size=12)


@given(_entries, _maybe(st.integers(0, 60)), _maybe(st.integers(1, 10**18)), _maybe(st.integers(0, 10**9)),
       st.sampled_from([1, 2, 3]))
def test_python_and_polars_forms_of_inheritance_agree(rows, seq, snap, first_row_id, fv):
    import polars as pl

    columns = {name: [r[i] for r in rows] for i, name in enumerate(INHERITED_INPUTS)}
    frame = pl.DataFrame({name: pl.Series(name, columns[name], dtype=pl.Int64) for name in INHERITED_INPUTS})
    exprs = inherited(manifest_sequence_number=seq, added_snapshot_id=snap, first_row_id=first_row_id,
                      format_version=fv)
    expected = frame.select([e.alias(n) for n, e in exprs.items()])
    got = inherit_values(columns, manifest_sequence_number=seq, added_snapshot_id=snap, first_row_id=first_row_id,
                         format_version=fv)
    assert got == {n: expected.get_column(n).to_list() for n in exprs}


@pytest.mark.parametrize("bad, error", [(True, TypeError), ("7", TypeError), (1.5, TypeError), (2**63, ValueError)])
def test_python_form_refuses_what_is_not_a_long(bad, error):
    columns = {name: [1] for name in INHERITED_INPUTS}
    columns["sequence_number"] = [bad]
    with pytest.raises(error):
        inherit_values(columns, manifest_sequence_number=1, added_snapshot_id=1, first_row_id=None, format_version=2)
