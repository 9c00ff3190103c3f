"""Reference Iceberg tables written by Apache Iceberg Java 1.10.2 (in local Spark), for interop tests.

Nothing here imports pyspark or icectl at module level; every function takes the SparkSession
from the oracle (`/work/shared/oracle/iceberg_java.py`, see tests/interop/conftest.py).

Builders (each takes the SparkSession and a full table name "<catalog>.<namespace>.<table>", creates
the namespace if needed, creates the table, writes it, and returns the name). The default names are
in `DEFAULT_NAMES`; the session fixtures build them in catalog `hc` (Hadoop catalog), namespace `db`:

  build_v1_table(spark, "hc.db.v1_table")
      format-version 1, PARTITIONED BY (days(ts), bucket(4, id)); columns
        id int, big bigint, name string (NULL when id % 5 = 0), score double, ratio float,
        price decimal(10,2) (id * 1.25), d date (2024-01-01 + id days),
        ts timestamp (= Iceberg timestamptz; 2024-03-01T00:00Z + 2h * id),
        ts_ntz timestamp_ntz (= Iceberg timestamp), flag boolean, payload binary (NULL when
        id % 7 = 0); partition fields `ts_day` (day) and `id_bucket` (bucket[4]);
      snapshots: append ids 1..20, append ids 21..40, append ids 41..50, then a dynamic
      partition overwrite (`overwritePartitions()`, operation "overwrite") of the rows of
      day 2024-03-01 (ids 1..11, names 'over-<id>'); 4 snapshots, no delete files.
  build_v2_table(spark, "hc.db.v2_table")
      format-version 2, write.{delete,update,merge}.mode=merge-on-read, PARTITIONED BY (category);
      columns id bigint, data string, category string ('a' when id % 3 = 0, 'b' when 1, 'c' when 2),
      amount double;
        1. append ids 1..30            2. append ids 31..60
        3. DELETE WHERE id % 7 = 0     (position delete files, content 1)
        4. equality delete file (content 2, equality_ids [1] = id) in partition category='a'
           deleting ids 3, 6, 9, 12, committed with the Java API `newRowDelta().addDeletes()`
        5. CREATE BRANCH b1 RETAIN 7 DAYS WITH SNAPSHOT RETENTION 3 SNAPSHOTS
        6. CREATE TAG t1 RETAIN 30 DAYS        (b1 and t1 both point at snapshot 4)
        7. INSERT INTO the branch b1 ids 1001..1005 (main does not see them)
        8. ADD COLUMN note string, append ids 61..70 (note 'n<id>')
        9. RENAME COLUMN data TO payload, append ids 71..80
       10. ADD PARTITION FIELD bucket(4, id)  (spec 1), append ids 81..90
       11. DROP PARTITION FIELD category       (spec 2), append ids 91..100
      9 snapshots: 8 in main's history (3 and 4 are "delete" operations, the others "append")
      plus the one on b1 (parent: snapshot 4). Specs 0 (category), 1 (category, id_bucket_4),
      2 (id_bucket_4 only; the `files` partition struct still shows category=None). Live delete
      files of main: Parquet position delete files (content 1, spec 0, in each category) and one
      equality delete file (content 2, spec 0, category 'a'). Main has 88 rows, b1 53, t1 48.
  build_v3_table(spark, "hc.db.v3_table")
      format-version 3, merge-on-read deletes/updates, PARTITIONED BY (region); columns
      id bigint, region string ('eu' when id is even, else 'us'), qty int (id * 10),
      ts timestamp (2024-06-01T00:00Z + id minutes);
        appends ids 1..30, 31..60, 61..80; DELETE WHERE id % 6 = 0 (deletion vectors: Puffin
        delete files, content 1, file_format PUFFIN); UPDATE SET qty = qty + 100 WHERE id % 10 = 1
        (DVs merged with the previous ones, plus new data files). Row lineage: the metadata json
        has "next-row-id", data files / manifests carry first_row_id.
  build_v2_unpartitioned_table(spark, "hc.db.v2_unpartitioned")
      format-version 2, merge-on-read, unpartitioned; columns id bigint, data string;
        appends ids 1..25, 26..50; DELETE WHERE id IN (5, 10, 15, 40) (position deletes);
        UPDATE SET data = 'updated' WHERE id = 30 (a position delete plus a new data file).

`read_expected(spark, name) -> JavaTable` reads everything back from Spark (metadata tables and a
full scan); use it again after changing a table. `build_java_table(spark, kind, name)` builds kind
("v1", "v2", "v3", "v2_unpartitioned"; see `BUILDERS`) then reads it back.

JavaTable (frozen dataclass; the field comments below say exactly where each value comes from):
  name, identifier ("db.t"), location, metadata_location, format_version, current_snapshot_id,
  columns, properties,
  snapshots: tuple[SnapshotInfo(snapshot_id, parent_id, operation, committed_at (aware UTC),
             committed_at_ms, manifest_list, summary)], ordered by commit time;
  refs: tuple[RefInfo(name, type "BRANCH"/"TAG", snapshot_id, max_reference_age_in_ms,
        min_snapshots_to_keep, max_snapshot_age_in_ms)], sorted by name, "main" included;
  data_files / delete_files: tuple[FileInfo(file_path, content, file_format, spec_id, partition,
        record_count, file_size_in_bytes, equality_ids, referenced_data_file, content_offset,
        content_size_in_bytes, first_row_id)] of main's current snapshot, sorted by path;
  row_count, rows (sorted tuples), ref_rows {ref name: sorted rows} for refs other than main,
  lineage_rows (v3: (id, _row_id, _last_updated_sequence_number)) or None;
  helpers .ref(name), .snapshot(id), .snapshot_ids, .files, .metadata_json().

Value conventions in `JavaTable` (what a comparison with icectl must convert to):
  * Spark `timestamp` (Iceberg timestamptz) values are timezone-aware `datetime` in UTC, read
    through unix_micros(), so they do not depend on the process time zone; `timestamp_ntz`
    (Iceberg timestamp) values are naive `datetime`; `date` is `datetime.date`; decimals are
    `decimal.Decimal`; binary is `bytes`; float columns are Python floats (float32-rounded).
  * `FileInfo.partition` is the `partition` struct of Spark's `files` metadata table as a dict:
    the union of all partition fields of all specs (fields not in the file's spec are None),
    keyed by partition field name (`ts_day`, `id_bucket`, `category`, ...). A days() value is
    a `datetime.date`, bucket() an int, identity the source value.
  * Paths are plain local paths (the warehouse is a local folder, no "file:" scheme).
  * Rows are tuples in the order of `columns`, sorted with None last per column.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=UTC)

# Path of the oracle module (iceberg_java.py): $ICECTL_ORACLE_DIR, else <repo>/../shared/oracle.
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def oracle_dir() -> str:
    return os.environ.get("ICECTL_ORACLE_DIR") or os.path.normpath(os.path.join(REPO_ROOT, "..", "shared", "oracle"))


def oracle_module():
    """The `iceberg_java` module (imported on first use; it imports nothing heavy itself)."""
    d = oracle_dir()
    if not os.path.exists(os.path.join(d, "iceberg_java.py")):
        raise RuntimeError(f"iceberg_java.py not found in {d}: set ICECTL_ORACLE_DIR")
    if d not in sys.path:
        sys.path.insert(0, d)
    import iceberg_java

    return iceberg_java


def java_table(spark, name: str):
    """org.apache.iceberg.Table for `name`, through py4j."""
    return oracle_module().java_table(spark, name)


def ensure_jdbc_driver(spark, jdbc_uri: str) -> None:
    """Makes the JDBC driver for `jdbc_uri` loadable by Iceberg's JdbcCatalog in this JVM.

    spark.jars only reaches the driver's class path when the JVM is launched. When another test
    started (and stopped) an oracle session without `jdbc_uri` earlier in the same pytest process,
    the JVM is reused and a later session's extra jars are not on the driver's class path ("No
    suitable driver found for jdbc:sqlite:..."). This adds the Debian driver jar to the class
    loader that loaded Iceberg and registers the driver; it is a no-op when it is already there.
    """
    kind = jdbc_uri.split(":")[1]
    driver_class = {"sqlite": "org.sqlite.JDBC", "postgresql": "org.postgresql.Driver"}[kind]
    jar = oracle_module().JDBC_DRIVERS[kind]
    jvm = spark._jvm
    context = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    loader = context.loadClass("org.apache.iceberg.jdbc.JdbcCatalog").getClassLoader()
    try:
        loader.loadClass(driver_class)
    except Exception:  # py4j.protocol.Py4JJavaError: ClassNotFoundException
        loader.addURL(jvm.java.io.File(jar).toURI().toURL())  # org.apache.spark.util.MutableURLClassLoader
    jvm.java.lang.Class.forName(driver_class, True, loader)  # static init registers it with DriverManager


# --------------------------------------------------------------------------- expected answers


@dataclass(frozen=True)
class SnapshotInfo:
    snapshot_id: int
    parent_id: int | None
    operation: str  # "append", "overwrite", "delete", "replace"
    committed_at: _dt.datetime  # aware, UTC, millisecond precision (= timestamp-ms)
    committed_at_ms: int
    manifest_list: str
    summary: dict[str, str]


@dataclass(frozen=True)
class RefInfo:
    name: str
    type: str  # "BRANCH" or "TAG"
    snapshot_id: int
    max_reference_age_in_ms: int | None
    min_snapshots_to_keep: int | None
    max_snapshot_age_in_ms: int | None


@dataclass(frozen=True)
class FileInfo:
    file_path: str
    content: int  # 0 data, 1 position deletes (or a deletion vector), 2 equality deletes
    file_format: str  # "PARQUET", "PUFFIN", ...
    spec_id: int
    partition: dict[str, Any]
    record_count: int
    file_size_in_bytes: int
    equality_ids: tuple[int, ...] | None = None
    referenced_data_file: str | None = None  # DVs (and v2 file-scoped position deletes)
    content_offset: int | None = None  # DVs: blob offset inside the Puffin file
    content_size_in_bytes: int | None = None  # DVs: blob length
    first_row_id: int | None = None  # v3 data files


@dataclass(frozen=True)
class JavaTable:
    """A table written by Iceberg Java, with the answers Spark gives about it."""

    name: str  # "hc.db.v2_table": the name to use in spark.sql()
    identifier: str  # "db.v2_table": namespace.table, as in CALL hc.system.x(table => ...)
    location: str  # table folder (local path)
    metadata_location: str  # current metadata json (hc: <location>/metadata/vN.metadata.json)
    format_version: int
    current_snapshot_id: int | None
    columns: tuple[str, ...]  # current schema, top-level column names in order
    properties: dict[str, str]
    snapshots: tuple[SnapshotInfo, ...]  # `snapshots` metadata table, ordered by committed_at
    refs: tuple[RefInfo, ...]  # `refs` metadata table, sorted by name ("main" included)
    data_files: tuple[FileInfo, ...]  # live data files of main (content 0), sorted by path
    delete_files: tuple[FileInfo, ...]  # live delete files of main (content 1, 2), sorted by path
    row_count: int  # rows on main (= len(rows))
    rows: tuple[tuple, ...]  # SELECT * on main, sorted
    ref_rows: dict[str, tuple[tuple, ...]] = field(default_factory=dict)  # SELECT * ... VERSION AS OF ref, refs other than main
    # v3+ only: (first column, i.e. id, _row_id, _last_updated_sequence_number) of each live row on main, sorted
    lineage_rows: tuple[tuple[Any, int, int], ...] | None = None

    @property
    def snapshot_ids(self) -> list[int]:
        return [s.snapshot_id for s in self.snapshots]

    def ref(self, name: str) -> RefInfo:
        for r in self.refs:
            if r.name == name:
                return r
        raise KeyError(name)

    def snapshot(self, snapshot_id: int) -> SnapshotInfo:
        for s in self.snapshots:
            if s.snapshot_id == snapshot_id:
                return s
        raise KeyError(snapshot_id)

    @property
    def files(self) -> tuple[FileInfo, ...]:
        return self.data_files + self.delete_files

    def metadata_json(self) -> dict:
        with open(self.metadata_location) as f:
            return json.load(f)


def _to_py(v):
    """Spark Row values to plain Python (bytearray -> bytes, Row -> dict, recursively)."""
    from pyspark.sql import Row

    if isinstance(v, bytearray):
        return bytes(v)
    if isinstance(v, Row):
        return {k: _to_py(x) for k, x in v.asDict(recursive=False).items()}
    if isinstance(v, list):
        return [_to_py(x) for x in v]
    if isinstance(v, dict):
        return {k: _to_py(x) for k, x in v.items()}
    return v


def _sort_key(row):
    return tuple((x is None, x) for x in row)


def micros_to_utc(us: int | None) -> _dt.datetime | None:
    return None if us is None else _EPOCH + _dt.timedelta(microseconds=us)


def read_rows(spark, query_or_table: str) -> tuple[tuple[str, ...], tuple[tuple, ...]]:
    """(columns, sorted rows) of a table name or a SELECT, timestamps (tz) as aware UTC datetimes."""
    from pyspark.sql.types import TimestampType

    sql = query_or_table if query_or_table.lstrip().lower().startswith(("select", "with")) else f"SELECT * FROM {query_or_table}"
    df = spark.sql(sql)
    cols = tuple(f.name for f in df.schema.fields)
    tz_idx = {i for i, f in enumerate(df.schema.fields) if isinstance(f.dataType, TimestampType)}
    if tz_idx:
        from pyspark.sql import functions as F

        df = df.select(
            *[
                F.unix_micros(F.col(f"`{c}`")).alias(c) if i in tz_idx else F.col(f"`{c}`")
                for i, c in enumerate(cols)
            ]
        )
    rows = []
    for r in df.collect():
        vals = [_to_py(x) for x in r]
        for i in tz_idx:
            vals[i] = micros_to_utc(vals[i])
        rows.append(tuple(vals))
    rows.sort(key=_sort_key)
    return cols, tuple(rows)


_FILE_COLUMNS = (
    "content", "file_path", "file_format", "spec_id", "partition", "record_count", "file_size_in_bytes",
    "equality_ids", "referenced_data_file", "content_offset", "content_size_in_bytes", "first_row_id",
)


def _file_info(r) -> FileInfo:
    partition = r.asDict().get("partition")  # no such column on an unpartitioned table
    return FileInfo(
        file_path=r["file_path"],
        content=r["content"],
        file_format=r["file_format"],
        spec_id=r["spec_id"],
        partition=_to_py(partition) if partition is not None else {},
        record_count=r["record_count"],
        file_size_in_bytes=r["file_size_in_bytes"],
        equality_ids=tuple(r["equality_ids"]) if r["equality_ids"] is not None else None,
        referenced_data_file=r["referenced_data_file"],
        content_offset=r["content_offset"],
        content_size_in_bytes=r["content_size_in_bytes"],
        first_row_id=r["first_row_id"],
    )


def read_expected(spark, name: str) -> JavaTable:
    """Reads `name` back from Spark: metadata tables, a full scan, and each ref's rows."""
    jt = java_table(spark, name)
    jt.refresh()
    ops = jt.operations()
    meta = ops.current()
    parts = name.split(".")
    identifier = ".".join(parts[1:])
    cur = jt.currentSnapshot()

    snapshots = tuple(
        SnapshotInfo(
            snapshot_id=r["snapshot_id"],
            parent_id=r["parent_id"],
            operation=r["operation"],
            committed_at=_EPOCH + _dt.timedelta(milliseconds=r["ms"]),
            committed_at_ms=r["ms"],
            manifest_list=r["manifest_list"],
            summary=dict(r["summary"] or {}),
        )
        for r in spark.sql(
            f"SELECT unix_millis(committed_at) AS ms, snapshot_id, parent_id, operation, manifest_list, summary "
            f"FROM {name}.snapshots ORDER BY committed_at, snapshot_id"
        ).collect()
    )
    refs = tuple(
        RefInfo(
            name=r["name"],
            type=r["type"],
            snapshot_id=r["snapshot_id"],
            max_reference_age_in_ms=r["max_reference_age_in_ms"],
            min_snapshots_to_keep=r["min_snapshots_to_keep"],
            max_snapshot_age_in_ms=r["max_snapshot_age_in_ms"],
        )
        for r in spark.sql(f"SELECT * FROM {name}.refs ORDER BY name").collect()
    )
    files_df = spark.table(f"{name}.files")
    wanted = [c for c in _FILE_COLUMNS if c in files_df.columns]  # no `partition` when unpartitioned
    files = [_file_info(r) for r in files_df.select(*wanted).collect()]
    data_files = tuple(sorted((f for f in files if f.content == 0), key=lambda f: f.file_path))
    delete_files = tuple(sorted((f for f in files if f.content != 0), key=lambda f: (f.file_path, f.content_offset or 0)))

    columns, rows = read_rows(spark, name)
    ref_rows = {}
    for ref in refs:
        if ref.name != "main":
            ref_rows[ref.name] = read_rows(spark, f"SELECT * FROM {name} VERSION AS OF '{ref.name}'")[1]

    fmt = meta.formatVersion()
    lineage = None
    if fmt >= 3:
        lineage = tuple(
            (r[0], r[1], r[2])
            for r in spark.sql(
                f"SELECT `{columns[0]}`, _row_id, _last_updated_sequence_number FROM {name} ORDER BY 1, 2"
            ).collect()
        )
    location = jt.location()
    if location.startswith("file:"):
        location = location[len("file:"):]
    metadata_location = meta.metadataFileLocation()
    if metadata_location.startswith("file:"):
        metadata_location = metadata_location[len("file:"):]
    return JavaTable(
        name=name,
        identifier=identifier,
        location=location,
        metadata_location=metadata_location,
        format_version=int(fmt),
        current_snapshot_id=cur.snapshotId() if cur is not None else None,
        columns=columns,
        properties={str(k): str(v) for k, v in dict(jt.properties()).items()},
        snapshots=snapshots,
        refs=refs,
        data_files=data_files,
        delete_files=delete_files,
        row_count=len(rows),
        rows=rows,
        ref_rows=ref_rows,
        lineage_rows=lineage,
    )


# --------------------------------------------------------------------------- builders

MOR = "'write.delete.mode'='merge-on-read', 'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read'"


def _create_namespace(spark, name: str) -> None:
    catalog, ns, _ = name.split(".")
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {catalog}.{ns}")


def build_v1_table(spark, name: str = "hc.db.v1_table") -> str:
    _create_namespace(spark, name)
    spark.sql(
        f"""CREATE TABLE {name} (
              id int, big bigint, name string, score double, ratio float, price decimal(10,2),
              d date, ts timestamp, ts_ntz timestamp_ntz, flag boolean, payload binary)
            USING iceberg PARTITIONED BY (days(ts), bucket(4, id))
            TBLPROPERTIES ('format-version'='1')"""
    )

    def select(lo: int, hi: int, name_expr: str = "concat('name-', id)") -> str:
        # ts: 2024-03-01T00:00Z + id * 2h, so ids 1..11 fall on 2024-03-01, 12..23 on 03-02, ...
        return f"""SELECT CAST(id AS int) AS id, id * 1000000007 AS big,
                     IF(id % 5 = 0, NULL, {name_expr}) AS name, id / 3.0D AS score,
                     CAST(id / 4.0 AS float) AS ratio, CAST(id * 1.25 AS decimal(10,2)) AS price,
                     date_add(DATE '2024-01-01', CAST(id AS int)) AS d,
                     timestamp_seconds(1709251200 + id * 7200) AS ts,
                     CAST(concat('2024-02-01 ', lpad(CAST(id % 24 AS string), 2, '0'), ':30:15.123456') AS timestamp_ntz) AS ts_ntz,
                     id % 2 = 0 AS flag, IF(id % 7 = 0, NULL, CAST(concat('bin-', id) AS binary)) AS payload
                   FROM range({lo}, {hi + 1}) AS r(id)"""

    spark.sql(f"INSERT INTO {name} {select(1, 20)}")
    spark.sql(f"INSERT INTO {name} {select(21, 40)}")
    spark.sql(f"INSERT INTO {name} {select(41, 50)}")
    # dynamic partition overwrite: every (day, bucket) partition touched by ids 1..11 is replaced
    spark.sql(select(1, 11, "concat('over-', id)")).writeTo(name).overwritePartitions()
    return name


def _write_equality_delete(spark, name: str, ids: list[int], partition_path: str) -> str:
    """Adds an equality delete file on column `id` (Java API RowDelta); returns its path."""
    import uuid

    import pyarrow as pa
    import pyarrow.parquet as pq

    jvm = spark._jvm
    table = java_table(spark, name)
    table.refresh()
    schema = table.schema()
    id_field = schema.findField("id")
    field_id = id_field.fieldId()
    location = table.location()
    local = location[len("file:"):] if location.startswith("file:") else location
    folder = os.path.join(local, "data", partition_path)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"eq-deletes-{uuid.uuid4()}.parquet")
    arrow_schema = pa.schema([pa.field("id", pa.int64(), nullable=False, metadata={b"PARQUET:field_id": str(field_id).encode()})])
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64())}, schema=arrow_schema), path)

    eq_ids = spark.sparkContext._gateway.new_array(jvm.int, 1)
    eq_ids[0] = field_id
    builder = (
        jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec())
        .ofEqualityDeletes(eq_ids)
        .withPath(path)
        .withFormat(jvm.org.apache.iceberg.FileFormat.PARQUET)
        .withFileSizeInBytes(os.path.getsize(path))
        .withRecordCount(len(ids))
    )
    if partition_path:
        builder = builder.withPartitionPath(partition_path)
    table.newRowDelta().addDeletes(builder.build()).commit()
    return path


