"""Render the job template to a spark-submit argument list, and run it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, requires
from typing import Any

import yaml

import icectl
from icectl.errors import ExternalCommandError, UsageError
from icectl.spark.environment import ARCHIVE_ALIAS, EXECUTOR_PYTHON

DEFAULT_TEMPLATE = os.path.join(os.path.dirname(__file__), "default-template.yaml")
_KEYS = {"spark_submit", "master", "deploy_mode", "name", "driver_memory", "executor_memory", "executor_cores",
         "num_executors", "python", "conf", "extra_args", "env", "timeout_seconds", "pack_environment",
         "pack_python", "archives", "work_dir"}


@dataclass
class JobTemplate:
    spark_submit: str | None = None
    master: str = "local[*]"
    deploy_mode: str = "client"
    name: str = "icectl-{command}-{table}"
    driver_memory: str | None = None
    executor_memory: str | None = None
    executor_cores: int | None = None
    num_executors: int | None = None
    python: str | None = None
    conf: dict[str, str] = field(default_factory=dict)
    extra_args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    timeout_seconds: int = 86400
    pack_environment: bool = False  # ship the executors' Python packages with --archives (environment.py)
    pack_python: str | None = None  # the interpreter the packed environment is built from
    archives: list[str] = field(default_factory=list)  # further --archives (e.g. your own env.tar.gz#environment)
    work_dir: str | None = None  # where the plan and result files go; deploy mode cluster: shared storage


def load_template(path: str | None = None, *, master: str | None = None) -> JobTemplate:
    """The job template at ``path`` over the default one; an error names the file, the line and
    the key."""
    path = path or DEFAULT_TEMPLATE
    try:
        with open(path) as f:
            text = f.read()
        data = yaml.safe_load(text) or {}
    except FileNotFoundError:
        raise UsageError(f"job template not found: {path}") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else path
        raise UsageError(f"{where}: invalid YAML: {str(e).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise UsageError(f"{path}: a job template must be a mapping")
    lines = _key_lines(text)

    def at(key: str) -> str:
        return f"{path}:{lines[key]}" if key in lines else path

    unknown = sorted(set(map(str, data)) - _KEYS)
    if unknown:
        raise UsageError(f"{at(unknown[0])}: unknown template keys: {', '.join(unknown)} "
                         f"(keys: {', '.join(sorted(_KEYS))})")
    if path != DEFAULT_TEMPLATE:
        with open(DEFAULT_TEMPLATE) as f:
            base = yaml.safe_load(f)
        base.update({k: v for k, v in data.items() if v is not None or k in ("spark_submit", "python")})
        data = base
    t = JobTemplate(**{k: v for k, v in data.items() if k in _KEYS})
    t.conf = {str(k): _str(v) for k, v in (t.conf or {}).items()}
    t.extra_args = [_str(a) for a in (t.extra_args or [])]
    t.env = {str(k): _str(v) for k, v in (t.env or {}).items()}
    t.archives = [_str(a) for a in (t.archives or [])]
    if not isinstance(t.pack_environment, bool):
        raise UsageError(f"{at('pack_environment')}: pack_environment must be true or false, not "
                         f"{t.pack_environment!r}")
    if t.pack_environment and t.python:
        raise UsageError(f"{path}: pack_environment and python exclude each other: the packed environment "
                         f"brings its own Python ({environment_python()})")
    if master:
        t.master = master
    if t.deploy_mode not in ("client", "cluster"):
        raise UsageError(f"{at('deploy_mode')}: deploy_mode must be client or cluster, not {t.deploy_mode!r}")
    return t


def _key_lines(text: str) -> dict[str, int]:
    """The line of each top-level key of a YAML mapping (for errors that name it)."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return {}
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {str(k.value): k.start_mark.line + 1 for k, _ in node.value if isinstance(k, yaml.ScalarNode)}


def environment_python() -> str:
    return EXECUTOR_PYTHON


