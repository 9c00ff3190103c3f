"""``-o json`` of a result with long lists of plain rows (``diff``'s files): each list is encoded by
msgspec in one call and put where the standard encoder wrote a placeholder (output._indented). The
document must be the text ``json.dumps(result, default=_default, indent=2)`` writes, whatever the
rows hold: non-ASCII text, DEL and control characters, quotes and backslashes, floats, integers
past 64 bits, a string that looks like a placeholder; and rows that are not plain (a float, a
nested value) leave their list to the standard encoder."""
from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

import icectl.cli.views.diff  # noqa: F401  (registers FileChange's plain rows)
from icectl.cli import output
from icectl.ops.inspect.diff import FileChange


@dataclass
class _Doc:
    name: str
    added_files: list[FileChange] | None
    removed_files: list[FileChange]
    short: list[FileChange]


def _change(i: int, path: str = "", partition: dict | None = None, **kw) -> FileChange:
    return FileChange(content="data", file_path=path or f"s3://b/t/data/f-{i}.parquet", file_format="parquet",
                      spec_id=i % 2, partition={"d": 19000 + i, "s": f"x{i % 3}"} if partition is None else partition,
                      record_count=i, file_size_in_bytes=i * 1000, data_sequence_number=i or None, snapshot_id=7,
                      **kw)


def _rows(n: int, **odd) -> list[FileChange]:
    rows = [_change(i) for i in range(n)]
    if odd:
        rows[n // 2] = _change(n // 2, **odd)
    return rows


CASES = {
    "plain": {},
    "tab, quote, backslash, newline": {"path": 's3://b/t/data/q"uote\\back\tslash\nnl.parquet'},
    "non-ASCII": {"path": "s3://b/t/data/caf\u00e9-\U0001f600.parquet"},
    "DEL": {"path": "s3://b/t/data/del\x7f.parquet"},
    "control": {"path": "s3://b/t/data/nul\x00bell\x07.parquet"},
    "a float partition": {"partition": {"f": 1e16}},
    "NaN as text": {"partition": {"f": "NaN", "n": None, "b": True}},
    "past 64 bits": {"partition": {"d": 2 ** 70}},
    "a nested value": {"partition": {"m": {"keys": [1, 2], "values": ["a", None]}}},
    "looks like a placeholder": {"path": "\x00" + "0" * 16 + ":0"},
    "a delete file's fields": {"referenced_data_file": "s3://b/t/data/f-1.parquet", "content_offset": 4,
                               "content_size_in_bytes": 40},
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_document_is_the_standard_encoders(case, monkeypatch):
    spliced = []
    plain_array = output._plain_array

    def recording(rows):  # noqa: ANN001, ANN202
        text = plain_array(rows)
        spliced.append(text is not None)
        return text

    monkeypatch.setattr(output, "_plain_array", recording)
    doc = _Doc("db.t", _rows(200, **CASES[case]), _rows(output.PLAIN_ARRAY_MIN), _rows(3))
    assert output._indented(doc) == json.dumps(doc, default=output._default, indent=2)
    # the short list is left to the standard encoder; the two long ones are spliced when plain
    assert len(spliced) == 2
    if case in ("non-ASCII", "DEL", "a float partition", "a nested value"):
        assert spliced == [False, True]  # not ASCII, DEL, a float, not a single value: that list as before
    else:
        assert spliced == [True, True]


def test_a_list_of_other_rows_or_none_is_the_standard_encoders():
    doc = _Doc("db.t", None, [_change(i) for i in range(100)] + ["not a row"], [])  # type: ignore[list-item]
    assert output._indented(doc) == json.dumps(doc, default=output._default, indent=2)
