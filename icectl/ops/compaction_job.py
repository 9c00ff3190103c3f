"""Running a compaction: write the plan file, run the Spark job through spark-submit, read back
the files it wrote, commit (re-validating on conflict), and remove the job's files when
anything fails, so a failed run leaves nothing behind and commits nothing."""
from __future__ import annotations

import json
import os
import tempfile
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

from icectl.ops.compaction import CompactionPlan, CompactOptions, FileGroup, build_replace, job_plan, output_data_files
from icectl.formats.manifest import DataFile
from icectl.table.commit import commit_table
from icectl.table.loaded import Table
from icectl.errors import ExternalCommandError, IcectlError


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


def prepare(table: Table, plan: CompactionPlan, settings: JobSettings, *, command: str = "compact"):
    """Render the spark-submit command for a work folder; nothing is written and nothing runs
    (a dry run shows the command; :func:`run_compaction` creates the folder and its files)."""
    from icectl.spark import submit

    work = settings.work_dir or os.path.join(tempfile.gettempdir(), f"icectl-spark-{uuid.uuid4().hex[:12]}")
    template = submit.load_template(settings.template_path, master=settings.master)
    plan_file = os.path.join(work, "plan.json")
    result_file = os.path.join(work, "result.json")
    py_files = [os.path.join(work, submit.PACKAGE_ZIP)] if not template.master.startswith("local") else []
    argv = submit.render_command(template, job_file=os.path.join(os.path.dirname(submit.__file__), "job.py"),
                                 plan_file=plan_file, result_file=result_file, py_files=py_files,
                                 command=command, table=table.name, spark_submit=submit.default_spark_submit())
    return template, argv, work, result_file


def _write_job_files(table: Table, plan: CompactionPlan, *, template: Any, work: str) -> None:
    from icectl.spark import submit

    os.makedirs(work, mode=0o700, exist_ok=True)
    # The plan carries the table's storage properties (keys, vended credentials): owner only.
    fd = os.open(os.path.join(work, "plan.json"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(job_plan(table, plan, io_properties=dict(table.io.properties)), f)
    if not template.master.startswith("local"):
        submit.package_zip(work)


def run_compaction(table: Table, plan: CompactionPlan, settings: JobSettings, *,
                   progress: Callable[[str], None] | None = None) -> CompactionResult:
    from icectl.spark import submit

    template, argv, work, result_file = prepare(table, plan, settings)
    result = CompactionResult(plan, argv, log_file=os.path.join(work, "spark-submit.log"))
    if not plan.groups:
        result.log_file = None
        return result
    if progress:
        progress(f"running spark-submit ({len(plan.groups)} groups, {plan.input_files} files)")
    written: list[str] = []
    try:
        try:
            _write_job_files(table, plan, template=template, work=work)
            submit.run_command(argv, template, log_file=result.log_file)
        except ExternalCommandError:
            report = _read_result(result_file)
            written = [f["path"] for f in report.get("files", [])]
            if report.get("error"):  # the job's own reason says more than spark-submit's exit code
                raise ExternalCommandError(f"the Spark job failed: {report['error']} (log: {result.log_file})") from None
            raise
        report = _read_result(result_file)
        written = [f["path"] for f in report.get("files", [])]
        if report.get("error"):
            raise ExternalCommandError(f"the Spark job failed: {report['error']} (log: {result.log_file})")
        by_group: dict[int, list[dict[str, Any]]] = {}
        for f in report["files"]:
            by_group.setdefault(int(f["group_id"]), []).append(f)
        outputs = {g.group_id: output_data_files(table, g, by_group.get(g.group_id, [])) for g in plan.groups}
        _check_counts(plan.groups, outputs)
        batches = _batches(plan.groups, settings) if settings.partial_progress else [plan.groups]
        current = table
        for batch in batches:
            try:
                done = commit_table(current, lambda t, b=batch: build_replace(t, plan, groups=b, outputs=outputs))
                current = done.table
                result.sent.append(done.sent_json())
            except IcectlError as e:
                if not settings.partial_progress:
                    raise
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
        _cleanup_work(work, settings, result)
        return result
    except BaseException as e:
        if not result.committed:
            _remove(table, written)
        # Keep the work folder only when the error names the log in it (spark-submit ran).
        if not (isinstance(e, IcectlError) and result.log_file and result.log_file in e.message):
            _cleanup_work(work, settings, result)
        raise


def _cleanup_work(work: str, settings: JobSettings, result: CompactionResult) -> None:
    """A run that succeeded needs neither its plan nor its log; a failed run keeps them only
    when its error names the log (``ICECTL_KEEP_WORK`` keeps them always, for debugging)."""
    if settings.work_dir is None and not os.environ.get("ICECTL_KEEP_WORK"):
        import shutil

        shutil.rmtree(work, ignore_errors=True)
        result.log_file = None


def _read_result(path: str) -> dict[str, Any]:
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"files": [], "error": None}


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
    for p in paths:
        try:
            table.io.delete(p)
        except Exception:
            pass


__all__ = ["CompactOptions", "CompactionResult", "JobSettings", "prepare", "run_compaction"]
