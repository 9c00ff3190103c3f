"""``compute-stats`` and ``compute-partition-stats`` against Iceberg Java 1.10.2's
``compute_table_stats`` and ``compute_partition_stats`` procedures on identical copies of a table
Spark wrote (merge-on-read deletes included):

- Java reads icectl's statistics file (``table.statisticsFiles()``), decompresses each blob with its
  Puffin reader and deserializes the theta sketch (DataSketches Java): its estimate is within the
  sketch's bounds of the true NDV (Spark's ``count(DISTINCT ...)`` after deletes);
- icectl's sketches hold exactly the hashes of Java's where both are exact (under 4,096 distinct
  values): the same bytes are hashed per type, with the same seed; the ``ndv`` properties agree;
- Java reads icectl's partition statistics file with ``PartitionStatsHandler``; its rows equal the
  rows of the file Java computes, and the record and file counts equal Spark's ``.partitions`` table.
"""
from __future__ import annotations

import os
import pathlib
import sys

import pytest

pytestmark = [pytest.mark.interop, pytest.mark.spark]

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import lifecycle_tables as L  # noqa: E402
from java_tables import java_table  # noqa: E402

COLUMNS = ["id", "i", "d", "ts", "s", "f", "dbl", "dec", "b", "bin", "big"]


def _build(spark, name: str, version: int) -> None:
    spark.sql(f"DROP TABLE IF EXISTS {name}")
    spark.sql(f"CREATE TABLE {name} (id bigint, i int, d date, ts timestamp, s string, f float, dbl double, "
              f"dec decimal(10,2), b boolean, bin binary, big bigint, cat string) USING iceberg "
              f"PARTITIONED BY (cat) TBLPROPERTIES ('format-version'='{version}', "
              "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read')")
    # i: negatives and values whose 4 bytes are not UTF-8; f: -0.0 beside 0.0; big: 6,000 distinct
    # values, past the sketch's 4,096 nominal entries (estimation mode).
    for part in range(3):
        spark.sql(f"""INSERT INTO {name} SELECT id, CAST((id % 300) * 997 - 150000 AS INT),
            DATE_ADD(DATE'2020-01-01', CAST(id % 50 AS INT)),
            TIMESTAMP'2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id % 70),
            CASE WHEN id % 13 = 0 THEN NULL WHEN id % 17 = 0 THEN '' ELSE concat('név-', CAST(id % 90 AS STRING)) END,
            CASE WHEN id % 40 = 0 THEN CAST('-0.0' AS FLOAT) ELSE CAST(id % 40 AS FLOAT) / 3 END,
            CAST(id % 110 AS DOUBLE) / 7, CAST(id % 130 AS DECIMAL(10,2)) - 64.5, id % 2 = 0,
            CAST(concat('b', CAST(id % 20 AS STRING)) AS BINARY), id, concat('c', CAST(id % 4 AS STRING))
            FROM range({part * 2000}, {(part + 1) * 2000})""")
    spark.sql(f"DELETE FROM {name} WHERE id % 29 = 3")


def _true_ndv(spark, name: str) -> dict[str, int]:
    # floats by their text: -0.0 and 0.0 are two values to a sketch of their bits, one to DISTINCT
    exprs = ", ".join(f"count(DISTINCT CAST({c} AS STRING)) AS {c}" if c in ("f", "dbl") else
                      f"count(DISTINCT {c}) AS {c}" for c in COLUMNS)
    row = spark.sql(f"SELECT {exprs} FROM {name}").collect()[0]
    # Spark skips nulls as the sketch does; the sketch also skips empty strings and binaries
    empty = spark.sql(f"SELECT count(DISTINCT s) FROM {name} WHERE s = ''").collect()[0][0]
    out = {c: int(row[c]) for c in COLUMNS}
    out["s"] -= empty
    return out