def build_v2_table(spark, name: str = "hc.db.v2_table") -> str:
    _create_namespace(spark, name)
    spark.sql(
        f"""CREATE TABLE {name} (id bigint, data string, category string, amount double)
            USING iceberg PARTITIONED BY (category)
            TBLPROPERTIES ('format-version'='2', {MOR})"""
    )

    def rows(lo: int, hi: int, extra: str = "") -> str:
        return f"""SELECT id, concat('row-', id), CASE id % 3 WHEN 0 THEN 'a' WHEN 1 THEN 'b' ELSE 'c' END,
                     id * 1.5D {extra} FROM range({lo}, {hi + 1}) AS r(id)"""

    spark.sql(f"INSERT INTO {name} {rows(1, 30)}")
    spark.sql(f"INSERT INTO {name} {rows(31, 60)}")
    spark.sql(f"DELETE FROM {name} WHERE id % 7 = 0")  # position deletes
    _write_equality_delete(spark, name, [3, 6, 9, 12], "category=a")  # equality deletes
    spark.sql(f"ALTER TABLE {name} CREATE BRANCH b1 RETAIN 7 DAYS WITH SNAPSHOT RETENTION 3 SNAPSHOTS")
    spark.sql(f"ALTER TABLE {name} CREATE TAG t1 RETAIN 30 DAYS")
    spark.sql(f"INSERT INTO {name}.branch_b1 {rows(1001, 1005)}")
    note = ", concat('n', id)"
    spark.sql(f"ALTER TABLE {name} ADD COLUMN note string")
    spark.sql(f"INSERT INTO {name} {rows(61, 70, note)}")
    spark.sql(f"ALTER TABLE {name} RENAME COLUMN data TO payload")
    spark.sql(f"INSERT INTO {name} {rows(71, 80, note)}")
    spark.sql(f"ALTER TABLE {name} ADD PARTITION FIELD bucket(4, id)")
    spark.sql(f"INSERT INTO {name} {rows(81, 90, note)}")
    spark.sql(f"ALTER TABLE {name} DROP PARTITION FIELD category")
    spark.sql(f"INSERT INTO {name} {rows(91, 100, note)}")
    return name


