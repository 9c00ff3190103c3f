"""GCS and ADLS without a server: property names as PyIceberg and Java spell them, the error that
names the missing extra, secrets never shown, paths, glob-safe deletes, unreachable stores, and
remove-orphans' scheme rules (Java's DeleteOrphanFiles: only s3a/s3n equal s3 by default)."""
from __future__ import annotations

import io
import sys

import pytest

from icectl import secrets
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import StorageError, UnsupportedError, UsageError
from icectl.io import FileIO
from icectl.io.cloud import adls_fs_path, adls_host, adls_kwargs, batch_rm, gcs_kwargs, remember_secrets
from icectl.ops.maintain.remove_orphans import split_path


def test_gcs_properties_as_pyiceberg_names_them():
    kw = gcs_kwargs({"gcs.project-id": "proj", "gcs.oauth2.token": "ya29.token-value", "gcs.service.host":
                     "http://127.0.0.1:4443/", "gcs.default-bucket-location": "EU", "gcs.version-aware": "true",
                     "gcs.requester-pays": "false"})
    assert kw["project"] == "proj" and kw["token"] == "ya29.token-value" and kw["endpoint_url"] == "http://127.0.0.1:4443"
    assert kw["default_location"] == "EU" and kw["version_aware"] is True and kw["requester_pays"] is False
    assert kw["use_listings_cache"] is False
    assert gcs_kwargs({"gcs.endpoint": "http://h:1"})["endpoint_url"] == "http://h:1"
    assert gcs_kwargs({"gcs.no-auth": "true"})["token"] == "anon"
    with pytest.raises(UsageError, match="gcs.version-aware"):
        gcs_kwargs({"gcs.version-aware": "yes"})
    with pytest.raises(UsageError, match="gcs.service.host"):
        gcs_kwargs({"gcs.service.host": "127.0.0.1:4443"})


def test_adls_properties_as_pyiceberg_and_java_name_them():
    host = "acct.dfs.core.windows.net"
    kw = adls_kwargs({"adls.account-key": "a2V5a2V5a2V5", "adls.tenant-id": "t", "adls.client-id": "c",
                      "adls.client-secret": "client-secret-value", "adls.account-host": "acct.blob.example"}, host)
    assert kw["account_name"] == "acct"  # from the location's host, as PyIceberg does
    assert (kw["account_key"], kw["tenant_id"], kw["client_id"], kw["client_secret"], kw["account_host"]) == \
        ("a2V5a2V5a2V5", "t", "c", "client-secret-value", "acct.blob.example")
    assert adls_kwargs({"adls.account-name": "other"}, host)["account_name"] == "other"
    # Java's per-account SAS token and connection string, and its shared-key names.
    assert adls_kwargs({f"adls.sas-token.{host}": "sv=1&sig=abc"}, host)["sas_token"] == "sv=1&sig=abc"
    assert adls_kwargs({"adls.connection-string.acct": "BlobEndpoint=x"}, host)["connection_string"] == "BlobEndpoint=x"
    java = adls_kwargs({"adls.auth.shared-key.account.name": "jn", "adls.auth.shared-key.account.key": "jk"}, "")
    assert (java["account_name"], java["account_key"]) == ("jn", "jk")


def test_adls_paths():
    p = "abfss://box@acct.dfs.core.windows.net/wh/t/data/f.parquet"
    assert adls_host(p) == "acct.dfs.core.windows.net"
    assert adls_fs_path(p) == "box/wh/t/data/f.parquet"
    assert adls_fs_path("abfs://box/wh/x") == "box/wh/x" and adls_host("abfs://box/wh/x") == ""


def test_secrets_are_registered_and_masked():
    key = "QUNDT1VOVEtFWS1mb3ItdGVzdHM="
    remember_secrets({"adls.connection-string": f"AccountName=a;AccountKey={key};BlobEndpoint=http://h/a",
                      "gcs.oauth2.token": "ya29.a-test-token-value"})
    assert key not in secrets.redact(f"error: {key}") and "ya29.a-test-token-value" not in secrets.redact(
        "token ya29.a-test-token-value")
    shown = secrets.redact_properties({"adls.account-key": "x" * 20, "adls.connection-string": "y" * 20,
                                       "adls.sas-token.acct": "z" * 20, "adls.account-name": "acct"})
    assert shown == {"adls.account-key": "****", "adls.connection-string": "****", "adls.sas-token.acct": "****",
                     "adls.account-name": "acct"}


@pytest.mark.parametrize("path, extra, module", [("gs://b/t/x", "gcs", "gcsfs.core"),
                                                 ("abfss://c@a.dfs.core.windows.net/t/x", "adls", "adlfs")])
