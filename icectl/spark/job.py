"""The PySpark job that spark-submit runs: ``job.py --plan PLAN.json --result RESULT.json``.

The driver reads the plan (metadata only), spreads its tasks over the executors, and collects
the description of each file written; rows stay in the executors.
"""
from __future__ import annotations

import argparse
import json
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="icectl-spark-job")
    parser.add_argument("--plan", required=True)
    parser.add_argument("--result", required=True)
    args = parser.parse_args(argv)

    from pyspark.sql import SparkSession

    from icectl.spark.rewrite import iter_tasks

    with open(args.plan) as f:
        plan = json.load(f)
    spark = SparkSession.builder.appName(plan.get("app_name", "icectl")).getOrCreate()
    sc = spark.sparkContext
    sc.setLogLevel("WARN")
    tasks = list(iter_tasks(plan))
    plan_light = {k: v for k, v in plan.items() if k != "groups"}

    def run(task):
        from icectl.spark.rewrite import rewrite_task

        # A failed task removes its own files and reports why; the files of the tasks that
        # succeeded are still reported, so that icectl can remove them when the job failed.
        try:
            return rewrite_task(task, plan_light)
        except Exception as e:
            return [{"task_error": f"task {task['task_id']}: {type(e).__name__}: {e}"}]

    files = []
    error = None
    try:
        if tasks:
            out = sc.parallelize(tasks, len(tasks)).flatMap(run).collect()
            files = [f for f in out if "task_error" not in f]
            errors = [f["task_error"] for f in out if "task_error" in f]
            if errors:
                error = errors[0] + (f" (and {len(errors) - 1} more failed tasks)" if len(errors) > 1 else "")
    except Exception as e:  # report, then the caller removes what was written
        error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    finally:
        spark.stop()
    with open(args.result, "w") as f:
        json.dump({"files": files, "error": error}, f)
    return 0 if error is None else 3


if __name__ == "__main__":
    sys.exit(main())