def _java_blobs(spark, name: str) -> dict[int, dict]:
    """Java's view of the current statistics file: per field id, the blob's properties, the sketch
    bytes its Puffin reader returns (decompressed) and DataSketches Java's estimate of them."""
    jvm = spark._jvm
    t = java_table(spark, name)
    t.refresh()
    files = list(t.statisticsFiles())
    assert len(files) == 1
    sf = files[0]
    assert sf.snapshotId() == t.currentSnapshot().snapshotId()
    reader = jvm.org.apache.iceberg.puffin.Puffin.read(t.io().newInputFile(sf.path())).build()
    out: dict[int, dict] = {}
    try:
        blobs = reader.fileMetadata().blobs()
        it = reader.readAll(blobs).iterator()
        while it.hasNext():
            pair = it.next()
            meta, buf = pair.first(), pair.second()
            data = bytes(jvm.org.apache.iceberg.util.ByteBuffers.toByteArray(buf))
            sketch = jvm.org.apache.datasketches.theta.CompactSketch.wrap(
                jvm.org.apache.datasketches.memory.Memory.wrap(data))
            fid = int(list(meta.inputFields())[0])
            out[fid] = {"type": meta.type(), "properties": dict(meta.properties()), "bytes": data,
                        "estimate": sketch.getEstimate(), "lower": sketch.getLowerBound(3),
                        "upper": sketch.getUpperBound(3), "codec": meta.compressionCodec(),
                        "snapshot": meta.snapshotId(), "sequence": meta.sequenceNumber()}
    finally:
        reader.close()
    stats_meta = {int(list(b.fields())[0]): dict(b.properties()) for b in sf.blobMetadata()}
    for fid, blob in out.items():
        assert stats_meta[fid] == blob["properties"]
    return out


def _same_hashes(a: bytes, b: bytes) -> bool:
    import datasketches as ds

    sa, sb = ds.compact_theta_sketch.deserialize(a), ds.compact_theta_sketch.deserialize(b)
    diff = ds.theta_a_not_b()
    return (sa.num_retained == sb.num_retained and diff.compute(sa, sb).num_retained == 0
            and diff.compute(sb, sa).num_retained == 0)


@pytest.mark.parametrize("version", [2, 3])
def test_ndv_statistics_match_java(spark, oracle_warehouse, tmp_path, version):
    name = f"hc.db.ndv_v{version}"
    _build(spark, name, version)
    location = os.path.join(str(oracle_warehouse), "db", f"ndv_v{version}")
    truth = _true_ndv(spark, name)
    schema = {f.name(): f.fieldId() for f in java_table(spark, name).schema().columns()}
    backup = L.FolderBackup(location, str(tmp_path / "pristine"))

    spark.sql(f"CALL hc.system.compute_table_stats(table => 'db.ndv_v{version}', columns => array("
              + ", ".join(f"'{c}'" for c in COLUMNS) + "))").collect()
    java = _java_blobs(spark, name)
    backup.restore()

    r = L.icectl("--warehouse", str(oracle_warehouse), "-o", "json", "compute-stats", f"db.ndv_v{version}",
                 "--columns", ",".join(COLUMNS), "--yes")
    doc = r.json
    assert doc["applied"] is True and [c["name"] for c in doc["columns"]] == COLUMNS
    assert doc["commits"][0]["updates"][0]["action"] == "set-statistics"
    mine = _java_blobs(spark, name)  # Java reads icectl's file

    for c in COLUMNS:
        fid = schema[c]
        j, i = java[fid], mine[fid]
        assert i["type"] == "apache-datasketches-theta-v1" and i["codec"] == "zstd", c
        assert (i["snapshot"], i["sequence"]) == (j["snapshot"], j["sequence"]), c
        # Java's estimate of icectl's sketch is within the sketch's bounds of the true NDV
        assert i["lower"] <= truth[c] <= i["upper"], (c, truth[c], i)
        assert int(i["properties"]["ndv"]) == int(i["estimate"]), c
        if truth[c] < 4096:  # exact mode: the same hashes, so the same values hashed the same way
            assert _same_hashes(i["bytes"], j["bytes"]), c
            assert i["properties"] == j["properties"] == {"ndv": str(truth[c])}, c
        else:
            assert abs(int(i["properties"]["ndv"]) - int(j["properties"]["ndv"])) <= 0.05 * truth[c], c
    # Spark still reads the table, and validate finds nothing wrong with the statistics file
    assert spark.sql(f"SELECT count(*) FROM {name}").collect()[0][0] > 0
    assert L.icectl("--warehouse", str(oracle_warehouse), "validate", f"db.ndv_v{version}", "--deep").code == 0


