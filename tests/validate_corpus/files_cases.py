"""Defects in the files themselves (found with --deep)."""
from __future__ import annotations

import os

from .helpers import (
    case,
    delete_manifest,
    edit_json,
    newest_data_manifest,
    rewrite_manifest,
    write_raw,
)
from .tables import Base


# -- the files (--deep) ------------------------------------------------------------------------------

@case("summary-totals-wrong", 2, "SUMMARY_TOTALS", deep=True)
def _summary_totals(base: Base) -> None:
    """The current snapshot's summary claims 7 more records and one more data file than its
    manifests hold."""
    def fn(obj):
        snap = next(s for s in obj["snapshots"] if s["snapshot-id"] == obj["current-snapshot-id"])
        for key, extra in (("total-records", 7), ("total-data-files", 1)):
            snap["summary"][key] = str(int(snap["summary"][key]) + extra)
    edit_json(base, fn)


@case("missing-data-file", 2, "FILE_MISSING", deep=True)
def _missing_data_file(base: Base) -> None:
    """A live data file was deleted from storage."""
    os.remove(base.data_files[2].file_path)


@case("wrong-file-size", 2, "FILE_SIZE_MISMATCH", deep=True)
def _wrong_file_size(base: Base) -> None:
    """A manifest records a data file size 10 bytes larger than the file."""
    def fn(entries):
        entries[0].data_file.file_size_in_bytes += 10
    rewrite_manifest(base, newest_data_manifest(base), fn)


@case("record-count-mismatch", 2, "RECORD_COUNT_MISMATCH", deep=True)
def _record_count(base: Base) -> None:
    """A manifest says a Parquet file holds one more row than its footer does."""
    def fn(entries):
        entries[0].data_file.record_count += 1
    rewrite_manifest(base, newest_data_manifest(base), fn)


@case("truncated-data-file", 2, "FILE_SIZE_MISMATCH", "FILE_UNREADABLE", deep=True)
def _truncated_data_file(base: Base) -> None:
    """A Parquet data file lost its footer (truncated to half)."""
    p = base.data_files[3].file_path
    data = open(p, "rb").read()
    write_raw(p, data[: len(data) // 2])


@case("dv-cardinality", 3, "DV_CARDINALITY", deep=True)
def _dv_cardinality(base: Base) -> None:
    """A deletion vector's record_count is not its bitmap's cardinality."""
    def fn(entries):
        entries[0].data_file.record_count += 1
    rewrite_manifest(base, delete_manifest, fn)


@case("dv-crc", 3, "DV_CORRUPT", deep=True)
def _dv_crc(base: Base) -> None:
    """A byte of a deletion vector's bitmap flipped: its CRC no longer matches."""
    dv = base.delete_files[0]
    data = bytearray(open(dv.file_path, "rb").read())
    data[dv.content_offset + 10] ^= 0xFF
    write_raw(dv.file_path, bytes(data))


@case("dv-blob-offset", 3, "DV_BLOB_MISMATCH", deep=True)
def _dv_blob_offset(base: Base) -> None:
    """A deletion vector's content_offset points one byte past its blob."""
    def fn(entries):
        entries[0].data_file.content_offset += 1
        entries[0].data_file.content_size_in_bytes -= 1
    rewrite_manifest(base, delete_manifest, fn)


@case("puffin-truncated", 3, "FILE_SIZE_MISMATCH", "PUFFIN_INVALID", deep=True)
def _puffin_truncated(base: Base) -> None:
    """The Puffin file of a deletion vector lost its footer."""
    dv = base.delete_files[0]
    data = open(dv.file_path, "rb").read()
    write_raw(dv.file_path, data[: dv.content_offset + dv.content_size_in_bytes])
