"""The spark-submit runner every Spark-backed command shares (compact, rewrite-deletes, compute-stats):
render the command for a work folder, write the job's plan file, read the job's result back, and
remove the work folder and what a failed job wrote."""
from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import uuid
from dataclasses import dataclass
from typing import Any, Callable, TypeVar

from icectl.table.loaded import Table
from icectl.io import join
from icectl.io.safety import table_guard
from icectl.errors import IcectlError, NotFoundError, UsageError, install_hint
from icectl.spark import environment, protocol, submit
from icectl.spark.protocol import NdvPlan, NdvResult, RewritePlan, RewriteResult

R = TypeVar("R", RewriteResult, NdvResult)


@dataclass
class JobSettings:
    template_path: str | None = None
    master: str | None = None
    work_dir: str | None = None
    partial_progress: bool = False
    max_commits: int = 10


@dataclass
class PreparedJob:
    """A rendered job: the command, the local work folder (log, icectl.zip), the folder of the
    plan and result files (the work folder, or a run folder under the template's ``work_dir``
    on storage a driver in the cluster can reach), and the packed environment it ships."""

    template: Any
    argv: list[str]
    work: str
    job_dir: str
    plan_file: str
    result_file: str
    environment: Any = None  # icectl.spark.environment.PackedEnvironment

    @property
    def remote(self) -> bool:
        return self.job_dir != self.work


_STORAGE = ("s3.", "client.", "gcs.", "adls.", "hdfs.")
_SECRET = re.compile(r"secret|token|password|credential|access-key-id|sas|account-key", re.IGNORECASE)


def shareable_properties(properties: dict[str, str]) -> dict[str, str]:
    """The storage properties (``s3.endpoint``, ``s3.region``...) without credentials: what may go
    to a shared work folder or on the command line. Catalog properties (a URI may hold a
    password) stay home; the job's driver and executors take credentials from their environment."""
    return {k: v for k, v in properties.items() if k.startswith(_STORAGE) and not _SECRET.search(k)}


def missing_engine(settings: JobSettings) -> str | None:
    """Why a Spark job cannot start here (no spark-submit, or no Java for a local master), or None.
    Checked before anything is committed, by the commands that run a job among other steps."""
    template = submit.load_template(settings.template_path, master=settings.master)
    exe = template.spark_submit or submit.default_spark_submit() or "spark-submit"
    if shutil.which(exe) is None and not os.path.exists(exe):
        return (f"spark-submit not found: {exe} (install icectl's Spark extra: "
                f"{install_hint('spark')}, or set spark_submit in the job template)")
    if template.master.startswith("local") and shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        return "java not found: Spark needs a Java runtime (e.g. apt-get install openjdk-17-jre-headless)"
    return None


def prepare(table: Table, settings: JobSettings, *, command: str = "compact") -> PreparedJob:
    """Render the spark-submit command for a work folder; nothing is written and nothing runs
    (a dry run shows the command; the command's run creates the folder and its files)."""
    work = settings.work_dir or os.path.join(tempfile.gettempdir(), f"icectl-spark-{uuid.uuid4().hex[:12]}")
    template = submit.load_template(settings.template_path, master=settings.master)
    if template.deploy_mode == "cluster" and not template.work_dir:
        raise UsageError("deploy_mode cluster runs the driver on the cluster: set work_dir in the job template to "
                         "a folder it can reach (e.g. hdfs:///tmp/icectl or s3://bucket/icectl-work)")
    job_dir = join(template.work_dir, os.path.basename(work.rstrip("/"))) if template.work_dir else work
    plan_file, result_file = join(job_dir, "plan.json"), join(job_dir, "result.json")
    job_args = []
    if job_dir != work:  # the job reads and writes them through FileIO: endpoints, never credentials
        job_args = [a for k, v in sorted(shareable_properties(dict(table.io.properties)).items())
                    for a in ("--io", f"{k}={v}")]
    env = None
    if template.pack_environment and template.master.startswith("local"):
        raise UsageError("pack_environment is for a cluster: a local master runs this Python, which has the "
                         "packages already (use --master or the template's master)")
    if template.pack_environment:
        reqs = environment.requirements(locations=[table.metadata.location or "", template.work_dir or ""],
                                        driver=template.deploy_mode == "cluster")
        env = environment.packed_environment(reqs, python=template.pack_python)
    py_files = [os.path.join(work, submit.PACKAGE_ZIP)] if not template.master.startswith("local") else []
    argv = submit.render_command(template, job_file=os.path.join(os.path.dirname(submit.__file__), "job.py"),
                                 plan_file=plan_file, result_file=result_file, py_files=py_files,
                                 command=command, table=table.name, spark_submit=submit.default_spark_submit(),
                                 environment=env.archive if env else None, driver_python=sys.executable,
                                 job_args=job_args)
    return PreparedJob(template, argv, work, job_dir, plan_file, result_file, env)


def write_job_files(table: Table, job: PreparedJob,
                    job_plan: Callable[[dict[str, str]], RewritePlan | NdvPlan]) -> None:
    """Write the plan file ``job_plan(io_properties)`` where the job reads it (owner-only locally;
    without credentials on shared storage), and icectl as a zip when the job runs on a cluster."""
    os.makedirs(job.work, mode=0o700, exist_ok=True)
    io_properties = dict(table.io.properties)
    if job.remote:  # no credentials on shared storage
        io_properties = shareable_properties(io_properties)
    data = protocol.dumps(job_plan(io_properties)).encode()
    if job.remote:
        table.io.write(job.plan_file, data, overwrite=True)
    else:
        # The plan carries the table's storage properties (keys, vended credentials): owner only.
        fd = os.open(job.plan_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
    if not job.template.master.startswith("local"):
        submit.package_zip(job.work)


def cleanup_work(table: Table, job: PreparedJob, settings: JobSettings, result: Any) -> None:
    """A run that succeeded needs neither its plan nor its log; a failed run keeps them only
    when its error names the log (``ICECTL_KEEP_WORK`` keeps them always, for debugging)."""
    if os.environ.get("ICECTL_KEEP_WORK"):
        return
    if job.remote:
        # The job's own files under the template's work_dir, not the table's.
        for own in (job.plan_file, job.result_file):
            try:
                table.io.delete_own_file(own)
            except (IcectlError, OSError):
                pass
    if settings.work_dir is None:
        # icectl's own temporary folder (mkdtemp-like, outside the table); rmtree removes a link
        # it finds there as a link, never what it points to.
        shutil.rmtree(job.work, ignore_errors=True)
        result.log_file = None


def read_result(table: Table, job: PreparedJob, kind: type[R] = RewriteResult) -> R | None:
    """The job's report (files written, error), read where the job's driver wrote it; None when
    it wrote none. A report of another protocol version or a malformed one is an error."""
    try:
        if job.remote:
            text = table.io.read(job.result_file)
        else:
            with open(job.result_file, "rb") as f:
                text = f.read()
    except (OSError, NotFoundError):
        return None
    return protocol.loads(kind, text)


def remove_files(table: Table, paths: list[str]) -> None:
    """Best effort: what a failed job wrote and no commit references (failures are left as orphans),
    each allowed by the table's path guard first."""
    try:
        table.io.delete_many(paths, guard=table_guard(table.io, table.metadata.location))
    except Exception:  # noqa: BLE001 - cleanup never hides the error that led here
        pass