def build_v3_table(spark, name: str = "hc.db.v3_table") -> str:
    _create_namespace(spark, name)
    spark.sql(
        f"""CREATE TABLE {name} (id bigint, region string, qty int, ts timestamp)
            USING iceberg PARTITIONED BY (region)
            TBLPROPERTIES ('format-version'='3', {MOR})"""
    )

    def rows(lo: int, hi: int) -> str:
        return f"""SELECT id, IF(id % 2 = 0, 'eu', 'us'), CAST(id * 10 AS int),
                     timestamp_seconds(1717200000 + id * 60) FROM range({lo}, {hi + 1}) AS r(id)"""

    spark.sql(f"INSERT INTO {name} {rows(1, 30)}")
    spark.sql(f"INSERT INTO {name} {rows(31, 60)}")
    spark.sql(f"INSERT INTO {name} {rows(61, 80)}")
    spark.sql(f"DELETE FROM {name} WHERE id % 6 = 0")  # deletion vectors
    spark.sql(f"UPDATE {name} SET qty = qty + 100 WHERE id % 10 = 1")  # DVs + new data files
    return name


def build_v2_unpartitioned_table(spark, name: str = "hc.db.v2_unpartitioned") -> str:
    _create_namespace(spark, name)
    spark.sql(f"CREATE TABLE {name} (id bigint, data string) USING iceberg TBLPROPERTIES ('format-version'='2', {MOR})")
    spark.sql(f"INSERT INTO {name} SELECT id, concat('d', id) FROM range(1, 26) AS r(id)")
    spark.sql(f"INSERT INTO {name} SELECT id, concat('d', id) FROM range(26, 51) AS r(id)")
    spark.sql(f"DELETE FROM {name} WHERE id IN (5, 10, 15, 40)")
    spark.sql(f"UPDATE {name} SET data = 'updated' WHERE id = 30")
    return name


