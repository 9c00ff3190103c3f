"""``rewrite-table-path`` to and from S3 (a moto server on loopback): a v2 table with a Parquet
position delete file and an equality delete moved from a local folder into a bucket with
``--copy`` reads the same entries there and validates clean with ``--deep``; moved back from the
bucket to another folder, the same again. The source is untouched each time."""
from __future__ import annotations

import hashlib
import os
import pathlib
import sys

import pytest

from icectl.catalog.path import PathCatalog
from icectl.io import FileIO
from icectl.ops.recover.rewrite_table_path import apply_relocation, plan_relocation
from icectl.table.loaded import load_table
from icectl.validate.findings import ValidateOptions
from icectl.validate.run import validate_table

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from validate_corpus import tables  # noqa: E402

pytestmark = pytest.mark.s3


def tree_hash(root) -> str:
    h = hashlib.sha256()
    for d, _, fs in sorted(os.walk(root)):
        for f in sorted(fs):
            h.update(os.path.join(d, f).encode() + open(os.path.join(d, f), "rb").read())
    return h.hexdigest()


def entries(t, src: str = "", tgt: str = "") -> list[tuple]:
    out = []
    for snap in t.metadata.snapshots:
        for m in t.manifests(snap):
            for e in t.read_entries(m):
                f = e.data_file
                out.append((snap.snapshot_id, int(e.status), f.file_path.replace(src, tgt, 1), int(f.content),
                            e.snapshot_id, e.sequence_number, f.record_count, f.partition,
                            (f.referenced_data_file or "").replace(src, tgt, 1)))
    return sorted(out, key=repr)


def opened(location: str, props: dict):
    pc = PathCatalog(location, FileIO(dict(props)))
    return load_table(pc, pc.identifier())


def test_to_s3_and_back(tmp_path, moto_s3, s3_prefix):
    base = tables.build(str(tmp_path / "src"), 2, catalog="hadoop")
    local = str(tmp_path / "src" / "warehouse")
    t = opened(base.table.metadata_location, moto_s3)
    before = tree_hash(tmp_path / "src")
    up = plan_relocation(t, source_prefix=local, target_prefix=s3_prefix)
    assert up.target_metadata_location.startswith(s3_prefix + "/db/t/metadata/")
    result = apply_relocation(t, up, copy=True)
    assert result.copied_files == len(up.copy_rows) == 5 and tree_hash(tmp_path / "src") == before
    on_s3 = opened(up.target_metadata_location, moto_s3)
    assert entries(on_s3) == entries(t, local, s3_prefix)
    report = validate_table(on_s3.catalog, on_s3.identifier, ValidateOptions(deep=True, all_snapshots=True))
    assert report.findings == []
    back_to = str(tmp_path / "back")
    down = plan_relocation(on_s3, source_prefix=s3_prefix, target_prefix=back_to)
    apply_relocation(on_s3, down, copy=True)
    back = opened(down.target_metadata_location, {})
    assert entries(back) == entries(t, local, back_to)
    report = validate_table(back.catalog, back.identifier, ValidateOptions(deep=True, all_snapshots=True))
    assert report.findings == []
