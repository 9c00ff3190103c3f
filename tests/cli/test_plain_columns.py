"""Plain (piped) tables: columns as wide as their widest cell, two spaces apart, right-aligned
where asked, no trailing spaces; and the snapshot list's time column, taken from ``committed_at``."""
from __future__ import annotations

import io
import json

import pytest

from icectl.cli.context import Env
from icectl.cli.output import fmt_ts, plain_table, row_texts
from icectl.spec.temporal import millis_to_iso


def by_hand(headers: list[str], rows: list[list[str]], right: set[str]) -> str:
    widths = [max([len(h)] + [len(r[i]) for r in rows if i < len(r)]) for i, h in enumerate(headers)]
    lines = [headers, *rows]
    return "".join("  ".join(c.rjust(w) if h in right else c.ljust(w)
                             for c, w, h in zip(cells, widths, headers)).rstrip() + "\n" for cells in lines)


@pytest.mark.parametrize("rows", [
    [["1", "a", "x y"], ["22222", "", "z"], ["3", "\u00e9t\u00e9", ""]],
    [["1", "a"], ["22", "bb", "c"]],  # a short row: the cell by cell path
    [],
])
def test_plain_table(rows):
    env = Env(stdout=io.StringIO())
    headers = ["id", "name", "note"]
    plain_table(env, headers, rows, right={"id"})
    assert env.stdout.getvalue() == by_hand(headers, rows, {"id"})


@pytest.mark.parametrize("ms", [0, -1, 1735689639345, 253402300799999, 253402300800000, -62135596800001,
                                -62167219200000])
def test_snapshot_time_column_is_fmt_ts(ms):
    assert millis_to_iso(ms)[:-1].replace("T", " ", 1) == fmt_ts(ms).removesuffix(" UTC")


class _Rows:
    """A result class whose rows msgspec encodes (``json_row``), as the snapshot list's."""

    @staticmethod
    def json_row(r: dict) -> dict:
        return r


@pytest.mark.parametrize("value", ["plain", "caf\u00e9", "del\x7f", "lone \ud800 surrogate", "\udfff",
                                   'q"uote \\ back', "snow\u2603-\U0001f600"])
def test_msgspec_rows_write_what_the_standard_encoder_writes(value):
    """A batch msgspec cannot write as ASCII (or at all: a lone surrogate, which a malformed
    metadata file can hold) goes through the standard encoder, so the text is the same either way."""
    rows = [{"id": 1, "summary": {"k": value}, "refs": [value]}, {"id": 2, "summary": {}, "refs": []}]
    assert row_texts(_Rows)(rows, ",\n") == ",\n".join(json.dumps(r) for r in rows)
