"""The spark-submit command icectl renders from a job template (no Spark runs here): exact
argument lists for the default template, a YARN cluster template, a --master override; template
errors; the icectl zip shipped with --py-files; prepare() as compact runs it."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import zipfile

import pytest

from icectl.errors import ExternalCommandError, UsageError
from icectl.spark import submit

JOB = "/opt/icectl/spark/job.py"
PLAN = "/work/plan.json"
RESULT = "/work/result.json"
TAIL = [JOB, "--plan", PLAN, "--result", RESULT]
DEFAULT_CONF = ["--conf", "spark.driver.bindAddress=127.0.0.1", "--conf", "spark.sql.shuffle.partitions=8",
                "--conf", "spark.ui.enabled=false"]


def render(t, py_files=(), spark_submit="/usr/lib/spark/bin/spark-submit", table="db.events", command="compact"):
    return submit.render_command(t, job_file=JOB, plan_file=PLAN, result_file=RESULT, py_files=list(py_files),
                                 command=command, table=table, spark_submit=spark_submit)


def write(tmp_path, text: str, name: str = "template.yaml") -> str:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return str(p)


def test_default_template():
    t = submit.load_template()
    assert render(t) == [
        "/usr/lib/spark/bin/spark-submit", "--master", "local[*]", "--deploy-mode", "client",
        "--name", "icectl-compact-db.events", "--driver-memory", "1g", *DEFAULT_CONF, *TAIL]
    # without an installed pyspark's spark-submit: the one on PATH
    assert render(t, spark_submit=None)[0] == "spark-submit"
    assert t.timeout_seconds == 86400 and t.env == {} and t.python is None


def test_yarn_cluster_template(tmp_path):
    path = write(tmp_path, """\
        spark_submit: /opt/spark/bin/spark-submit
        master: yarn
        deploy_mode: cluster
        name: "nightly {command} of {table}"
        driver_memory: 4g
        executor_memory: 8g
        executor_cores: 4
        num_executors: 20
        python: /opt/venv/bin/python
        conf:
          spark.yarn.queue: etl
          spark.dynamicAllocation.enabled: false
          spark.executor.memoryOverhead: 2048
        extra_args: ["--packages", "org.apache.hadoop:hadoop-aws:3.3.4", "--verbose"]
        env:
          HADOOP_CONF_DIR: /etc/hadoop/conf
          SPARK_PRINT_LAUNCH_COMMAND: yes
        timeout_seconds: 3600
        """)
    t = submit.load_template(path)
    assert render(t, py_files=["/work/icectl.zip"]) == [
        "/opt/spark/bin/spark-submit", "--master", "yarn", "--deploy-mode", "cluster",
        "--name", "nightly compact of db.events", "--driver-memory", "4g", "--executor-memory", "8g",
        "--executor-cores", "4", "--num-executors", "20",
        "--conf", "spark.dynamicAllocation.enabled=false", "--conf", "spark.executor.memoryOverhead=2048",
        "--conf", "spark.yarn.queue=etl",
        "--py-files", "/work/icectl.zip",
        "--packages", "org.apache.hadoop:hadoop-aws:3.3.4", "--verbose", *TAIL]
    # YAML booleans reach Spark as true/false, not Python's True/False
    assert t.env == {"HADOOP_CONF_DIR": "/etc/hadoop/conf", "SPARK_PRINT_LAUNCH_COMMAND": "true"}
    assert t.python == "/opt/venv/bin/python" and t.timeout_seconds == 3600


def test_partial_template_keeps_defaults(tmp_path):
    """A template names only what it changes; `conf` replaces the default conf as a whole."""
    t = submit.load_template(write(tmp_path, "master: spark://head:7077\nexecutor_memory: 2g\n"))
    assert render(t) == [
        "/usr/lib/spark/bin/spark-submit", "--master", "spark://head:7077", "--deploy-mode", "client",
        "--name", "icectl-compact-db.events", "--driver-memory", "1g", "--executor-memory", "2g",
        *DEFAULT_CONF, *TAIL]
    t = submit.load_template(write(tmp_path, "conf: {spark.executor.instances: 3}\n", "conf.yaml"))
    assert render(t)[7:] == ["--driver-memory", "1g", "--conf", "spark.executor.instances=3", *TAIL]
    # an empty file is the default template
    t = submit.load_template(write(tmp_path, "", "empty.yaml"))
    assert render(t) == render(submit.load_template())


def test_master_override(tmp_path):
    t = submit.load_template(master="k8s://https://kube.example:6443")
    assert render(t)[:5] == ["/usr/lib/spark/bin/spark-submit", "--master", "k8s://https://kube.example:6443",
                             "--deploy-mode", "client"]
    t = submit.load_template(write(tmp_path, "master: yarn\ndeploy_mode: cluster\n"), master="k8s://https://k:443")
    assert render(t, py_files=["/w/icectl.zip", "/w/extra.zip"]) == [
        "/usr/lib/spark/bin/spark-submit", "--master", "k8s://https://k:443", "--deploy-mode", "cluster",
        "--name", "icectl-compact-db.events", "--driver-memory", "1g", *DEFAULT_CONF,
        "--py-files", "/w/icectl.zip,/w/extra.zip", *TAIL]


def test_packed_environment_and_archives(tmp_path):
    """pack_environment ships the archive as ./environment and runs the executors' Python from it;
    in client mode the driver keeps icectl's Python, in cluster mode it runs from the archive too;
    the template's own archives follow; its own conf wins."""
    t = submit.load_template(write(tmp_path, """\
        master: spark://head:7077
        pack_environment: true
        archives: ["hdfs:///libs/geo.tar.gz#geo"]
        """))
    assert t.pack_environment is True and t.archives == ["hdfs:///libs/geo.tar.gz#geo"]
    argv = submit.render_command(t, job_file=JOB, plan_file=PLAN, result_file=RESULT, py_files=["/w/icectl.zip"],
                                 command="compact", table="db.events", spark_submit="/s/spark-submit",
                                 environment="/cache/executor-env-1.tar.gz", driver_python="/usr/bin/python3")
    assert argv == [
        "/s/spark-submit", "--master", "spark://head:7077", "--deploy-mode", "client", "--name",
        "icectl-compact-db.events", "--driver-memory", "1g", "--conf", "spark.driver.bindAddress=127.0.0.1",
        "--conf", "spark.pyspark.driver.python=/usr/bin/python3", "--conf", "spark.pyspark.python=./environment/bin/python",
        "--conf", "spark.sql.shuffle.partitions=8", "--conf", "spark.ui.enabled=false",
        "--py-files", "/w/icectl.zip", "--archives", "/cache/executor-env-1.tar.gz#environment,hdfs:///libs/geo.tar.gz#geo",
        *TAIL]
    t = submit.load_template(write(tmp_path, """\
        master: yarn
        deploy_mode: cluster
        pack_environment: true
        conf: {spark.pyspark.python: ./environment/bin/python3.11}
        """, "cluster.yaml"))
    argv = submit.render_command(t, job_file=JOB, plan_file="s3://b/w/plan.json", result_file="s3://b/w/result.json",
                                 py_files=[], command="compact", table="db.events", environment="/c/e.tar.gz",
                                 driver_python="/usr/bin/python3", job_args=["--io", "s3.endpoint=http://s3:9000"])
    assert argv[argv.index("--conf"):] == [
        "--conf", "spark.pyspark.python=./environment/bin/python3.11", "--archives", "/c/e.tar.gz#environment",
        JOB, "--plan", "s3://b/w/plan.json", "--result", "s3://b/w/result.json", "--io", "s3.endpoint=http://s3:9000"]
    # without pack_environment nothing changes
    assert "--archives" not in render(submit.load_template())