BUILDERS: dict[str, Callable[..., str]] = {
    "v1": build_v1_table,
    "v2": build_v2_table,
    "v3": build_v3_table,
    "v2_unpartitioned": build_v2_unpartitioned_table,
}

DEFAULT_NAMES = {
    "v1": "hc.db.v1_table",
    "v2": "hc.db.v2_table",
    "v3": "hc.db.v3_table",
    "v2_unpartitioned": "hc.db.v2_unpartitioned",
}


def build_java_table(spark, kind: str, name: str | None = None) -> JavaTable:
    """Builds table `kind` ("v1", "v2", "v3", "v2_unpartitioned") as `name` and reads it back."""
    name = name or DEFAULT_NAMES[kind]
    BUILDERS[kind](spark, name)
    return read_expected(spark, name)


__all__ = [
    "BUILDERS",
    "DEFAULT_NAMES",
    "FileInfo",
    "JavaTable",
    "RefInfo",
    "SnapshotInfo",
    "build_java_table",
    "build_v1_table",
    "build_v2_table",
    "build_v2_unpartitioned_table",
    "build_v3_table",
    "ensure_jdbc_driver",
    "java_table",
    "micros_to_utc",
    "oracle_dir",
    "oracle_module",
    "read_expected",
    "read_rows",
]
