"""Iceberg Java (the oracle, in local Spark) in its own process, driven line by line: a separate
JVM and a separate client of the catalog database, as a Spark job next to icectl would be.

    with JavaSql(warehouse, {"jc": jdbc_uri, "jc2": other_jdbc_uri}) as java:
        java.sql("CREATE NAMESPACE IF NOT EXISTS jc.db")
        rows = java.sql("SELECT id FROM jc.db.t")      # lists of values

Every catalog is Iceberg's JdbcCatalog (`type=jdbc`) on its URI with the warehouse given, caching
off (Spark re-reads the table and sees icectl's commits). Catalogs are initialized lazily, on the
first statement that names them (that is when JdbcCatalog creates its tables if they are
missing). The child reads one JSON request a line on stdin and answers one line `@@ {json}` on
stdout: {"rows": [[...], ...]} or {"error": "..."}.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))


class JavaSql:
    def __init__(self, warehouse: str, catalogs: dict[str, str], *, log: str | None = None):
        self.warehouse, self.catalogs, self.log_path = warehouse, catalogs, log
        self.proc: subprocess.Popen | None = None
        self._lock = threading.Lock()

    def __enter__(self) -> "JavaSql":
        env = dict(os.environ)
        env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
        env.setdefault("PYSPARK_PYTHON", sys.executable)
        log = open(self.log_path, "w") if self.log_path else subprocess.DEVNULL
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), self.warehouse,
                                      json.dumps(self.catalogs)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=log, text=True, env=env)
        self._read()  # "ready" once the session is up
        return self

    def _read(self) -> dict:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("@@ "):
                return json.loads(line[3:])
        raise RuntimeError(f"the Java process ended (exit {self.proc.wait()}); see {self.log_path}")

    def request(self, sql: str) -> dict:
        assert self.proc is not None and self.proc.stdin is not None
        with self._lock:
            self.proc.stdin.write(json.dumps({"sql": sql}) + "\n")
            self.proc.stdin.flush()
            return self._read()

    def sql(self, sql: str) -> list[list]:
        answer = self.request(sql)
        if "error" in answer:
            raise RuntimeError(f"{sql}: {answer['error']}")
        return answer["rows"]

    def __exit__(self, *exc) -> None:
        if self.proc is None:
            return
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def _serve(warehouse: str, catalogs: dict[str, str]) -> None:
    repo = os.path.dirname(os.path.dirname(HERE))
    oracle_dir = os.environ.get("ICECTL_ORACLE_DIR") or os.path.normpath(os.path.join(repo, "..", "shared", "oracle"))
    sys.path.insert(0, oracle_dir)
    import iceberg_java

    first, *others = catalogs.items()
    conf = {"spark.sql.session.timeZone": "UTC", "spark.driver.host": "127.0.0.1",
            "spark.driver.bindAddress": "127.0.0.1", "spark.sql.catalog.jc.cache-enabled": "false"}
    for name, uri in others:
        conf.update({f"spark.sql.catalog.{name}": "org.apache.iceberg.spark.SparkCatalog",
                     f"spark.sql.catalog.{name}.type": "jdbc", f"spark.sql.catalog.{name}.uri": uri,
                     f"spark.sql.catalog.{name}.warehouse": warehouse,
                     f"spark.sql.catalog.{name}.cache-enabled": "false"})
    assert first[0] == "jc", "the first catalog is the oracle's jc"
    spark = iceberg_java.session(warehouse, jdbc_uri=first[1], extra_conf=conf)
    print("@@ " + json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            rows = [list(r) for r in spark.sql(request["sql"]).collect()]
            answer = {"rows": rows}
        except Exception as e:  # reported to the test, which decides
            answer = {"error": " ".join(str(e).split())[:2000]}
        print("@@ " + json.dumps(answer, default=str), flush=True)
    spark.stop()


if __name__ == "__main__":
    _serve(sys.argv[1], json.loads(sys.argv[2]))