@pytest.mark.parametrize("text, message", [
    ("pack_environment: true\npython: /opt/py/bin/python\n", "pack_environment and python exclude each other"),
    ("pack_environment: sometimes\n", "pack_environment must be true or false"),
])
def test_bad_environment_templates(tmp_path, text, message):
    with pytest.raises(UsageError, match=message):
        submit.load_template(write(tmp_path, text))


def test_executor_requirements_are_pinned_to_what_is_installed():
    from importlib.metadata import version

    from icectl.spark import environment

    plain = environment.requirements(locations=["/warehouse/db/t", ""], driver=False)
    assert plain == tuple(sorted(f"{n}=={version(n)}" for n in ("datasketches", "fsspec", "mmh3", "numpy", "pyarrow", "pyroaring")))
    s3 = environment.requirements(locations=["s3a://bucket/db/t", "hdfs:///tmp/icectl"], driver=True)
    assert set(s3) - set(plain) == {f"s3fs=={version('s3fs')}", f"pandas=={version('pandas')}"}


def test_packed_environment_is_keyed_by_requirements_and_python(tmp_path):
    from icectl.spark import environment

    a = environment.packed_environment(("numpy==1",), cache=str(tmp_path))
    assert a == environment.packed_environment(("numpy==1",), cache=str(tmp_path))
    assert a.archive.startswith(str(tmp_path / "executor-env-")) and a.archive.endswith(".tar.gz")
    assert not a.exists and a.python == sys.executable
    assert environment.packed_environment(("numpy==2",), cache=str(tmp_path)).archive != a.archive
    with pytest.raises(UsageError, match="pack_python '/no/such/python' cannot be run"):
        environment.packed_environment(("numpy==1",), python="/no/such/python", cache=str(tmp_path))


