"""Vended credentials: a table whose files are on a moto S3 server that enforces IAM (only one
user's keys can read them), and a catalog that knows no S3 key. The keys come only in the
``config`` of the load-table answer (added by the proxy, as a server that vends credentials
does), configure the table's FileIO, and reach the Spark job of ``compact`` through its plan
file (readable by its owner only)."""
from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import time

import pytest

BUCKET = "vended-bucket"


@pytest.fixture(scope="module")
def iam_s3():
    """A moto S3 server that authenticates requests (after its first 4 unauthenticated actions,
    which make the user, its key, its policy and the bucket)."""
    boto3 = pytest.importorskip("boto3")
    pytest.importorskip("moto.server")
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "4"}
    server = os.path.join(os.path.dirname(os.path.abspath(__file__)), "moto_iam_server.py")
    proc = subprocess.Popen([sys.executable, server, str(port)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        kw = dict(endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="bootstrap",
                  aws_secret_access_key="bootstrap")
        iam = boto3.client("iam", **kw)
        iam.create_user(UserName="table-reader")
        key = iam.create_access_key(UserName="table-reader")["AccessKey"]
        iam.put_user_policy(UserName="table-reader", PolicyName="s3", PolicyDocument=json.dumps(
            {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
        boto3.client("s3", **kw).create_bucket(Bucket=BUCKET)
        yield {"s3.endpoint": endpoint, "s3.region": "us-east-1", "s3.access-key-id": key["AccessKeyId"],
               "s3.secret-access-key": key["SecretAccessKey"], "s3.path-style-access": "true"}
    finally:
        proc.terminate()
        proc.wait(10)


def write_parquet(io, path: str, ids: list[int]):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from icectl.formats.manifest import DataFile

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "1"})])
    buf = pa.BufferOutputStream()
    pq.write_table(pa.table({"id": ids}, schema=schema), buf)
    data = buf.getvalue().to_pybytes()
    io.write(path, data)
    return DataFile(file_path=path, file_format="PARQUET", partition=(), record_count=len(ids),
                    file_size_in_bytes=len(data))


def test_a_table_readable_only_with_vended_credentials(rest_env, proxy, iam_s3, tmp_path, monkeypatch):
    from icectl.table.loaded import load_table
    from helpers import append_files

    for k, v in {"AWS_ACCESS_KEY_ID": "no-such-key", "AWS_SECRET_ACCESS_KEY": "no-such-secret",
                 "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.devnull,
                 "AWS_SHARED_CREDENTIALS_FILE": os.devnull}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("AWS_SESSION_TOKEN", raising=False)
    monkeypatch.delenv("AWS_SECURITY_TOKEN", raising=False)
    keys = ("s3.access-key-id", "s3.secret-access-key")
    proxy.vended = {k: v for k, v in iam_s3.items() if k in keys}
    rest_env.write(uri=proxy.url, **{k: v for k, v in iam_s3.items() if k not in keys})
    cat = rest_env.catalog()
    assert not any(k in cat.properties for k in keys)  # the catalog knows the endpoint, not a key
    cat.create_namespace((rest_env.namespace,))
    location = f"s3://{BUCKET}/{rest_env.namespace}/t"
    code, out, err = rest_env.cli("create", rest_env.table("t"), "--schema", "id:long!", "--location", location,
                                  "--property", f"write.metadata.path={tmp_path / 'metadata'}", "--yes")
    assert code == 0, err
    t = load_table(cat, (rest_env.namespace, "t"))
    assert t.io.properties["s3.access-key-id"] == iam_s3["s3.access-key-id"]
    for i in range(3):
        t = append_files(t, [write_parquet(t.io, f"{location}/data/f{i}.parquet", list(range(i * 10, i * 10 + 10)))])

    code, out, err = rest_env.cli("-o", "json", "files", rest_env.table("t"))
    assert code == 0, err
    assert len(json.loads(out)) == 3
    code, out, err = rest_env.cli("-o", "json", "validate", rest_env.table("t"), "--deep")
    assert code == 0 and json.loads(out)["ok"], out + err
    # The Spark job reads and writes S3 with the vended keys it finds in its plan file.
    code, out, err = rest_env.cli("-o", "json", "compact", rest_env.table("t"), "--rewrite-all", "--yes")
    assert code == 0, err
    assert json.loads(out)["added_data_files"] == 1
    code, out, err = rest_env.cli("-o", "json", "validate", rest_env.table("t"), "--deep")
    assert code == 0 and json.loads(out)["ok"], out + err

    # Without the vended keys the same files cannot be read.
    proxy.vended = None
    code, out, err = rest_env.cli("files", rest_env.table("t"))
    assert code == 10, err
    for text in rest_env.outputs:
        assert iam_s3["s3.secret-access-key"] not in text and iam_s3["s3.access-key-id"] not in text


def test_the_compaction_plan_file_is_readable_by_its_owner_only(rest_env, proxy, tmp_path):
    from icectl.ops.maintain.compact import CompactOptions, plan_compaction
    from icectl.ops.maintain.compact import write_compaction_job_files
    from icectl.ops.spark_job import JobSettings, prepare

    proxy.vended = {"s3.access-key-id": "AKIAVENDED", "s3.secret-access-key": "vended-secret-123"}
    rest_env.write(uri=proxy.url)
    code, out, err = rest_env.cli("demo", rest_env.namespace)
    assert code == 0, err
    from icectl.table.loaded import load_table

    t = load_table(rest_env.catalog(), (rest_env.namespace, "events"))
    plan = plan_compaction(t, CompactOptions())
    job = prepare(t, JobSettings(work_dir=str(tmp_path / "work")))
    write_compaction_job_files(t, plan, job=job)
    work, plan_file = job.work, job.plan_file
    assert stat.S_IMODE(os.stat(plan_file).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(work).st_mode) == 0o700
    with open(plan_file) as f:
        assert json.load(f)["io_properties"]["s3.secret-access-key"] == "vended-secret-123"
