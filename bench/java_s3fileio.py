"""Iceberg Java's S3FileIO for bench/bench_s3.py: the jar that ships it, fetched and compiled
against at run time, never part of icectl.

No registry this machine reaches ships the AWS SDK for Java v2 under its own name (Maven Central is
not reachable). One PyPI sdist carries a complete copy: ``sagemaker-feature-store-pyspark-3.3``
1.1.3 contains ``deps/jars/sagemaker-feature-store-spark-sdk.jar``, a fat jar with Apache Iceberg
0.14.1 (api, core, aws, spark; git commit 71d918e, tag apache-iceberg-0.14.1) and the AWS SDK for
Java 2.18.32, both relocated under ``smfs.shaded.``. :func:`ensure_classes` downloads that sdist
with ``pip download --no-deps`` (its sha256 pinned), extracts the jar into the cache and compiles
bench/java/S3FileIOBench.java against it; :func:`run` runs it.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "java", "S3FileIOBench.java")
SDIST = "sagemaker-feature-store-pyspark-3.3==1.1.3"
SDIST_SHA256 = "fb8792f706ad5679c8e73dedfca890db64760f7dd8602e9167a8476cf0a41a70"
JAR_MEMBER = "deps/jars/sagemaker-feature-store-spark-sdk.jar"
JAR_SHA256 = "8c92da8d5e30454d65669e5ca65895c0eb189a5bb84a0a1107e4f5816b7c70de"
ICEBERG_VERSION = "0.14.1"


def _sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def ensure_jar(cache: str) -> str:
    """The fat jar in ``cache``, downloaded (pinned by hash) and extracted on first use."""
    jar = os.path.join(cache, "sagemaker-feature-store-spark-sdk.jar")
    if os.path.exists(jar) and _sha256(jar) == JAR_SHA256:
        return jar
    os.makedirs(cache, exist_ok=True)
    req = os.path.join(cache, "requirements.txt")
    with open(req, "w") as fh:
        fh.write(f"{SDIST} --hash=sha256:{SDIST_SHA256}\n")
    dl = os.path.join(cache, "download")
    subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                    "--require-hashes", "-r", req, "-d", dl, "-q"], check=True)
    sdist = next(os.path.join(dl, f) for f in os.listdir(dl) if f.endswith(".tar.gz"))
    with tarfile.open(sdist) as tf:
        member = next(m for m in tf.getmembers() if m.name.endswith(JAR_MEMBER))
        with tf.extractfile(member) as src, open(jar + ".part", "wb") as dst:
            shutil.copyfileobj(src, dst)
    if _sha256(jar + ".part") != JAR_SHA256:
        raise RuntimeError(f"{JAR_MEMBER} in {sdist} does not have the expected sha256")
    os.replace(jar + ".part", jar)
    shutil.rmtree(dl, ignore_errors=True)
    return jar


def ensure_classes(cache: str) -> str:
    """The classpath (jar + compiled bench class), compiling S3FileIOBench.java when it changed."""
    jar = ensure_jar(cache)
    classes = os.path.join(cache, "classes")
    stamp = os.path.join(classes, "source.sha256")
    digest = _sha256(SOURCE)
    if not (os.path.exists(stamp) and open(stamp).read() == digest):
        shutil.rmtree(classes, ignore_errors=True)
        os.makedirs(classes)
        subprocess.run(["javac", "-nowarn", "-cp", jar, "-d", classes, SOURCE], check=True)
        with open(stamp, "w") as fh:
            fh.write(digest)
    return os.pathsep.join([jar, classes])


def s3fileio_props(endpoint: str, *, batch_size: int | None = None) -> list[str]:
    """S3FileIO properties (Iceberg 0.14.1's AwsProperties names) for the proxy; the region comes
    from AWS_REGION (0.14.1's default client factory has no region property)."""
    props = {"s3.endpoint": endpoint, "s3.path-style-access": "true", "s3.access-key-id": "testing",
             "s3.secret-access-key": "testing"}
    if batch_size is not None:
        props["s3.delete.batch-size"] = str(batch_size)
    return [f"{k}={v}" for k, v in props.items()]


def command(classpath: str, op: str, target: str, *, endpoint: str, out: str | None = None,
            batch_size: int | None = None, parallel: int = 0) -> list[str]:
    """The ``java`` command line of one run (``op`` delete: ``target`` is a file of paths; list:
    a prefix, listed locations written to ``out``)."""
    argv = ["java", "-cp", classpath, "S3FileIOBench", op, target]
    if op == "list":
        argv.append(out or os.devnull)
    argv += s3fileio_props(endpoint, batch_size=batch_size)
    if parallel:
        argv += ["--parallel", str(parallel)]
    return argv


def parse(stdout_path: str) -> dict:
    """The JSON line S3FileIOBench printed (the last line that parses; slf4j may print before)."""
    for line in reversed(open(stdout_path).read().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise ValueError(f"no JSON result in {stdout_path}")
