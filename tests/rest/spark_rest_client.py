"""Spark (Iceberg Java 1.10.2) as a client of the REST server, in its own process.

    python spark_rest_client.py ORACLE_DIR URL WAREHOUSE

Starts a local Spark session whose catalog ``rc`` is the REST catalog at URL, prints
``{"ready": true}``, then reads one JSON request per line on stdin (``{"sql": "..."}``) and
answers each with one line: ``{"rows": [[...], ...]}`` or ``{"error": "..."}``. It runs in a
process of its own so that its jars and catalog settings do not depend on another Spark session
the test process may already have.
"""
from __future__ import annotations

import json
import sys


def main() -> int:
    oracle_dir, url, warehouse = sys.argv[1:4]
    sys.path.insert(0, oracle_dir)
    import iceberg_java
    import rest_server

    conf = {**rest_server.spark_conf(url), "spark.sql.session.timeZone": "UTC",
            "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1"}
    spark = iceberg_java.session(warehouse, extra_conf=conf)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            rows = spark.sql(json.loads(line)["sql"]).collect()
            out = {"rows": [[_plain(v) for v in r] for r in rows]}
        except Exception as e:  # reported to the test, which decides
            out = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
        print(json.dumps(out), flush=True)
    spark.stop()
    return 0


def _plain(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


if __name__ == "__main__":
    sys.exit(main())