def _str(v: Any) -> str:
    """A YAML value as Spark reads it: booleans as true/false (YAML's `false` is Python False)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def spark_requirement() -> str:
    """The pyspark requirement of icectl's ``spark`` extra, as the installed package declares it
    (so a hint names the pinned version, not whatever pyspark is newest)."""
    try:
        for req in requires("icectl") or []:
            if req.startswith("pyspark") and "extra" in req and "spark" in req.split("extra", 1)[1]:
                return req.split(";", 1)[0].strip().replace(" ", "")
    except PackageNotFoundError:
        pass
    return "pyspark==3.5.9"


def default_spark_submit() -> str | None:
    try:
        import pyspark  # the optional spark extra, and heavy: only to find its spark-submit
    except ImportError:
        return shutil.which("spark-submit")
    candidate = os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-submit")
    return candidate if os.path.exists(candidate) else shutil.which("spark-submit")


def render_command(t: JobTemplate, *, job_file: str, plan_file: str, result_file: str, py_files: list[str],
                   command: str, table: str, spark_submit: str | None = None, environment: str | None = None,
                   driver_python: str | None = None, job_args: list[str] | None = None) -> list[str]:
    """The spark-submit argument list (pure: a test compares it with the expected list).

    ``environment``: a packed environment to ship with ``--archives`` (unpacked as
    ``./environment`` beside each executor, and beside the driver in deploy mode cluster), whose
    Python the executors run; in client mode the driver runs ``driver_python`` (icectl's)."""
    exe = t.spark_submit or spark_submit or "spark-submit"
    conf = dict(t.conf)
    archives = list(t.archives)
    if environment:
        archives.insert(0, f"{environment}#{ARCHIVE_ALIAS}")
        conf.setdefault("spark.pyspark.python", EXECUTOR_PYTHON)
        if t.deploy_mode == "client" and driver_python:
            conf.setdefault("spark.pyspark.driver.python", driver_python)
    argv = [exe, "--master", t.master, "--deploy-mode", t.deploy_mode,
            "--name", t.name.format(command=command, table=table)]
    if t.driver_memory:
        argv += ["--driver-memory", str(t.driver_memory)]
    if t.executor_memory:
        argv += ["--executor-memory", str(t.executor_memory)]
    if t.executor_cores:
        argv += ["--executor-cores", str(t.executor_cores)]
    if t.num_executors:
        argv += ["--num-executors", str(t.num_executors)]
    for k, v in sorted(conf.items()):
        argv += ["--conf", f"{k}={v}"]
    if py_files:
        argv += ["--py-files", ",".join(py_files)]
    if archives:
        argv += ["--archives", ",".join(archives)]
    argv += list(t.extra_args)
    argv += [job_file, "--plan", plan_file, "--result", result_file, *(job_args or [])]
    return argv


PACKAGE_ZIP = "icectl.zip"


def package_zip(work_dir: str) -> str:
    """icectl itself as a zip for --py-files, so executors on a cluster can import it."""
    root = os.path.dirname(os.path.abspath(icectl.__file__))
    out = os.path.join(work_dir, PACKAGE_ZIP)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for dirpath, _, files in os.walk(root):
            if "__pycache__" in dirpath or os.sep + "cli" in dirpath[len(root):]:
                continue
            for name in files:
                if name.endswith((".py", ".yaml")):
                    full = os.path.join(dirpath, name)
                    z.write(full, os.path.join("icectl", os.path.relpath(full, root)))
    return out


def run_command(argv: list[str], t: JobTemplate, *, log_file: str) -> None:
    """Run spark-submit as an argument list (never a shell), with the template's timeout."""
    if shutil.which(argv[0]) is None and not os.path.exists(argv[0]):
        raise ExternalCommandError(f"spark-submit not found: {argv[0]}",
                                   hint=f"install icectl's Spark extra: pip install 'icectl[spark]' "
                                        f"({spark_requirement()}); from a checkout: pip install '.[spark]'; or set spark_submit in "
                                        "the job template")
    if t.master.startswith("local") and shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise ExternalCommandError("java not found: Spark needs a Java runtime (e.g. apt-get install openjdk-17-jre-headless)")
    env = dict(os.environ)
    if t.python:
        env["PYSPARK_PYTHON"] = t.python  # the template's choice wins over the environment
    else:
        env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    env.update(t.env)
    with open(log_file, "wb") as log:
        try:
            proc = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, env=env, timeout=t.timeout_seconds,
                                  stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise ExternalCommandError(f"spark-submit timed out after {t.timeout_seconds} s; log: {log_file}") from None
        except OSError as e:
            raise ExternalCommandError(f"cannot run {argv[0]}: {e}") from None
    if proc.returncode != 0:
        tail = _tail(log_file)
        raise ExternalCommandError(f"spark-submit failed with exit code {proc.returncode}: {tail} (log: {log_file})")


def _tail(path: str) -> str:
    try:
        with open(path, errors="replace") as f:
            lines = [line.strip() for line in f if line.strip()]
    except OSError:
        return ""
    errors = [line for line in lines if "Error" in line or "Exception" in line]
    return (errors[-1] if errors else (lines[-1] if lines else ""))[:300]
