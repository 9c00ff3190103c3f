"""Running a compaction: write the plan file, run the Spark job through spark-submit, read back
the files it wrote, commit (re-validating on conflict), and remove the job's files when
anything fails, so a failed run leaves nothing behind and commits nothing."""
from __future__ import annotations

import os
import re
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable, TypeVar

from icectl.ops.compaction import CompactionPlan, CompactOptions, FileGroup, build_replace, job_plan, output_data_files
from icectl.formats.manifest import DataFile
from icectl.spec.properties import COMMIT_NUM_RETRIES
from icectl.table.transaction import Transaction
from icectl.table.loaded import Table
from icectl.io import join
from icectl.io.safety import table_guard
from icectl.errors import CommitStateUnknownError, ExternalCommandError, IcectlError, NotFoundError, UsageError
from icectl.spark import protocol
from icectl.spark.protocol import NdvPlan, NdvResult, RewritePlan, RewriteResult, WrittenFile

R = TypeVar("R", RewriteResult, NdvResult)


@dataclass
class JobSettings:
    template_path: str | None = None
    master: str | None = None
    work_dir: str | None = None
    partial_progress: bool = False
    max_commits: int = 10


@dataclass
class CompactionResult:
    plan: CompactionPlan
    command: list[str]
    committed: list[str] = field(default_factory=list)  # metadata locations
    rewritten_data_files: int = 0
    added_data_files: int = 0
    removed_delete_files: int = 0
    rewritten_bytes: int = 0
    added_bytes: int = 0
    failed_groups: list[tuple[int, str]] = field(default_factory=list)
    log_file: str | None = None
    sent: list[dict[str, list]] = field(default_factory=list)  # each commit's requirements and updates


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


def prepare(table: Table, plan: CompactionPlan | None, settings: JobSettings, *, command: str = "compact") -> PreparedJob:
    """Render the spark-submit command for a work folder; nothing is written and nothing runs
    (a dry run shows the command; :func:`run_compaction` creates the folder and its files)."""
    from icectl.spark import environment, submit

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


def _write_job_files(table: Table, plan: CompactionPlan, *, job: PreparedJob) -> None:
    write_job_files(table, job, lambda io_properties: job_plan(table, plan, io_properties=io_properties))


def write_job_files(table: Table, job: PreparedJob,
                    job_plan: Callable[[dict[str, str]], RewritePlan | NdvPlan]) -> None:
    """Write the plan file ``job_plan(io_properties)`` where the job reads it (owner-only locally;
    without credentials on shared storage), and icectl as a zip when the job runs on a cluster."""
    from icectl.spark import submit

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