def _pstats_rows(path: str) -> list[tuple]:
    import pyarrow.parquet as pq

    t = pq.read_table(path)
    rows = []
    for r in t.to_pylist():
        r = dict(r)
        rows.append(tuple(sorted(((k, tuple(sorted(v.items())) if isinstance(v, dict) else v) for k, v in r.items()))))
    return rows


@pytest.mark.parametrize("version", [2, 3])
def test_partition_statistics_match_java(spark, oracle_warehouse, tmp_path, version):
    name = f"hc.db.pstats_v{version}"
    _build(spark, name, version)
    spark.sql(f"ALTER TABLE {name} ADD PARTITION FIELD bucket(2, id)")
    spark.sql(f"INSERT INTO {name} SELECT * FROM {name} WHERE id < 50")
    spark.sql(f"DELETE FROM {name} WHERE id % 31 = 1")
    location = os.path.join(str(oracle_warehouse), "db", f"pstats_v{version}")
    backup = L.FolderBackup(location, str(tmp_path / "pristine"))

    spark.sql(f"CALL hc.system.compute_partition_stats('db.pstats_v{version}')").collect()
    t = java_table(spark, name)
    t.refresh()
    java_file = list(t.partitionStatisticsFiles())[0].path()
    java_rows = _pstats_rows(java_file)
    backup.restore()

    r = L.icectl("--warehouse", str(oracle_warehouse), "-o", "json", "compute-partition-stats",
                 f"db.pstats_v{version}", "--yes")
    doc = r.json
    assert doc["applied"] is True and doc["commits"][0]["updates"][0]["action"] == "set-partition-statistics"
    t = java_table(spark, name)  # a fresh load: the restored folder reuses Java's version number
    files = list(t.partitionStatisticsFiles())
    assert len(files) == 1 and files[0].snapshotId() == t.currentSnapshot().snapshotId()
    path = files[0].path()
    assert os.path.getsize(path) == files[0].fileSizeInBytes()
    # the same rows as Java's own file (counts, last updated snapshot and time; v3: dv_count)
    assert sorted(_pstats_rows(path), key=repr) == sorted(java_rows, key=repr)
    assert len(java_rows) == len(doc["partitions"])

    # Java reads icectl's file with its own reader and schema
    jvm = spark._jvm
    ptype = jvm.org.apache.iceberg.Partitioning.partitionType(t)
    schema = jvm.org.apache.iceberg.PartitionStatsHandler.schema(ptype, version)
    it = jvm.org.apache.iceberg.PartitionStatsHandler.readPartitionStatsFile(
        schema, t.io().newInputFile(path)).iterator()
    java_read = {}
    while it.hasNext():
        s = it.next()
        part = s.partition()
        key = (s.specId(), tuple(str(part.get(k, jvm.java.lang.Object._java_lang_class)) for k in range(part.size())))
        java_read[key] = (s.dataRecordCount(), s.dataFileCount(), s.positionDeleteRecordCount())
    assert len(java_read) == len(java_rows)

    # record and file counts per partition equal Spark's .partitions table
    spark_rows = spark.sql(f"SELECT partition, spec_id, record_count, file_count, position_delete_record_count "
                           f"FROM {name}.partitions").collect()
    expected = {(row["spec_id"], tuple(str(v) for v in row["partition"])):
                (row["record_count"], row["file_count"], row["position_delete_record_count"]) for row in spark_rows}
    assert java_read == expected
