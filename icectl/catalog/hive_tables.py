"""What a table and a view look like in the Hive Metastore, as Iceberg Java's
``HiveTableOperations`` and ``HiveViewOperations`` write them: the parameter names, the storage
descriptor (columns in Hive's types, Java's input/output formats and SerDe, Hive's ``HiveIceberg*``
classes when ``engine.hive.enabled``), the table parameters of a commit (properties, pointer,
storage handler, basic statistics) and a view's ``VIRTUAL_VIEW`` table. The catalog itself, its
lock and its commit, is :mod:`icectl.catalog.hive`."""
from __future__ import annotations

import getpass
import time
from typing import Any, Iterable

from icectl.catalog.hive_types import hive_type_string
from icectl.spec.metadata import TableMetadata
from icectl.spec.properties import ENGINE_HIVE_ENABLED
from icectl.spec.view import ViewMetadata

try:  # the hive extra (icectl.catalog.hive refuses to open a catalog without it)
    from hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table
except ImportError:  # pragma: no cover - exercised by the missing-extra test in a subprocess
    pass

# Hive's and Iceberg Java's names (BaseMetastoreTableOperations, hive_metastoreConstants).
TABLE_TYPE = "table_type"
ICEBERG = "ICEBERG"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
VIRTUAL_VIEW = "VIRTUAL_VIEW"
ICEBERG_VIEW = "ICEBERG-VIEW"  # HiveOperationsBase.ICEBERG_VIEW_TYPE_VALUE, upper-cased as Java writes it
HMS_TABLE_OWNER = "hive.metastore.table.owner"
STORAGE_HANDLER = "storage_handler"
DO_NOT_UPDATE_STATS = "DO_NOT_UPDATE_STATS"
LOCATION = "location"
COMMENT = "comment"
# The storage descriptor HiveTableOperations writes, without and with engine.hive.enabled.
FILE_FORMATS = ("org.apache.hadoop.mapred.FileInputFormat", "org.apache.hadoop.mapred.FileOutputFormat",
                "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe")
HIVE_ENGINE_FORMATS = ("org.apache.iceberg.mr.hive.HiveIcebergInputFormat",
                       "org.apache.iceberg.mr.hive.HiveIcebergOutputFormat",
                       "org.apache.iceberg.mr.hive.HiveIcebergSerDe")
HIVE_STORAGE_HANDLER = "org.apache.iceberg.mr.hive.HiveIcebergStorageHandler"
# The snapshot summary's totals that Java copies into Hive's basic statistics (StatsSetupConst).
STATS = (("total-data-files", "numFiles"), ("total-records", "numRows"), ("total-files-size", "totalSize"))

# Hive's names for Iceberg's primitive types (Java's HiveSchemaUtil). timestamptz is "timestamp", as
# Java writes it with Hive 2 on its class path (Spark's, Trino's); Java writes "timestamp with local
# time zone" only when Hive 3's classes are on its class path (MetastoreUtil.hive3PresentOnClasspath),
# a type a Hive 2 metastore's readers do not know.
HIVE_PRIMITIVES = {"boolean": "boolean", "int": "int", "long": "bigint", "float": "float", "double": "double",
                   "date": "date", "time": "string", "timestamp": "timestamp", "timestamptz": "timestamp",
                   "timestamp_ns": "timestamp", "timestamptz_ns": "timestamp", "string": "string",
                   "uuid": "string", "binary": "binary", "unknown": "void"}


def storage_descriptor(md: TableMetadata, location: str) -> Any:
    """The storage descriptor Java's HiveTableOperations writes for ``md``."""
    input_format, output_format, serde = HIVE_ENGINE_FORMATS if ENGINE_HIVE_ENABLED.read(md.properties) \
        else FILE_FORMATS
    # variant, geometry, geography: no Hive type, a string column as Java would have none
    cols = [FieldSchema(name=f.name, type=hive_type_string(f.field_type, HIVE_PRIMITIVES, "string"), comment=f.doc)
            for f in md.schema.fields]
    return StorageDescriptor(cols=cols, location=location, inputFormat=input_format, outputFormat=output_format,
                             serdeInfo=SerDeInfo(serializationLib=serde))


def set_table_parameters(params: dict[str, str], md: TableMetadata, location: str, previous: str | None,
                         removed: Iterable[str]) -> dict[str, str]:
    """Java's setHmsTableParameters: the table's properties pushed, removed ones dropped, then the
    pointer, the storage handler and the basic statistics."""
    params = dict(params)
    params.update(md.properties)
    for key in removed:
        params.pop(key, None)
    params[TABLE_TYPE] = ICEBERG
    params[METADATA_LOCATION] = location
    if previous:
        params[PREVIOUS_METADATA_LOCATION] = previous
    if ENGINE_HIVE_ENABLED.read(md.properties):
        params[STORAGE_HANDLER] = HIVE_STORAGE_HANDLER
    else:
        params.pop(STORAGE_HANDLER, None)
    snap = md.current_snapshot
    summary = (snap.summary or {}) if snap is not None else {}
    for key, stat in STATS:
        if summary.get(key) is not None:
            params[stat] = str(summary[key])
    return params


def is_iceberg(tbl: Any) -> bool:
    return (tbl.parameters or {}).get(TABLE_TYPE, "").upper() == ICEBERG


def is_iceberg_view(tbl: Any) -> bool:
    """Java's isValidIcebergView: a VIRTUAL_VIEW with table_type iceberg-view (any case)."""
    return (str(tbl.tableType or "").upper() == VIRTUAL_VIEW
            and (tbl.parameters or {}).get(TABLE_TYPE, "").upper() == ICEBERG_VIEW)


def view_table(db: str, name: str, md: ViewMetadata, metadata_location: str) -> Any:
    """The Hive table HiveViewOperations creates for a view: VIRTUAL_VIEW, the view's properties
    (but the owner), uuid, table_type and metadata_location, the current schema's columns, and the
    SQL of the current version (its ``hive`` dialect, else the first) as the view text."""
    version = md.current_version
    sql = version.sql_for("hive") or next((r.sql for r in version.representations if r.is_sql), None)
    params = {k: v for k, v in md.properties.items() if k.lower() != HMS_TABLE_OWNER}
    params.update({"uuid": md.view_uuid, TABLE_TYPE: ICEBERG_VIEW, METADATA_LOCATION: metadata_location})
    cols = [FieldSchema(name=f.name, type=hive_type_string(f.field_type, HIVE_PRIMITIVES, "string"), comment=f.doc)
            for f in md.schema.fields]
    sd = StorageDescriptor(cols=cols, location=md.location, inputFormat=FILE_FORMATS[0], outputFormat=FILE_FORMATS[1],
                           serdeInfo=SerDeInfo(serializationLib=FILE_FORMATS[2], parameters={}))
    now = int(time.time())
    return Table(tableName=name, dbName=db, owner=md.properties.get(HMS_TABLE_OWNER, getpass.getuser()),
                 createTime=now, lastAccessTime=now, retention=2**31 - 1, sd=sd, partitionKeys=[], parameters=params,
                 viewOriginalText=sql, viewExpandedText=sql, tableType=VIRTUAL_VIEW)