def run_compaction(table: Table, plan: CompactionPlan, settings: JobSettings, *,
                   progress: Callable[[str], None] | None = None) -> CompactionResult:
    from icectl.spark import environment, submit

    COMMIT_NUM_RETRIES.read(table.metadata.properties)  # a bad value fails before the job, not after it
    job = prepare(table, plan, settings)
    result = CompactionResult(plan, job.argv, log_file=os.path.join(job.work, "spark-submit.log"))
    if not plan.groups:
        result.log_file = None
        return result
    written: list[str] = []
    try:
        try:
            _write_job_files(table, plan, job=job)
            if job.environment is not None and not job.environment.exists:
                if progress:
                    progress(f"packing the executors' Python environment once "
                             f"({', '.join(job.environment.requirements)}) into {job.environment.archive}")
                environment.build(job.environment, log_file=os.path.join(job.work, "environment.log"))
            if progress:
                progress(f"running spark-submit ({len(plan.groups)} groups, {plan.input_files} files)")
            submit.run_command(job.argv, job.template, log_file=result.log_file)
        except ExternalCommandError:
            report = _read_result(table, job)
            written = [f.path for f in report.files] if report else []
            if report and report.error:  # the job's own reason says more than spark-submit's exit code
                raise ExternalCommandError(f"the Spark job failed: {report.error} (log: {result.log_file})") from None
            raise
        report = _read_result(table, job)
        if report is None:
            raise ExternalCommandError(f"the Spark job wrote no result (log: {result.log_file})")
        written = [f.path for f in report.files]
        if report.error:
            raise ExternalCommandError(f"the Spark job failed: {report.error} (log: {result.log_file})")
        by_group: dict[int, list[WrittenFile]] = {}
        for f in report.files:
            by_group.setdefault(f.group_id, []).append(f)
        outputs = {g.group_id: output_data_files(table, g, by_group.get(g.group_id, [])) for g in plan.groups}
        _check_counts(plan.groups, outputs)
        batches = _batches(plan.groups, settings) if settings.partial_progress else [plan.groups]
        current = table
        for batch in batches:
            try:
                done = Transaction(current).commit(
                    lambda txn, b=batch: build_replace(txn, plan, groups=b, outputs=outputs))
                current = done.table
                result.sent.append(done.sent_json())
            except IcectlError as e:
                if not settings.partial_progress or isinstance(e, CommitStateUnknownError):
                    raise  # unknown: the batch may have been committed, so its files stay
                result.failed_groups += [(g.group_id, e.message) for g in batch]
                _remove(table, [f.file_path for g in batch for f in outputs[g.group_id]])
                continue
            result.committed.append(current.metadata_location)
            new_snap = current.metadata.snapshot_by_id(current.metadata.all_refs[plan.branch].snapshot_id)
            s = new_snap.summary if new_snap else {}
            result.rewritten_data_files += int(s.get("deleted-data-files", 0))
            result.added_data_files += int(s.get("added-data-files", 0))
            result.removed_delete_files += int(s.get("removed-delete-files", 0))
            result.rewritten_bytes += sum(t.length for g in batch for t in g.tasks)
            result.added_bytes += sum(f.file_size_in_bytes for g in batch for f in outputs[g.group_id])
        _cleanup_work(table, job, settings, result)
        return result
    except BaseException as e:
        # A commit whose outcome is unknown may have landed: the files it added stay.
        if not result.committed and not isinstance(e, CommitStateUnknownError):
            _remove(table, written)
        # Keep the work folder only when the error names a log in it (spark-submit, or the build
        # of the packed environment, ran).
        if not (isinstance(e, IcectlError) and os.path.join(job.work, "") in e.message):
            _cleanup_work(table, job, settings, result)
        raise


def _cleanup_work(table: Table, job: PreparedJob, settings: JobSettings, result: Any) -> None:
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
        import shutil

        # icectl's own temporary folder (mkdtemp-like, outside the table); rmtree removes a link
        # it finds there as a link, never what it points to.
        shutil.rmtree(job.work, ignore_errors=True)
        result.log_file = None


def _read_result(table: Table, job: PreparedJob, kind: type[R] = RewriteResult) -> R | None:
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


def _check_counts(groups: list[FileGroup], outputs: dict[int, list[DataFile]]) -> None:
    """The job must account for every row: inputs minus deleted rows equals outputs; at least
    the outputs can never hold more rows than the inputs."""
    for g in groups:
        written = sum(f.record_count for f in outputs[g.group_id])
        if written > g.input_records:
            raise ExternalCommandError(f"group {g.group_id}: the job wrote {written} rows from {g.input_records}; "
                                       f"refusing to commit")


def _batches(groups: list[FileGroup], settings: JobSettings) -> list[list[FileGroup]]:
    n = max(1, min(settings.max_commits, len(groups)))
    size = -(-len(groups) // n)
    return [groups[i:i + size] for i in range(0, len(groups), size)]


def _remove(table: Table, paths: list[str]) -> None:
    """Best effort: what a failed job wrote and no commit references (failures are left as orphans),
    each allowed by the table's path guard first."""
    try:
        table.io.delete_many(paths, guard=table_guard(table.io, table.metadata.location))
    except Exception:  # noqa: BLE001 - cleanup never hides the error that led here
        pass


cleanup_work = _cleanup_work
read_result = _read_result
remove_files = _remove

__all__ = ["CompactOptions", "CompactionResult", "JobSettings", "PreparedJob", "cleanup_work", "prepare",
           "read_result", "remove_files", "run_compaction", "shareable_properties", "write_job_files"]
