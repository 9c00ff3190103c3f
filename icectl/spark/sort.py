"""Sort compaction with Spark's sort: a group of any size, whatever the executors' memory.

Executors read the group's input files a batch at a time (:func:`icectl.spark.rewrite.iter_input`:
field ids, deletes, row lineage) and hand the rows to Spark as Arrow (``mapInArrow``); Spark
range-partitions them by the sort order into as many partitions as the group should have output
files and sorts each partition, spilling to disk what does not fit in memory; executors then
write each partition's rows, in order, into Parquet files (:class:`icectl.spark.rewrite.TaskWriter`).

Spark has no type for some Iceberg types (time, nanosecond timestamps, uuid, fixed), so rows
cross Spark in *carrier* types that keep the order and every value: dates as int, times and
timestamps as long, uuid and fixed as binary; they are cast back before they are written.

pyspark and pyarrow are imported inside the functions that use them (the job's driver and
executors): the job imports this module at its top and refuses a plan of another protocol version
without loading pyspark (tests/spark/test_protocol.py).
"""
from __future__ import annotations

import dataclasses
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Iterator

from icectl.io import FileIO
from icectl.spark import protocol
from icectl.spark.protocol import InputFile, RewriteGroup, RewritePlan, RewriteTaskResult, SortField, WrittenFile
from icectl.spark.rewrite import TaskWriter, iter_input, output_schema
from icectl.spec.types import ListType, MapType, PrimitiveType, StructType, schema_from_json

MAX_CONCURRENT_GROUPS = 5  # Iceberg Java's max-concurrent-file-group-rewrites default


def spark_type(t: Any) -> Any:
    """The Spark type that carries an Iceberg type through a sort."""
    from pyspark.sql import types as T

    if isinstance(t, PrimitiveType):
        b = t.base
        simple = {"boolean": T.BooleanType(), "int": T.IntegerType(), "long": T.LongType(), "float": T.FloatType(),
                  "double": T.DoubleType(), "date": T.IntegerType(), "time": T.LongType(),
                  "timestamp": T.LongType(), "timestamptz": T.LongType(), "timestamp_ns": T.LongType(),
                  "timestamptz_ns": T.LongType(), "string": T.StringType(), "binary": T.BinaryType(),
                  "uuid": T.BinaryType(), "fixed": T.BinaryType(), "unknown": T.NullType(),
                  "variant": T.BinaryType(), "geometry": T.BinaryType(), "geography": T.BinaryType()}
        if b in simple:
            return simple[b]
        if b == "decimal":
            return T.DecimalType(t.precision, t.scale)
    if isinstance(t, StructType):
        return T.StructType([T.StructField(f.name, spark_type(f.field_type), True) for f in t.fields])
    if isinstance(t, ListType):
        return T.ArrayType(spark_type(t.element_field.field_type), True)
    if isinstance(t, MapType):
        return T.MapType(spark_type(t.key_field.field_type), spark_type(t.value_field.field_type), True)
    raise ValueError(f"no Spark type carries {t}")


def spark_schema(schema: Any, row_lineage: bool) -> Any:
    """The rows of :func:`icectl.spark.rewrite.output_schema` in carrier types."""
    from pyspark.sql import types as T

    fields = [T.StructField(f.name, spark_type(f.field_type), True) for f in schema.fields]
    if row_lineage:
        fields += [T.StructField("_row_id", T.LongType(), True),
                   T.StructField("_last_updated_sequence_number", T.LongType(), True)]
    return T.StructType(fields)


def carrier_schema(sschema: Any) -> Any:
    """The Arrow schema Spark expects of ``mapInArrow`` batches for a Spark schema."""
    from pyspark.sql.pandas.types import to_arrow_schema

    return to_arrow_schema(sschema)


def to_carrier(table: Any, carrier: Any) -> list[Any]:
    """Output rows (Arrow, Iceberg types) as record batches in carrier types."""
    import pyarrow as pa

    columns = [table.column(i).cast(carrier.field(i).type) for i in range(table.num_columns)]
    return pa.Table.from_arrays(columns, schema=carrier).to_batches()


def from_carrier(batch: Any, target: Any) -> Any:
    """Carrier rows back in the output schema (Iceberg types, field ids)."""
    import pyarrow as pa

    return pa.Table.from_arrays([_restore(batch.column(i), target.field(i).type) for i in range(batch.num_columns)],
                                schema=target)