def test_prepare_cluster_deploy_mode_needs_shared_work_dir(tmp_path, monkeypatch):
    """deploy_mode cluster: the plan and result go under the template's work_dir (shared storage),
    written and read through FileIO; the job gets the storage properties that are not
    credentials, and no credential reaches the command line or the shared plan."""
    import json

    from icectl.ops.maintain.compact import CompactOptions, plan_compaction
    from icectl.ops.maintain.compact import write_compaction_job_files
    from icectl.ops.spark_job import JobSettings, prepare, shareable_properties

    monkeypatch.setenv("ICECTL_CACHE_DIR", str(tmp_path / "cache"))
    t = _table(tmp_path)
    plan = plan_compaction(t, CompactOptions())
    cluster = write(tmp_path, "master: yarn\ndeploy_mode: cluster\n", "cluster.yaml")
    with pytest.raises(UsageError, match="deploy_mode cluster runs the driver on the cluster: set work_dir"):
        prepare(t, JobSettings(template_path=cluster))
    packed_local = write(tmp_path, "pack_environment: true\n", "packed-local.yaml")
    with pytest.raises(UsageError, match="pack_environment is for a cluster"):
        prepare(t, JobSettings(template_path=packed_local))
    assert prepare(t, JobSettings(template_path=packed_local, master="yarn")).environment is not None
    shared = tmp_path / "shared"
    tpl = write(tmp_path, f"master: yarn\ndeploy_mode: cluster\nwork_dir: file://{shared}\npack_environment: true\n",
                "shared.yaml")
    t.io.properties.update({"s3.endpoint": "http://minio:9000", "s3.secret-access-key": "SECRET1",
                            "s3.access-key-id": "KEYID", "s3.session-token": "TOKEN", "s3.region": "eu"})
    work = tmp_path / "work"
    job = prepare(t, JobSettings(template_path=tpl, work_dir=str(work)))
    assert job.remote and job.job_dir == f"file://{shared}/work"
    assert job.plan_file == f"file://{shared}/work/plan.json" and job.result_file == f"file://{shared}/work/result.json"
    tail = job.argv[job.argv.index("--plan"):]
    assert tail == ["--plan", job.plan_file, "--result", job.result_file,
                    "--io", "s3.endpoint=http://minio:9000", "--io", "s3.region=eu"]
    assert not [a for a in job.argv if "SECRET1" in a or "KEYID" in a or "TOKEN" in a]
    assert job.environment is not None and "pandas" in " ".join(job.environment.requirements)  # the driver runs from it
    assert f"{job.environment.archive}#environment" in job.argv[job.argv.index("--archives") + 1]
    assert "spark.pyspark.driver.python" not in " ".join(job.argv)
    assert not shared.exists() and not work.exists()  # prepare writes nothing
    write_compaction_job_files(t, plan, job=job)
    written = json.loads((shared / "work" / "plan.json").read_text())
    assert written["io_properties"] == shareable_properties(dict(t.io.properties)) == {
        "s3.endpoint": "http://minio:9000", "s3.region": "eu"}
    assert sorted(os.listdir(work)) == ["icectl.zip"]


def test_arguments_are_never_shell_split(tmp_path):
    t = submit.load_template(write(tmp_path, "conf: {spark.driver.extraJavaOptions: '-Da=1 -Db=$(rm -rf /)'}\n"))
    argv = render(t, table="db.`weird name`; true")
    assert "--conf" in argv and "spark.driver.extraJavaOptions=-Da=1 -Db=$(rm -rf /)" in argv
    assert argv[argv.index("--name") + 1] == "icectl-compact-db.`weird name`; true"


