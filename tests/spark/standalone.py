"""A Spark standalone cluster on loopback for the tests: a master and workers started as separate
processes with ``spark-class`` from the installed pyspark (``pyspark/bin/spark-class``), each
worker with its own cores, memory and work folder, in an environment with no PYTHONPATH and a
PATH of the system's folders only (so nothing of the test's Python reaches the executors by
accident). ``start()`` returns once every worker has registered with the master (its web UI's
``/json``); ``stop()`` ends the processes it started, by process group id.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> str:
    import pyspark

    return os.path.dirname(pyspark.__file__)


@dataclass
class StandaloneCluster:
    master_url: str
    web_url: str
    root: str
    worker_dirs: list[str]
    procs: list[subprocess.Popen] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)

    def state(self) -> dict:
        with urllib.request.urlopen(self.web_url + "/json/", timeout=5) as r:
            return json.load(r)

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        deadline = time.time() + 30
        for p in self.procs:
            try:
                p.wait(timeout=max(0.1, deadline - time.time()))
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()

    def tail(self, lines: int = 30) -> str:
        out = []
        for log in self.logs:
            try:
                with open(log, errors="replace") as f:
                    out.append(f"--- {log}\n" + "".join(f.readlines()[-lines:]))
            except OSError:
                pass
        return "\n".join(out)


def node_environment(root: str) -> dict[str, str]:
    """What a node of the cluster has: Java, Spark, a system PATH; no Python packages of ours."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": root, "SPARK_HOME": spark_home(),
           "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": os.path.join(root, "logs"),
           "SPARK_DAEMON_MEMORY": "512m", "LANG": "C.UTF-8"}
    if os.environ.get("JAVA_HOME"):
        env["JAVA_HOME"] = os.environ["JAVA_HOME"]
    return env


def start(root: str, *, workers: int = 2, cores: int = 1, memory: str = "1g", timeout: float = 180) -> StandaloneCluster:
    os.makedirs(root, exist_ok=True)
    spark_class = os.path.join(spark_home(), "bin", "spark-class")
    port, web = _free_port(), _free_port()
    cluster = StandaloneCluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{web}", root, [])
    env = node_environment(root)

    def launch(name: str, argv: list[str]) -> None:
        log = os.path.join(root, f"{name}.log")
        cluster.logs.append(log)
        with open(log, "wb") as out:
            cluster.procs.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                                  env=env, cwd=root, start_new_session=True))

    try:
        launch("master", [spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                          "--port", str(port), "--webui-port", str(web)])
        for i in range(workers):
            work = os.path.join(root, f"worker-{i}")
            os.makedirs(work, exist_ok=True)
            cluster.worker_dirs.append(work)
            launch(f"worker-{i}", [spark_class, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                                   "--port", str(_free_port()), "--webui-port", str(_free_port()),
                                   "--cores", str(cores), "--memory", memory, "--work-dir", work, cluster.master_url])
        deadline = time.time() + timeout
        while True:
            dead = [p for p in cluster.procs if p.poll() is not None]
            if dead:
                raise RuntimeError(f"a Spark daemon exited with {dead[0].returncode}:\n{cluster.tail()}")
            try:
                state = cluster.state()
                if state.get("status") == "ALIVE" and int(state.get("aliveworkers", 0)) == workers:
                    return cluster
            except OSError:
                pass
            if time.time() > deadline:
                raise RuntimeError(f"the workers did not register within {timeout} s:\n{cluster.tail()}")
            time.sleep(0.5)
    except BaseException:
        cluster.stop()
        raise