def _restore(arr: Any, t: Any) -> Any:
    """``arr`` cast to ``t``, nested types rebuilt child by child: Spark gives a required field
    inside a null struct as null, which neither Arrow's cast nor the Parquet writer accept, so
    such slots get a placeholder value (no reader sees it: the struct is null)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    mask = arr.is_null() if arr.null_count else None
    if pa.types.is_struct(t):
        children = []
        for j in range(t.num_fields):
            f = t.field(j)
            child = _restore(arr.field(j), f.type)
            if not f.nullable and child.null_count:
                child = pc.if_else(child.is_valid(), child, _placeholder(f.type))
            children.append(child)
        return pa.StructArray.from_arrays(children, fields=[t.field(j) for j in range(t.num_fields)], mask=mask)
    if pa.types.is_large_list(t) or pa.types.is_list(t):
        values = _restore(arr.values, t.value_type)
        cls, width = (pa.LargeListArray, pa.int64()) if pa.types.is_large_list(t) else (pa.ListArray, pa.int32())
        return cls.from_arrays(arr.offsets.cast(width), values, type=t, mask=mask)
    if pa.types.is_map(t):
        return pa.MapArray.from_arrays(arr.offsets, _restore(arr.keys, t.key_type), _restore(arr.items, t.item_type),
                                       type=t, mask=mask)
    return arr.cast(t)


def _placeholder(t: Any) -> Any:
    """A value of type ``t``: zero, empty, or a struct of such."""
    import pyarrow as pa

    if pa.types.is_struct(t):
        return pa.StructArray.from_arrays([pa.array([_placeholder(t.field(j).type).as_py()], t.field(j).type)
                                           for j in range(t.num_fields)],
                                          fields=[t.field(j) for j in range(t.num_fields)])[0]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        return pa.array([[]], t)[0]
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pa.scalar("", t)
    if pa.types.is_fixed_size_binary(t):
        return pa.scalar(bytes(t.byte_width), t)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return pa.scalar(b"", t)
    if pa.types.is_boolean(t):
        return pa.scalar(False)
    return pa.array([0]).cast(t)[0]


def ordering(df: Any, sort: list[SortField]) -> list[Any]:
    """The Spark sort expressions of a plan's sort fields (direction and null order each)."""
    out = []
    for s in sort:
        col = df[s.column]
        first = s.null_order == "nulls-first"
        if s.direction == "asc":
            out.append(col.asc_nulls_first() if first else col.asc_nulls_last())
        else:
            out.append(col.desc_nulls_first() if first else col.desc_nulls_last())
    return out


def sort_group(spark: Any, group: RewriteGroup, plan: RewritePlan) -> tuple[list[WrittenFile], str | None]:
    """Rewrite one group sorted; returns the files written and the error, if any (the files of a
    partition that failed are removed by its task; those of the others are reported).

    What crosses to the executors is JSON of the protocol (the settings, the task, each input
    file, each partition's result), decoded there with its version checked."""
    inputs = [protocol.dumps(i) for t in group.tasks for i in t.inputs]
    if not inputs:
        return [], None
    schema = schema_from_json(plan.schema)
    row_lineage = plan.row_lineage
    target = output_schema(schema, row_lineage)
    sschema = spark_schema(schema, row_lineage)
    carrier = carrier_schema(sschema)
    settings = protocol.to_json(plan.settings())
    task = protocol.to_json(dataclasses.replace(group.tasks[0], inputs=[]))
    sc = spark.sparkContext

    def read(batches: Iterator[Any]) -> Iterator[Any]:
        io = FileIO(dict(protocol.from_json(RewritePlan, settings).io_properties))
        for b in batches:
            for text in b.column(0).to_pylist():
                inp = protocol.loads(InputFile, text, what="job input file")
                for part in iter_input(io, inp, schema=schema, target=target, row_lineage=row_lineage):
                    yield from to_carrier(part, carrier)

    def write(batches: Iterator[Any]) -> Iterator[Any]:
        import pyarrow as pa

        light = protocol.from_json(RewritePlan, settings)
        this = protocol.from_json(protocol.RewriteTask, task)
        writer = TaskWriter(FileIO(dict(light.io_properties)), this, plan=light, schema=schema, target=target)
        try:
            for b in batches:
                writer.write(from_carrier(b, target))
            result = RewriteTaskResult(this.task_id, files=writer.close())
        except Exception as e:
            writer.abort()
            result = RewriteTaskResult(this.task_id, error=f"group {group.group_id}: {type(e).__name__}: {e}")
        yield pa.RecordBatch.from_pydict({"result": [protocol.dumps(result)]},
                                         schema=pa.schema([("result", pa.string())]))

    n_out = max(1, group.expected_outputs)
    src = spark.createDataFrame(sc.parallelize([(s,) for s in inputs], len(inputs)), "input string")
    rows = src.mapInArrow(read, sschema)
    keys = ordering(rows, plan.sort or [])
    sorted_rows = rows.repartitionByRange(n_out, *keys).sortWithinPartitions(*keys)
    try:
        collected = [protocol.loads(RewriteTaskResult, r["result"])
                     for r in sorted_rows.mapInArrow(write, "result string").collect()]
    except Exception as e:  # a read failed: the write stage never ran, nothing was written
        return [], f"group {group.group_id}: {_task_error(e)}"
    files = [f for r in collected for f in r.files]
    errors = [r.error for r in collected if r.error]
    return files, (errors[0] if errors else None)


def sort_groups(spark: Any, plan: RewritePlan) -> tuple[list[WrittenFile], list[str]]:
    """Every group of a sort plan, up to :data:`MAX_CONCURRENT_GROUPS` Spark jobs at a time."""
    groups = plan.groups
    light = plan.settings()
    if not groups:
        return [], []
    with ThreadPoolExecutor(max_workers=min(MAX_CONCURRENT_GROUPS, len(groups))) as pool:
        results = list(pool.map(lambda g: sort_group(spark, g, light), groups))
    files = [f for fs, _ in results for f in fs]
    errors = [e for _, e in results if e]
    return files, errors


def _task_error(e: BaseException) -> str:
    """The Python exception a failed task raised (its last ``module.SomethingError: ...`` line:
    Spark wraps it in a long message), else the exception's type and first line."""
    text = str(e).strip()
    raised = [m.group(0).strip() for m in re.finditer(r"^\s*[\w.]*(?:Error|Exception)\b.*$", text, re.M)
              if not m.group(0).lstrip().startswith(("org.apache", "java.", "py4j", "at "))]
    if raised:
        return raised[-1][:500]
    return f"{type(e).__name__}: {text.splitlines()[0][:500] if text else ''}"


__all__ = ["from_carrier", "sort_groups", "spark_schema", "to_carrier"]