@pytest.mark.parametrize("text, message", [
    ("masterr: yarn\n", "unknown template keys: masterr"),
    ("master: yarn\nqueue: etl\nspark_home: /x\n", "unknown template keys: queue, spark_home"),
    ("deploy_mode: both\n", "deploy_mode must be client or cluster"),
    ("- master\n- yarn\n", "must be a mapping"),
    ("master: [yarn\n", "invalid YAML"),
])
def test_bad_templates(tmp_path, text, message):
    with pytest.raises(UsageError, match=message):
        submit.load_template(write(tmp_path, text))


@pytest.mark.parametrize("text, where", [
    ("master: yarn\nqueue: etl\n", ":2: unknown template keys: queue"),
    ("master: yarn\n\ndeploy_mode: both\n", ":3: deploy_mode must be"),
    ("master: yarn\nconf: [a\n", ":3: invalid YAML"),
])
def test_template_errors_name_the_line(tmp_path, text, where):
    path = write(tmp_path, text)
    with pytest.raises(UsageError) as e:
        submit.load_template(path)
    assert e.value.message.startswith(f"{path}{where}"), e.value.message


def test_missing_template(tmp_path):
    with pytest.raises(UsageError, match="job template not found"):
        submit.load_template(str(tmp_path / "nope.yaml"))


def test_package_zip(tmp_path):
    out = submit.package_zip(str(tmp_path))
    assert out == str(tmp_path / "icectl.zip")
    with zipfile.ZipFile(out) as z:
        names = set(z.namelist())
    for needed in ("icectl/__init__.py", "icectl/errors.py", "icectl/io/__init__.py", "icectl/spark/__init__.py",
                   "icectl/spark/rewrite.py", "icectl/spark/job.py", "icectl/spark/default-template.yaml",
                   "icectl/spark/sort.py", "icectl/spark/metrics.py", "icectl/spark/environment.py",
                   "icectl/spec/types.py", "icectl/spec/conversions.py", "icectl/formats/puffin.py",
                   "icectl/spec/transforms.py", "icectl/formats/manifest.py"):
        assert needed in names, needed
    assert not [n for n in names if n.startswith("icectl/cli/")]  # the CLI stays home
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert all(n.startswith("icectl/") and n.endswith((".py", ".yaml")) for n in names)
    # icectl/catalog is not the CLI: kept
    assert "icectl/catalog/__init__.py" in names


def test_executors_can_run_rewrite_from_the_zip(tmp_path):
    """A Python that imports icectl from the zip alone (as an executor with --py-files does)
    can import the job and the data plane, and never needs icectl.cli."""
    out = submit.package_zip(str(tmp_path))
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {out!r})
        sys.modules.pop("icectl", None)
        import icectl, icectl.spark.rewrite, icectl.spark.job, icectl.spark.sort, icectl.formats.puffin
        import icectl.spec.transforms
        assert icectl.__file__.startswith({out!r}), icectl.__file__
        assert not [m for m in sys.modules if m.startswith("icectl.cli")], sorted(sys.modules)
        print("ok")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=str(tmp_path))
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr


def _table(tmp_path):
    from icectl.catalog.hadoop import HadoopCatalog
    from helpers import create_table
    from icectl.io import FileIO

    return create_table(HadoopCatalog("hc", str(tmp_path / "wh"), FileIO()), ("db", "t"), schema_text="id:long!")


def test_prepare_local_and_cluster(tmp_path):
    """compact's prepare(): the command for a work folder, and nothing written (a dry run leaves
    nothing behind); the job's files are written when it runs: local masters need no zip."""
    import json

    from icectl.ops.maintain.compact import CompactOptions, plan_compaction
    from icectl.ops.maintain.compact import write_compaction_job_files
    from icectl.ops.spark_job import JobSettings, prepare

    t = _table(tmp_path)
    plan = plan_compaction(t, CompactOptions())
    work = tmp_path / "work"
    job = prepare(t, JobSettings(work_dir=str(work)))
    script = os.path.join(os.path.dirname(submit.__file__), "job.py")
    assert job.argv[1:] == ["--master", "local[*]", "--deploy-mode", "client", "--name", "icectl-compact-db.t",
                            "--driver-memory", "1g", *DEFAULT_CONF,
                            script, "--plan", str(work / "plan.json"), "--result", str(work / "result.json")]
    assert job.work == job.job_dir == str(work) and job.result_file == str(work / "result.json")
    assert not job.remote and job.environment is None
    assert not work.exists()
    write_compaction_job_files(t, plan, job=job)
    assert json.loads((work / "plan.json").read_text())["table"] == "db.t"
    assert sorted(os.listdir(work)) == ["plan.json"]
    work2 = tmp_path / "work2"
    job = prepare(t, JobSettings(work_dir=str(work2), master="yarn"))
    assert job.argv[job.argv.index("--py-files") + 1] == str(work2 / "icectl.zip") and not work2.exists()
    write_compaction_job_files(t, plan, job=job)
    assert (work2 / "icectl.zip").exists() and (work2 / "plan.json").exists()
    assert job.argv[2] == "yarn"