def test_missing_package_names_the_extra(monkeypatch, path, extra, module):
    monkeypatch.setitem(sys.modules, module, None)  # import fails as if not installed
    with pytest.raises(UnsupportedError) as e:
        FileIO({}).read(path)
    assert f"icectl[{extra}]" in str(e.value) and f"pip install '.[{extra}]'" in (e.value.hint or "")
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    assert run(["snapshots", path], env) == UnsupportedError.exit_code
    assert f"pip install 'icectl[{extra}]'" in env.stderr.getvalue() and "Traceback" not in env.stderr.getvalue()


def test_unreachable_store_fails_fast_in_one_line():
    pytest.importorskip("gcsfs")
    pytest.importorskip("adlfs")
    fio = FileIO({"gcs.service.host": "http://127.0.0.1:1", "gcs.no-auth": "true"})
    with pytest.raises(StorageError, match="cannot reach the GCS endpoint http://127.0.0.1:1"):
        list(fio.list_files("gs://b/t"))
    fio = FileIO({"adls.connection-string": "AccountName=a;AccountKey=eA==;BlobEndpoint=http://127.0.0.1:1/a;"})
    with pytest.raises(StorageError, match="cannot reach the ADLS endpoint http://127.0.0.1:1"):
        fio.exists("abfss://c@a.dfs.core.windows.net/t/x")


class _RecordingFS:
    def __init__(self, fail_batches: bool = False):
        self.calls: list[tuple[str, object]] = []
        self.fail_batches = fail_batches

    def rm(self, paths, **kw):
        self.calls.append(("rm", list(paths)))
        if self.fail_batches:
            raise RuntimeError("batch refused")

    def rm_file(self, path):
        self.calls.append(("rm_file", path))
        if path.endswith("missing"):
            raise FileNotFoundError(path)
        if path.endswith("denied"):
            raise PermissionError("403 Forbidden")


def test_batch_rm_batches_and_never_globs():
    fs = _RecordingFS()
    names = [f"b/t/f{i}" for i in range(250)] + ["b/t/x=a*/f.parquet", "b/t/[1]"]
    assert batch_rm(fs, names, batch_size=100, in_flight=4) == {}
    batches = [p for k, p in fs.calls if k == "rm"]
    assert sorted(len(b) for b in batches) == [50, 100, 100]
    # A name with glob characters goes alone, through rm_file, never through rm's pattern expansion.
    assert sorted(p for k, p in fs.calls if k == "rm_file") == ["b/t/[1]", "b/t/x=a*/f.parquet"]


def test_batch_rm_reports_each_failure_of_a_failed_call():
    fs = _RecordingFS(fail_batches=True)
    failed = batch_rm(fs, ["b/ok", "b/missing", "b/denied"], batch_size=10)
    assert failed == {"b/missing": "already gone", "b/denied": "PermissionError: 403 Forbidden"}


def test_orphan_scheme_rules_as_java():
    # Java's EQUAL_SCHEMES_DEFAULT is {"s3n,s3a": "s3"}: gs, abfs, abfss, wasb and wasbs stay themselves,
    # so a listed abfss:// file that matches a reachable abfs:// one only by path is a prefix mismatch.
    assert split_path("s3a://b/x")[0] == split_path("s3n://b/x")[0] == "s3"
    for scheme in ("gs", "abfs", "abfss", "wasb", "wasbs"):
        assert split_path(f"{scheme}://c@a.host/t/x") == (scheme, "c@a.host", "/t/x")
    assert split_path("abfs://c@a.dfs.core.windows.net/t/x") != split_path("abfss://c@a.dfs.core.windows.net/t/x")
    assert split_path("abfss://c@a.dfs.core.windows.net/t/x")[2] == split_path("wasbs://c@a.blob.core.windows.net/t/x")[2]


def test_docs_gcs_and_adls_example_maps_to_the_libraries(repo_root):
    import re

    import yaml

    blocks = re.findall(r"```yaml\n(.*?)```", (repo_root / "docs" / "configuration.md").read_text(), re.S)
    example = next(yaml.safe_load(b) for b in blocks if "gs://bucket/warehouse" in b)
    gcs, azure = example["catalog"]["gcs"], example["catalog"]["azure"]
    kw = gcs_kwargs(gcs)
    assert (kw["project"], kw["token"], kw["endpoint_url"], kw["default_location"]) == \
        ("my-project", "ya29.an-access-token", "http://127.0.0.1:4443", "EU")
    kw = adls_kwargs(azure, adls_host(azure["warehouse"]))
    assert (kw["account_name"], kw["account_key"]) == ("account", "base64-shared-key")
    assert FileIO(azure).local_file(azure["warehouse"]) is None  # no file system made for a remote path
