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
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="icectl-spark-job")
    parser.add_argument("--plan", required=True)
    parser.add_argument("--result", required=True)
    parser.add_argument("--io", action="append", default=[], metavar="KEY=VALUE",
                        help="a storage property for reading the plan and writing the result")
    args = parser.parse_args(argv)

    from pyspark.sql import SparkSession

    from icectl.io import FileIO
    from icectl.spark.rewrite import iter_tasks

    io = FileIO(dict(kv.split("=", 1) for kv in args.io))
    plan = json.loads(io.read(args.plan))
    spark = SparkSession.builder.appName(plan.get("app_name", "icectl")).getOrCreate()
    sc = spark.sparkContext
    sc.setLogLevel("WARN")
    if plan.get("kind") == "ndv":
        return _ndv_job(spark, io, plan, result=args.result)
    plan_light = {k: v for k, v in plan.items() if k != "groups"}

    def run(task):
        from icectl.spark.rewrite import rewrite_task

        # A failed task removes its own files and reports why; the files of the tasks that
        # succeeded are still reported, so that icectl can remove them when the job failed.
        try:
            return rewrite_task(task, plan_light)
        except Exception as e:
            return [{"task_error": f"task {task['task_id']}: {type(e).__name__}: {e}"}]

    files: list[dict] = []
    errors: list[str] = []
    try:
        if plan.get("sort"):
            from icectl.spark.sort import sort_groups

            files, errors = sort_groups(spark, plan, plan_light)
        else:
            tasks = list(iter_tasks(plan))
            if tasks:
                out = sc.parallelize(tasks, len(tasks)).flatMap(run).collect()
                files = [f for f in out if "task_error" not in f]
                errors = [f["task_error"] for f in out if "task_error" in f]
    except Exception as e:  # report, then the caller removes what was written
        errors.append(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    finally:
        spark.stop()
    error = None
    if errors:
        error = errors[0] + (f" (and {len(errors) - 1} more failed tasks)" if len(errors) > 1 else "")
    io.write(args.result, json.dumps({"files": files, "error": error}).encode(), overwrite=True)
    return 0 if error is None else 3


def _ndv_job(spark, io, plan: dict, *, result: str) -> int:
    """compute-stats: each task sketches its files' column values; the driver unites the sketches."""
    from icectl.spark.ndv import merge_task_results

    light = {k: v for k, v in plan.items() if k != "tasks"}
    field_ids = [str(c["field_id"]) for c in plan["columns"]]

    def run(task):
        from icectl.spark.ndv import sketch_task

        try:
            return [sketch_task(task, light)]
        except Exception as e:
            return [{"task_error": f"task {task['task_id']}: {type(e).__name__}: {e}"}]

    report: dict = {"rows": 0, "sketches": {}, "error": None}
    try:
        tasks = plan["tasks"]
        out = spark.sparkContext.parallelize(tasks, len(tasks)).flatMap(run).collect() if tasks else []
        errors = [o["task_error"] for o in out if "task_error" in o]
        if errors:
            report["error"] = errors[0] + (f" (and {len(errors) - 1} more failed tasks)" if len(errors) > 1 else "")
        else:
            report.update(merge_task_results(out, field_ids))
    except Exception as e:
        report["error"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    finally:
        spark.stop()
    io.write(result, json.dumps(report).encode(), overwrite=True)
    return 0 if report["error"] is None else 3


if __name__ == "__main__":
    sys.exit(main())