def _small_files_table(tmp_path):
    from icectl.formats.manifest import DataFile, FileContent
    from helpers import append_files

    t = _table(tmp_path)
    for i in range(6):
        path = f"{t.location}/data/f{i}.parquet"
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(b"x" * 10)
        t = append_files(t, [DataFile(content=FileContent.DATA, file_path=path, file_format="PARQUET",
                                      partition=(), record_count=1, file_size_in_bytes=10)])
    return t


def test_failed_runs_leave_work_folder_only_when_the_error_names_its_log(tmp_path, monkeypatch):
    """A compaction that fails before Spark starts leaves no work folder in the temp folder; one
    whose spark-submit ran and failed keeps it, and the error names the log in it."""
    import glob
    import tempfile

    from icectl.ops.maintain.compact import CompactOptions, plan_compaction
    from icectl.ops.maintain.compact import run_compaction
    from icectl.ops.spark_job import JobSettings

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    t = _small_files_table(tmp_path)
    plan = plan_compaction(t, CompactOptions())
    assert plan.groups
    missing = tmp_path / "missing.yaml"
    missing.write_text("spark_submit: /no/such/spark-submit\n")
    with pytest.raises(ExternalCommandError, match="spark-submit not found"):
        run_compaction(t, plan, JobSettings(template_path=str(missing)))
    assert os.listdir(tmp) == []
    script = tmp_path / "fail-submit"
    script.write_text("#!/bin/sh\necho 'java.lang.IllegalStateException: boom' >&2\nexit 7\n")
    script.chmod(0o755)
    failing = tmp_path / "failing.yaml"
    failing.write_text(f"spark_submit: {script}\n")
    with pytest.raises(ExternalCommandError) as e:
        run_compaction(t, plan, JobSettings(template_path=str(failing)))
    [work] = glob.glob(str(tmp / "icectl-spark-*"))
    log = os.path.join(work, "spark-submit.log")
    assert f"(log: {log})" in e.value.message and os.path.exists(log)
    assert t.refresh().metadata_location == t.metadata_location  # nothing committed


def test_run_command_errors(tmp_path):
    """A missing spark-submit or a failing one: ExternalCommandError (exit code 9) with the log."""
    t = submit.load_template()
    log = str(tmp_path / "log")
    with pytest.raises(ExternalCommandError, match="spark-submit not found: /no/such/spark-submit") as e:
        submit.run_command(["/no/such/spark-submit", "--version"], t, log_file=log)
    assert e.value.exit_code == 9 and "pip install 'icectl[spark]' (pyspark==3.5.9)" in (e.value.hint or "")
    script = tmp_path / "fake-submit"
    script.write_text("#!/bin/sh\necho 'starting'\necho 'java.lang.IllegalStateException: boom' >&2\nexit 7\n")
    script.chmod(0o755)
    with pytest.raises(ExternalCommandError, match=r"exit code 7: java.lang.IllegalStateException: boom") as e:
        submit.run_command([str(script)], t, log_file=log)
    assert "(log: " + log in e.value.message
    assert open(log).read() == "starting\njava.lang.IllegalStateException: boom\n"
    slow = tmp_path / "slow-submit"
    slow.write_text("#!/bin/sh\nexec sleep 30\n")
    slow.chmod(0o755)
    t.timeout_seconds = 1
    with pytest.raises(ExternalCommandError, match="timed out after 1 s"):
        submit.run_command([str(slow)], t, log_file=log)


def test_run_command_environment(tmp_path):
    t = submit.load_template()
    t.env = {"ICECTL_TEST_VAR": "from-template"}
    t.python = "/opt/py/bin/python3"
    script = tmp_path / "env-submit"
    script.write_text("#!/bin/sh\necho \"$ICECTL_TEST_VAR $PYSPARK_PYTHON $*\"\n")
    script.chmod(0o755)
    log = tmp_path / "log"
    submit.run_command([str(script), "a b", "c"], t, log_file=str(log))
    assert log.read_text() == "from-template /opt/py/bin/python3 a b c\n"
