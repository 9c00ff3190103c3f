"""Fixtures for S3 tests: a real moto S3 server on loopback (no network beyond 127.0.0.1).

Session fixtures:
  moto_s3 -> dict[str, str]
      Storage properties in PyIceberg's names for the server:
      {"s3.endpoint": "http://127.0.0.1:<port>", "s3.access-key-id": "testing",
       "s3.secret-access-key": "testing", "s3.region": "us-east-1"}.
      Bucket ``S3_BUCKET`` exists. While the session runs, the AWS environment variables point at
      fake credentials (no profile, no instance metadata), so nothing can reach real AWS.
  s3_bucket -> str
      The bucket name.

Function fixtures:
  s3_prefix -> str
      A fresh ``s3://<bucket>/<uuid>`` prefix, so tests never see each other's objects.
"""
from __future__ import annotations

import os
import uuid

import pytest

S3_BUCKET = "icectl-test"

_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SECURITY_TOKEN": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}


@pytest.fixture(scope="session")
def moto_s3():
    pytest.importorskip("moto.server")
    boto3 = pytest.importorskip("boto3")
    from moto.server import ThreadedMotoServer

    with pytest.MonkeyPatch.context() as mp:
        for k, v in _AWS_ENV.items():
            mp.setenv(k, v)
        mp.delenv("AWS_PROFILE", raising=False)
        mp.delenv("AWS_ENDPOINT_URL", raising=False)
        mp.delenv("AWS_ENDPOINT_URL_S3", raising=False)
        no_proxy = ",".join(x for x in ("127.0.0.1", "localhost", os.environ.get("NO_PROXY")) if x)
        mp.setenv("NO_PROXY", no_proxy)
        mp.setenv("no_proxy", no_proxy)

        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        try:
            client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                                  aws_access_key_id="testing", aws_secret_access_key="testing")
            client.create_bucket(Bucket=S3_BUCKET)
            yield {
                "s3.endpoint": endpoint,
                "s3.access-key-id": "testing",
                "s3.secret-access-key": "testing",
                "s3.region": "us-east-1",
            }
        finally:
            server.stop()


@pytest.fixture(scope="session")
def s3_bucket(moto_s3) -> str:
    return S3_BUCKET


@pytest.fixture
def s3_prefix(moto_s3) -> str:
    return f"s3://{S3_BUCKET}/{uuid.uuid4().hex}"
