"""The PySpark job that spark-submit runs: ``job.py --plan PLAN.json --result RESULT.json [--io K=V]...``.

The driver reads the plan (metadata only) and has the executors rewrite the data; rows stay in
the executors. A bin-pack plan spreads its tasks over the executors (each task reads its input
files a batch at a time and writes files of the target size); a sort plan lets Spark sort each
group (:mod:`icectl.spark.sort`), so a group larger than the executors' memory is spilled, not
held. The result file lists every file written and the first error.

The plan and result may be on shared storage (``hdfs://``, ``s3://``: deploy mode cluster runs
this driver on the cluster), read and written through icectl's FileIO with the storage
properties given by ``--io`` (endpoints and the like; credentials come from the environment).
"""
from __future__ import annotations

import argparse
import sys

from icectl.io import FileIO
from icectl.spark import protocol
from icectl.spark.ndv import merge_task_results
from icectl.spark.protocol import (NdvPlan, NdvResult, NdvTask, NdvTaskResult, RewritePlan, RewriteResult,
                                   RewriteTask, RewriteTaskResult)
from icectl.spark.sort import sort_groups


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="icectl-spark-job")
    parser.add_argument("--plan", required=True)
    parser.add_argument("--result", required=True)
    parser.add_argument("--io", action="append", default=[], metavar="KEY=VALUE",
                        help="a storage property for reading the plan and writing the result")
    args = parser.parse_args(argv)

    io = FileIO(dict(kv.split("=", 1) for kv in args.io))
    text = io.read(args.plan)
    try:
        plan = protocol.load_plan(text)
    except protocol.ProtocolError as e:  # another icectl's plan: say so in the result, start no Spark
        io.write(args.result, protocol.dumps(protocol.failed_result(text, e.message)).encode(), overwrite=True)
        return 3

    from pyspark.sql import SparkSession  # only the job's driver imports pyspark

    spark = SparkSession.builder.appName(plan.app_name).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    if isinstance(plan, NdvPlan):
        report = _ndv_job(spark, plan)
    else:
        report = _rewrite_job(spark, plan)
    io.write(args.result, protocol.dumps(report).encode(), overwrite=True)
    return 0 if report.error is None else 3


def _rewrite_job(spark, plan: RewritePlan) -> RewriteResult:
    """compact, rewrite-deletes: each task rewrites its files (a sort plan: Spark sorts each group)."""
    settings = protocol.to_json(plan.settings())

    def run(task_json: dict) -> list[dict]:
        # A failed task removes its own files and reports why; the files of the tasks that
        # succeeded are still reported, so that icectl can remove them when the job failed.
        task_id = task_json.get("task_id")
        try:
            # Imported here, in the executor, inside the try: an executor's Python without
            # pyarrow (no packed environment) is then this task's reported error, not a
            # Py4JJavaError from unpickling a module-level reference.
            from icectl.spark.rewrite import rewrite_task

            task = protocol.from_json(RewriteTask, task_json)
            result = RewriteTaskResult(task.task_id, files=rewrite_task(task, protocol.from_json(RewritePlan, settings)))
        except Exception as e:
            result = RewriteTaskResult(str(task_id), error=f"task {task_id}: {type(e).__name__}: {e}")
        return [protocol.to_json(result)]

    files = []
    errors: list[str] = []
    try:
        if plan.sort:
            files, errors = sort_groups(spark, plan)
        else:
            tasks = [protocol.to_json(t) for t in plan.all_tasks()]
            if tasks:
                out = [protocol.from_json(RewriteTaskResult, r)
                       for r in spark.sparkContext.parallelize(tasks, len(tasks)).flatMap(run).collect()]
                files = [f for r in out for f in r.files]
                errors = [r.error for r in out if r.error]
    except Exception as e:  # report, then the caller removes what was written
        errors.append(_first_line(e))
    finally:
        spark.stop()
    return RewriteResult(files=list(files), error=_first_error(errors))


def _ndv_job(spark, plan: NdvPlan) -> NdvResult:
    """compute-stats: each task sketches its files' column values; the driver unites the sketches."""
    settings = protocol.to_json(plan.settings())

    def run(task_json: dict) -> list[dict]:
        task_id = task_json.get("task_id")
        try:
            from icectl.spark.ndv import sketch_task  # in the executor, inside the try: as in _rewrite_job

            result = sketch_task(protocol.from_json(NdvTask, task_json), protocol.from_json(NdvPlan, settings))
        except Exception as e:
            result = NdvTaskResult(str(task_id), error=f"task {task_id}: {type(e).__name__}: {e}")
        return [protocol.to_json(result)]

    try:
        tasks = [protocol.to_json(t) for t in plan.tasks]
        out = [protocol.from_json(NdvTaskResult, r)
               for r in spark.sparkContext.parallelize(tasks, len(tasks)).flatMap(run).collect()] if tasks else []
        errors = [r.error for r in out if r.error]
        if errors:
            return NdvResult(error=_first_error(errors))
        return merge_task_results(out, [c.field_id for c in plan.columns])
    except Exception as e:
        return NdvResult(error=_first_line(e))
    finally:
        spark.stop()


def _first_error(errors: list[str]) -> str | None:
    if not errors:
        return None
    return errors[0] + (f" (and {len(errors) - 1} more failed tasks)" if len(errors) > 1 else "")


def _first_line(e: Exception) -> str:
    return f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"


if __name__ == "__main__":
    sys.exit(main())
