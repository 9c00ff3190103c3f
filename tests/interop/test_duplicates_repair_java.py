"""``validate`` and ``repair`` of a data file live twice, on tables Iceberg Java 1.10.2 wrote in its
SQL catalog (``jc``): v2 with a position delete, v3 with a deletion vector. A bad commit (icectl's
own manifest writer, a new manifest list and metadata through the catalog, as a retried append
would leave it) adds the first data file again in a second manifest. Java then counts its rows
twice, and the deleted row once more (the delete is older than the second entry, so it does not
apply to it); on v3 it refuses to plan the scan (a deletion vector older than its data file's
entry); ``validate`` reports the duplicate and names the fix; ``repair --yes`` (the default
set) keeps the entry with the lowest data sequence number; Java's count is the rows written minus
the row deleted, and ``validate --deep`` is clean."""
from __future__ import annotations

import pathlib
import sys

import pytest

pytestmark = [pytest.mark.interop, pytest.mark.spark]

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
import lifecycle_tables as L  # noqa: E402
from helpers import append_files  # noqa: E402

from icectl.catalog import CatalogConfig, build_catalog  # noqa: E402
from icectl.formats.manifest import FileContent  # noqa: E402
from icectl.table.loaded import load_table  # noqa: E402


@pytest.mark.parametrize("version", [2, 3])
def test_data_file_in_two_manifests_is_found_and_left_once(spark, jdbc_catalog_db, jdbc_warehouse, tmp_path,
                                                           monkeypatch, version):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    spark.sql("CREATE NAMESPACE IF NOT EXISTS jc.db")
    short = f"dups_v{version}"
    name = f"jc.db.{short}"
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (id bigint, name string) USING iceberg TBLPROPERTIES ('format-version'="
              f"'{version}', 'write.delete.mode'='merge-on-read')")
    for lo in (1, 6):
        spark.sql(f"INSERT INTO {name} SELECT /*+ COALESCE(1) */ * FROM VALUES "
                  + ", ".join(f"({i}, 'n{i}')" for i in range(lo, lo + 5)))
    spark.sql(f"DELETE FROM {name} WHERE id = 2")  # a position delete (v2) / deletion vector (v3), sequence 3
    count = f"SELECT count(*) FROM {name}"
    assert spark.sql(count).collect()[0][0] == 9
    kinds = {r[0] for r in spark.sql(f"SELECT file_format FROM {name}.delete_files").collect()}
    assert kinds == ({"PARQUET"} if version == 2 else {"PUFFIN"})

    args = ["-c", "jc", "--uri", f"jdbc:sqlite:{jdbc_catalog_db}", "--warehouse", str(jdbc_warehouse)]
    cat = build_catalog(CatalogConfig("jc", {"type": "sql", "uri": f"jdbc:sqlite:{jdbc_catalog_db}",
                                             "warehouse": str(jdbc_warehouse)}))
    t = load_table(cat, ("db", short))
    data = [e for e in t.live_entries(t.metadata.current_snapshot) if e.data_file.content == FileContent.DATA]
    assert sorted(e.sequence_number for e in data) == [1, 2]
    first = next(e.data_file for e in data if e.sequence_number == 1)  # ids 1..5, the deleted row among them
    append_files(t, [first])  # the same data file added again, in a manifest of its own
    if version == 2:
        assert spark.sql(count).collect()[0][0] == 14  # Java reads it twice; the delete misses the second entry
    else:  # DeleteFileIndex.findDV: the file's deletion vector is older than its second entry
        with pytest.raises(Exception, match="DV data sequence number"):
            spark.sql(count).collect()

    found = L.icectl(*args, "-o", "json", "validate", f"db.{short}", expect=8).json
    dup = [f for f in found["findings"] if f["code"] == "DUPLICATE_LIVE_FILE"]
    assert len(dup) == 1 and L.norm(dup[0]["file"]) == L.norm(first.file_path)
    assert dup[0]["fix"] == f"icectl repair db.{short} --duplicates --dry-run"

    dry = L.icectl(*args, "-o", "json", "repair", f"db.{short}", "--duplicates", "--dry-run").json
    [d] = dry["duplicates"]
    assert sorted((e["data_sequence_number"], e["kept"]) for e in d["entries"]) == [(1, True), (4, False)]
    assert d["records_counted_twice"] == 5
    done = L.icectl(*args, "-o", "json", "repair", f"db.{short}", "--yes").json
    assert done["applied"] and done["duplicates_snapshot_id"] is not None
    assert spark.sql(count).collect()[0][0] == 9
    assert sorted(r[0] for r in spark.sql(f"SELECT id FROM {name}").collect()) == [1] + list(range(3, 11))
    snap = spark.sql(f"SELECT operation, summary FROM {name}.snapshots ORDER BY committed_at DESC LIMIT 1").collect()[0]
    assert snap[0] == "replace" and snap[1]["total-records"] == "10" and snap[1]["total-data-files"] == "2"
    assert L.icectl(*args, "validate", f"db.{short}", "--deep").code == 0
