"""The Glue catalog against moto's Glue on loopback (the same moto server as the S3 tests, see
conftest.py), with PyIceberg's Glue catalog as the second writer on the same server.

moto 5 accepts any ``VersionId`` in ``UpdateTable``; AWS refuses one that is not the table's
current version with ``ConcurrentModificationException``. The ``glue_version_check`` fixture adds
that check to moto's server (in this process), so that the optimistic commit is tested as AWS
answers it.
"""
from __future__ import annotations

import io
import json
import pathlib
import re
import shlex
import socket
import sys
import tempfile
import time
import uuid

import botocore.exceptions
import botocore.session
import pytest
import yaml

from icectl.catalog import CatalogConfig, build_catalog
from icectl.catalog.glue import GlueCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import (AlreadyExistsError, ExitCode, NoSuchNamespaceError, NoSuchTableError,
                           UsageError)
from icectl.io import FileIO

pytestmark = pytest.mark.s3

SECRET = "glue-secret-Zq81xk"  # the Glue secret key of the configured catalog; never printed


def cli(args: list[str]) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(args, env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture(scope="session")
def glue_version_check(moto_s3):
    """AWS's rule on moto's server: UpdateTable with a VersionId other than the table's current
    one fails with ConcurrentModificationException."""
    from moto.core.exceptions import JsonRESTError  # moto: the test extra's, imported where the server runs
    from moto.glue.responses import GlueResponse

    original = GlueResponse.update_table

    def update_table(self):  # noqa: ANN001, ANN202 - moto's handler
        version = self.parameters.get("VersionId")
        if version is not None:
            name = self.parameters["TableInput"]["Name"]
            table = self.glue_backend.get_table(self.parameters["DatabaseName"], name)
            if str(table._current_version) != str(version):
                raise JsonRESTError("ConcurrentModificationException",
                                    f"Update table failed due to concurrent modifications (version {version}, "
                                    f"current {table._current_version})")
        return original(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(GlueResponse, "update_table", update_table)
        yield


@pytest.fixture
def glue(moto_s3, s3_prefix, tmp_path, monkeypatch, glue_version_check):
    """(icectl's catalog properties, a fresh database name): ICECTL_CONFIG names catalog ``glue``
    on moto's Glue, warehouse on moto's S3."""
    props = {"type": "glue", "glue.endpoint": moto_s3["s3.endpoint"], "glue.region": "us-east-1",
             "glue.access-key-id": "testing", "glue.secret-access-key": SECRET, "glue.max-retries": "2",
             "warehouse": f"{s3_prefix}/wh", **moto_s3}
    cfg = tmp_path / "icectl.yaml"
    cfg.write_text(yaml.safe_dump({"catalog": {"glue": props}}))
    monkeypatch.setenv("ICECTL_CONFIG", str(cfg))
    return props, f"db_{uuid.uuid4().hex[:10]}"


def pyiceberg_catalog(props: dict[str, str]):
    from pyiceberg.catalog.glue import GlueCatalog as PyGlue  # PyIceberg and boto3: the second client only

    # glue.max-retries left out: PyIceberg 0.12 hands the text to botocore, which wants a number.
    # py-io-impl: PyIceberg's fsspec FileIO (s3fs): pyarrow's S3 client fails moto's multipart
    # upload completion ("error embedded in a 200 OK response").
    return PyGlue("glue", **{k: v for k, v in props.items() if k not in ("type", "glue.max-retries")},
                  **{"py-io-impl": "pyiceberg.io.fsspec.FsspecFileIO"})


def glue_client(props: dict[str, str]):
    return botocore.session.Session().create_client(
        "glue", endpoint_url=props["glue.endpoint"], region_name="us-east-1",
        aws_access_key_id="testing", aws_secret_access_key="testing")


def rows(table) -> list[int]:
    return sorted(table.scan().to_arrow().column("id").to_pylist())


def append(table, ids: list[int]) -> None:
    import pyarrow as pa  # heavy: only PyIceberg's appends need it

    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("name", pa.string())])
    table.append(pa.table({"id": ids, "name": [f"n{i}" for i in ids]}, schema=schema))


def ok(args: list[str]) -> str:
    code, out, err = cli(args)
    assert code == 0, (args, out, err)
    return out


def create(db: str, table: str = "t") -> None:
    ok(["-c", "glue", "namespace", "create", db, "--yes"])
    ok(["-c", "glue", "create", f"{db}.{table}", "-s", "id:long!, name:string", "--format-version", "2", "--yes"])


def test_lifecycle_with_pyiceberg(glue):
    """icectl creates a v2 table in Glue; PyIceberg appends; icectl describes, expires, tags,
    rolls back and upgrades to v3; PyIceberg reads the right rows after each."""
    props, db = glue
    create(db)
    raw = glue_client(props).get_table(DatabaseName=db, Name="t")["Table"]
    params = raw["Parameters"]
    assert params["table_type"] == "ICEBERG"
    assert params["metadata_location"].startswith(f"{props['warehouse']}/{db}.db/t/metadata/00000-")
    assert [(c["Name"], c["Type"], c["Parameters"]["iceberg.field.optional"])
            for c in raw["StorageDescriptor"]["Columns"]] == [("id", "bigint", "false"), ("name", "string", "true")]
    assert raw["StorageDescriptor"]["Location"] == f"{props['warehouse']}/{db}.db/t"

    py = pyiceberg_catalog(props)
    t = py.load_table(f"{db}.t")
    assert t.format_version == 2
    append(t, [1, 2])
    append(t, [3])
    append(t, [4, 5])
    t = py.load_table(f"{db}.t")
    s1, s2, s3 = [s.snapshot_id for s in t.snapshots()]
    previous = glue_client(props).get_table(DatabaseName=db, Name="t")["Table"]["Parameters"]
    assert previous["previous_metadata_location"] != previous["metadata_location"]

    out = ok(["-c", "glue", "describe", f"{db}.t"])
    assert str(s3) in out and "glue" in ok(["-c", "glue", "catalogs"])
    assert ok(["-c", "glue", "list", db]).count(f"{db}.t") >= 1 or "t" in ok(["-c", "glue", "list", db])

    ok(["-c", "glue", "expire", f"{db}.t", "--snapshot-id", str(s1), "--yes"])
    t = py.load_table(f"{db}.t")
    assert [s.snapshot_id for s in t.snapshots()] == [s2, s3]
    assert rows(t) == [1, 2, 3, 4, 5]

    ok(["-c", "glue", "tag", "create", f"{db}.t", "v1", "--snapshot", str(s2), "--yes"])
    t = py.load_table(f"{db}.t")
    assert t.metadata.refs["v1"].snapshot_id == s2

    ok(["-c", "glue", "rollback", f"{db}.t", "--to-snapshot", str(s2), "--yes"])
    t = py.load_table(f"{db}.t")
    assert t.current_snapshot().snapshot_id == s2
    assert rows(t) == [1, 2, 3]

    append(t, [6])  # PyIceberg writes on after icectl's commits
    assert rows(py.load_table(f"{db}.t")) == [1, 2, 3, 6]
    assert str(py.load_table(f"{db}.t").current_snapshot().snapshot_id) in ok(["-c", "glue", "describe", f"{db}.t"])

    ok(["-c", "glue", "upgrade-format", f"{db}.t", "--to", "3", "--yes"])
    t = py.load_table(f"{db}.t")  # PyIceberg 0.12 reads v3 tables (and writes only v1 and v2)
    assert t.format_version == 3
    assert rows(t) == [1, 2, 3, 6]
    assert t.metadata.refs["v1"].snapshot_id == s2


def test_concurrent_commit_detected_by_version_id(glue, monkeypatch):
    """PyIceberg commits between icectl's read of the table and its UpdateTable: Glue refuses the
    stale VersionId, the transaction plans again, and both commits are in the table."""
    props, db = glue
    create(db)
    py = pyiceberg_catalog(props)
    append(py.load_table(f"{db}.t"), [1])
    original = GlueCatalog._update_table
    versions: list[str] = []

    def racing_update(self, database, request, version):  # noqa: ANN001, ANN202
        versions.append(version)
        if len(versions) == 1:
            append(py.load_table(f"{db}.t"), [2])  # the other writer wins the race
        return original(self, database, request, version)

    monkeypatch.setattr(GlueCatalog, "_update_table", racing_update)
    ok(["-c", "glue", "properties", f"{db}.t", "set", "owner=icectl", "--yes"])
    assert len(versions) == 2 and versions[0] != versions[1]
    t = py.load_table(f"{db}.t")
    assert t.properties["owner"] == "icectl"
    assert rows(t) == [1, 2]  # PyIceberg's commit is not lost
    assert len(t.snapshots()) == 2


def test_concurrent_commit_every_time_is_a_conflict(glue, monkeypatch):
    props, db = glue
    create(db)
    ok(["-c", "glue", "properties", f"{db}.t", "set", "commit.retry.num-retries=1", "--yes"])
    py = pyiceberg_catalog(props)
    original = GlueCatalog._update_table
    state = {"n": 0}

    def racing_update(self, database, request, version):  # noqa: ANN001, ANN202
        state["n"] += 1
        append(py.load_table(f"{db}.t"), [state["n"]])
        return original(self, database, request, version)

    monkeypatch.setattr(GlueCatalog, "_update_table", racing_update)
    code, out, err = cli(["-c", "glue", "properties", f"{db}.t", "set", "k=v", "--yes"])
    assert code == ExitCode.CONFLICT, (out, err)
    assert "ConcurrentModificationException" in err or "changed since it was read" in err
    assert len(err.strip().splitlines()) <= 2 and "Traceback" not in err
    t = py.load_table(f"{db}.t")
    assert "k" not in t.properties and rows(t) == list(range(1, state["n"] + 1))


def test_namespaces_rename_register_drop(glue):
    props, db = glue
    ok(["-c", "glue", "namespace", "create", db, "-P", "owner=ops", "-P", "location=s3://elsewhere/db", "--yes"])
    code, _, err = cli(["-c", "glue", "namespace", "create", db, "--yes"])
    assert code == ExitCode.CONFLICT and "already exists" in err
    cat = GlueCatalog("glue", props, None)  # type: ignore[arg-type] - namespaces need no file IO
    assert cat.load_namespace_properties((db,)) == {"owner": "ops", "location": "s3://elsewhere/db"}
    change = cat.update_namespace_properties((db,), updates={"team": "x"}, removals=["owner", "nope"])
    assert (change.updated, change.removed, change.missing) == (("team",), ("owner",), ("nope",))
    assert cat.load_namespace_properties((db,)) == {"team": "x", "location": "s3://elsewhere/db"}
    assert (db,) in cat.list_namespaces() and cat.list_namespaces((db,)) == []
    assert cat.default_table_location((db, "x")) == "s3://elsewhere/db/x"
    ok(["-c", "glue", "namespace", "drop", db, "--yes"])

    create(db)
    py = pyiceberg_catalog(props)
    append(py.load_table(f"{db}.t"), [7])
    code, _, err = cli(["-c", "glue", "namespace", "drop", db, "--yes"])
    assert code == ExitCode.CONFLICT and "not empty" in err

    ok(["-c", "glue", "rename", f"{db}.t", f"{db}.u", "--yes"])
    assert rows(py.load_table(f"{db}.u")) == [7]
    code, _, _ = cli(["-c", "glue", "describe", f"{db}.t"])
    assert code == ExitCode.NOT_FOUND

    location = py.load_table(f"{db}.u").metadata_location
    ok(["-c", "glue", "register", f"{db}.r", location, "--yes"])
    assert rows(py.load_table(f"{db}.r")) == [7]
    ok(["-c", "glue", "drop", f"{db}.r", "--yes"])  # the entry only: u's files are shared
    assert rows(py.load_table(f"{db}.u")) == [7]

    # A non-Iceberg Glue table in the database is no table of the catalog.
    glue_client(props).create_table(DatabaseName=db, TableInput={"Name": "hive_t", "Parameters": {}})
    assert cat.list_tables((db,)) == [(db, "u")]
    code, _, err = cli(["-c", "glue", "describe", f"{db}.hive_t"])
    assert code == ExitCode.NOT_FOUND and "not an Iceberg table" in err

    fio = FileIO(dict(props))
    table_dir = py.load_table(f"{db}.u").location()
    assert fio.exists(location)
    ok(["-c", "glue", "drop", f"{db}.u", "--purge", "--yes"])
    assert not fio.exists(location)
    assert cat.list_tables((db,)) == []
    assert table_dir.startswith(props["warehouse"])


def test_restore_replaces_metadata(glue):
    """restore makes an earlier state current through replace_metadata (VersionId-guarded)."""
    props, db = glue
    create(db)
    py = pyiceberg_catalog(props)
    append(py.load_table(f"{db}.t"), [1])
    append(py.load_table(f"{db}.t"), [2])
    ok(["-c", "glue", "expire", f"{db}.t", "--snapshot-id",
        str(py.load_table(f"{db}.t").snapshots()[0].snapshot_id), "--no-delete-files", "--yes"])
    assert len(py.load_table(f"{db}.t").snapshots()) == 1
    ok(["-c", "glue", "restore", f"{db}.t", "--to-version", "1", "--yes"])  # after the first append
    t = py.load_table(f"{db}.t")
    assert rows(t) == [1]
    params = glue_client(props).get_table(DatabaseName=db, Name="t")["Table"]["Parameters"]
    assert params["previous_metadata_location"].split("/")[-1].startswith("00003-")  # the expire's
    assert params["metadata_location"].split("/")[-1].startswith("00004-")
    assert params["metadata_location"] == t.metadata_location


def test_restore_from_a_broken_current_metadata_file(glue):
    """issue 25: the current metadata file truncated; restore finds the previous one (Glue's
    previous_metadata_location among the candidates) and moves the pointer with Glue's VersionId
    guard against the broken file; PyIceberg reads the rows of that version."""
    props, db = glue
    create(db)
    py = pyiceberg_catalog(props)
    append(py.load_table(f"{db}.t"), [1])
    append(py.load_table(f"{db}.t"), [2])
    params = glue_client(props).get_table(DatabaseName=db, Name="t")["Table"]["Parameters"]
    broken, previous = params["metadata_location"], params["previous_metadata_location"]
    t = py.load_table(f"{db}.t")
    with t.io.new_output(broken).create(overwrite=True) as f:
        f.write(b'{"format-version": 2, "table-uu')
    code, _, err = cli(["-c", "glue", "describe", f"{db}.t"])
    assert code == ExitCode.INVALID_METADATA and f"icectl restore {db}.t --dry-run" in err
    code, out, err = cli(["-c", "glue", "-o", "json", "restore", f"{db}.t", "--dry-run"])
    assert code == 0, err
    plan = json.loads(out)
    assert plan["broken"] and plan["restore_from"] == previous
    assert any(c["location"] == previous and c["found_in"] == "catalog previous_metadata_location"
               for c in plan["candidates"])
    assert glue_client(props).get_table(DatabaseName=db, Name="t")["Table"]["Parameters"]["metadata_location"] \
        == broken
    ok(["-c", "glue", "restore", f"{db}.t", "--yes"])
    params = glue_client(props).get_table(DatabaseName=db, Name="t")["Table"]["Parameters"]
    assert params["previous_metadata_location"] == broken and params["metadata_location"] not in (broken, previous)
    assert rows(py.load_table(f"{db}.t")) == [1]
    ok(["-c", "glue", "validate", f"{db}.t"])


def test_errors_are_one_line(glue, monkeypatch, tmp_path):
    props, db = glue
    code, _, err = cli(["-c", "glue", "describe", f"{db}.nope"])
    assert code == ExitCode.NOT_FOUND and len(err.strip().splitlines()) <= 2

    from moto.core.exceptions import JsonRESTError
    from moto.glue.responses import GlueResponse

    def denied(self):  # noqa: ANN001, ANN202
        raise JsonRESTError("AccessDeniedException", "User is not authorized to perform: glue:GetDatabases")

    with monkeypatch.context() as mp:
        mp.setattr(GlueResponse, "get_databases", denied)
        code, out, err = cli(["-c", "glue", "list"])
    assert code == ExitCode.NOT_AUTHORIZED, (out, err)
    assert "AccessDeniedException" in err and "Traceback" not in err

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    down = dict(props, **{"glue.endpoint": f"http://127.0.0.1:{port}"})
    down.pop("glue.max-retries")  # the default 10 attempts: the refused connection still fails fast
    cfg = tmp_path / "down.yaml"
    cfg.write_text(yaml.safe_dump({"catalog": {"glue": down}}))
    monkeypatch.setenv("ICECTL_CONFIG", str(cfg))
    started = time.monotonic()
    code, out, err = cli(["-c", "glue", "list"])
    assert code == ExitCode.STORAGE, (out, err)
    assert time.monotonic() - started < 15
    assert "cannot reach the Glue endpoint" in err and "connection refused" in err
    assert len(err.strip().splitlines()) <= 2 and "Traceback" not in err
    code, out, err = cli(["--verbose", "-o", "json", "-c", "glue", "catalogs"])
    assert code == 0 and SECRET not in out + err and '"glue.secret-access-key": "****"' in out


def test_catalogs_masks_the_secret(glue):
    out = ok(["-c", "glue", "catalogs"])
    assert SECRET not in out and " glue " in out
    report = json.loads(ok(["-o", "json", "-c", "glue", "catalogs"]))
    glue_row = next(c for c in report["catalogs"] if c["name"] == "glue")
    assert glue_row["type"] == "glue" and glue_row["properties"]["glue.secret-access-key"] == "****"
    assert SECRET not in json.dumps(report)
    code, out, err = cli(["--verbose", "-c", "glue", "describe", f"{glue[1]}.missing"])
    assert SECRET not in out + err


@pytest.fixture
def flaky_update(monkeypatch):
    """``flaky_update(behaviour)``: the catalog's botocore client runs ``behaviour(real, kwargs)``
    for each UpdateTable instead of sending it."""
    original = GlueCatalog._make_client

    def install(behaviour):
        def make(self):  # noqa: ANN001, ANN202
            client = original(self)
            real = client.update_table
            client.update_table = lambda **kw: behaviour(real, kw)
            return client

        monkeypatch.setattr(GlueCatalog, "_make_client", make)

    return install


def test_lost_answer_of_a_commit_that_happened(glue, flaky_update):
    """UpdateTable is carried out but its answer is lost: reading the table again shows the
    commit happened, and the command succeeds once."""
    props, db = glue
    create(db)

    def lost_answer(real, kw):  # noqa: ANN001, ANN202
        real(**kw)
        raise botocore.exceptions.ReadTimeoutError(endpoint_url=props["glue.endpoint"])

    flaky_update(lost_answer)
    ok(["-c", "glue", "properties", f"{db}.t", "set", "a=1", "--yes"])
    t = pyiceberg_catalog(props).load_table(f"{db}.t")
    assert t.properties["a"] == "1" and len(t.metadata.metadata_log) == 1


def test_unanswered_commit_is_state_unknown(glue, flaky_update):
    """The connection breaks and the table is unchanged: the request may still arrive, so the
    outcome is unknown (exit 12) and the new metadata file is kept."""
    props, db = glue
    create(db)
    before = pyiceberg_catalog(props).load_table(f"{db}.t").metadata_location

    def broken(real, kw):  # noqa: ANN001, ANN202
        broken.location = kw["TableInput"]["Parameters"]["metadata_location"]
        raise botocore.exceptions.ConnectionClosedError(endpoint_url=props["glue.endpoint"])

    flaky_update(broken)
    code, out, err = cli(["-c", "glue", "properties", f"{db}.t", "set", "a=1", "--yes"])
    assert code == ExitCode.COMMIT_STATE_UNKNOWN, (out, err)
    assert "may or may not have happened" in err and "Traceback" not in err
    assert pyiceberg_catalog(props).load_table(f"{db}.t").metadata_location == before
    assert FileIO(dict(props)).exists(broken.location)


def test_unanswered_commit_overtaken_by_another_writer_is_retried(glue, flaky_update):
    """The connection breaks and another writer has committed since: our VersionId can no longer
    apply, so the commit certainly failed; the transaction plans again and both changes land."""
    props, db = glue
    create(db)
    py = pyiceberg_catalog(props)
    calls = []

    def overtaken(real, kw):  # noqa: ANN001, ANN202
        calls.append(kw["VersionId"])
        if len(calls) == 1:
            append(py.load_table(f"{db}.t"), [9])
            raise botocore.exceptions.ReadTimeoutError(endpoint_url=props["glue.endpoint"])
        return real(**kw)

    flaky_update(overtaken)
    ok(["-c", "glue", "properties", f"{db}.t", "set", "a=1", "--yes"])
    t = py.load_table(f"{db}.t")
    assert len(calls) == 2 and t.properties["a"] == "1" and rows(t) == [9]


def test_catalog_api_edges(glue):
    props, db = glue
    create(db)
    cat = build_catalog(CatalogConfig("glue", dict(props)))
    assert isinstance(cat, GlueCatalog) and cat.list_tables((db,)) == [(db, "t")]
    assert (db, "t") in cat.list_tables(None)
    with pytest.raises(UsageError):
        cat.create_namespace((db, "nested"))
    with pytest.raises(NoSuchNamespaceError):
        cat.list_tables((db + "_missing",))
    with pytest.raises(NoSuchTableError):
        cat.rename_table((db, "missing"), (db, "x"))
    ok(["-c", "glue", "create", f"{db}.t2", "-s", "id:long", "--yes"])
    with pytest.raises(AlreadyExistsError):
        cat.rename_table((db, "t"), (db, "t2"))
    with pytest.raises(NoSuchNamespaceError):
        cat.rename_table((db, "t"), (db + "_missing", "t"))
    loc2 = cat.load((db, "t2")).metadata_location
    with pytest.raises(AlreadyExistsError):
        cat.register_table((db, "t"), loc2)
    state = cat.register_table((db, "t"), loc2, overwrite=True)  # the name now points at t2's file
    assert state.metadata_location == loc2
    params = glue_client(props).get_table(DatabaseName=db, Name="t")["Table"]["Parameters"]
    assert params["metadata_location"] == loc2 and params["previous_metadata_location"] != loc2
    code, _, err = cli(["-c", "glue", "create", f"{db}.t2", "-s", "id:long", "--yes"])
    assert code == ExitCode.CONFLICT and "already exists" in err
    code, _, err = cli(["-c", "glue", "create", f"{db}_missing.t", "-s", "id:long", "--yes"])
    assert code == ExitCode.NOT_FOUND and "does not exist" in err


def test_docs_glue_example_runs(glue, tmp_path, monkeypatch):
    """docs/configuration.md's Glue configuration (endpoint, credentials and warehouse pointed at
    moto) and its commands run as shown."""
    props, _ = glue
    text = (pathlib.Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text()
    section = text.split("\n## Glue catalogs\n", 1)[1].split("\n## ", 1)[0]
    conf = yaml.safe_load(re.search(r"```yaml\n(.*?)```", section, re.S).group(1))
    entry = conf["catalog"]["glue"]
    assert entry["type"] == "glue" and "uri" not in entry
    entry.update({k: v for k, v in props.items() if k.startswith(("glue.endpoint", "glue.access", "glue.secret", "s3."))})
    entry["warehouse"] = props["warehouse"]
    cfg = tmp_path / "readme.yaml"
    cfg.write_text(yaml.safe_dump(conf))
    monkeypatch.setenv("ICECTL_CONFIG", str(cfg))
    commands = re.search(r"```sh\n(.*?)```", section, re.S).group(1).strip().splitlines()
    outs = []
    for line in commands:
        args = shlex.split(line)
        assert args[0] == "icectl"
        outs.append(ok(args[1:]))
    assert "analytics.events" in outs[-1]
    raw = glue_client(props).get_table(DatabaseName="analytics", Name="events")["Table"]
    assert raw["Parameters"]["table_type"] == "ICEBERG"
    assert pyiceberg_catalog(props).load_table("analytics.events").spec().fields[0].name == "ts_day"


def test_no_credentials_is_not_authorized(glue, monkeypatch, tmp_path):
    props, db = glue
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    bare = {k: v for k, v in props.items() if not k.startswith(("glue.access", "glue.secret"))}
    cfg = tmp_path / "bare.yaml"
    cfg.write_text(yaml.safe_dump({"catalog": {"glue": bare}}))
    monkeypatch.setenv("ICECTL_CONFIG", str(cfg))
    code, out, err = cli(["-c", "glue", "list"])
    assert code == ExitCode.NOT_AUTHORIZED, (out, err)
    assert "no AWS credentials" in err and "Traceback" not in err


def test_catalog_id_is_sent_with_every_request(glue):
    """glue.id: every request names that catalog (CatalogId), as PyIceberg's client does."""
    props, db = glue
    cat = GlueCatalog("glue", dict(props, **{"glue.id": "123456789012"}), FileIO(dict(props)))
    seen = []
    cat.client.meta.events.register("before-parameter-build.glue",
                                    lambda params, model, **_: seen.append((model.name, params.get("CatalogId"))))
    cat.create_namespace((db,))
    assert (db,) in cat.list_namespaces()
    assert seen == [("CreateDatabase", "123456789012"), ("GetDatabases", "123456789012")]


def test_format_version_4_table(glue):
    """A v4 table lives in Glue as any other (its files relative to the table location)."""
    props, db = glue
    ok(["-c", "glue", "namespace", "create", db, "--yes"])
    ok(["-c", "glue", "create", f"{db}.v4", "-s", "id:long!", "--format-version", "4", "--yes"])
    ok(["-c", "glue", "properties", f"{db}.v4", "set", "a=1", "--yes"])
    out = ok(["-o", "json", "-c", "glue", "describe", f"{db}.v4"])
    assert json.loads(out)["format_version"] == 4
    raw = glue_client(props).get_table(DatabaseName=db, Name="v4")["Table"]
    assert raw["Parameters"]["a"] == "1" and raw["Parameters"]["previous_metadata_location"]


def test_invalid_input_is_a_usage_error(glue, monkeypatch):
    """Glue's InvalidInputException (moto does not check names: the server raises it here as AWS
    does for a name it does not take) is a usage error, exit 2."""
    from moto.core.exceptions import JsonRESTError  # moto: the test extra's
    from moto.glue.responses import GlueResponse

    def invalid(self):  # noqa: ANN001, ANN202
        raise JsonRESTError("InvalidInputException", "Database name is not valid")

    monkeypatch.setattr(GlueResponse, "create_database", invalid)
    code, out, err = cli(["-c", "glue", "namespace", "create", glue[1], "--yes"])
    assert code == ExitCode.USAGE, (out, err)
    assert "InvalidInputException: Database name is not valid" in err and "Traceback" not in err


def test_expire_with_a_concurrent_append(glue, monkeypatch):
    """PyIceberg appends while icectl expires: the expire's first UpdateTable is refused on the
    stale VersionId, the expire is planned again, and the appended rows are all there."""
    props, db = glue
    create(db)
    py = pyiceberg_catalog(props)
    append(py.load_table(f"{db}.t"), [1])
    append(py.load_table(f"{db}.t"), [2])
    first = py.load_table(f"{db}.t").snapshots()[0].snapshot_id
    original = GlueCatalog._update_table
    versions: list[str] = []

    def racing_update(self, database, request, version):  # noqa: ANN001, ANN202
        versions.append(version)
        if len(versions) == 1:
            append(py.load_table(f"{db}.t"), [3])
        return original(self, database, request, version)

    monkeypatch.setattr(GlueCatalog, "_update_table", racing_update)
    ok(["-c", "glue", "expire", f"{db}.t", "--snapshot-id", str(first), "--yes"])
    assert len(versions) == 2
    t = py.load_table(f"{db}.t")
    assert first not in [s.snapshot_id for s in t.snapshots()] and len(t.snapshots()) == 2
    assert rows(t) == [1, 2, 3]


def test_lost_answer_then_another_commit_on_top(glue, flaky_update):
    """Our UpdateTable is carried out, another writer commits on top, then our answer is lost:
    our file is in the table's history, so the commit happened (a retry would tag twice)."""
    props, db = glue
    create(db)
    py = pyiceberg_catalog(props)
    append(py.load_table(f"{db}.t"), [1])

    def lost_after_other(real, kw):  # noqa: ANN001, ANN202
        real(**kw)
        append(py.load_table(f"{db}.t"), [2])
        raise botocore.exceptions.ReadTimeoutError(endpoint_url=props["glue.endpoint"])

    flaky_update(lost_after_other)
    ok(["-c", "glue", "tag", "create", f"{db}.t", "v1", "--yes"])
    t = py.load_table(f"{db}.t")
    assert "v1" in t.metadata.refs and rows(t) == [1, 2]


def test_retried_update_after_a_lost_answer(glue, flaky_update):
    """botocore sends UpdateTable again after a lost answer; the first had been carried out, so the
    second is refused on its VersionId: the commit happened, once."""
    props, db = glue
    create(db)
    append(pyiceberg_catalog(props).load_table(f"{db}.t"), [1])

    def sent_twice(real, kw):  # noqa: ANN001, ANN202
        real(**kw)
        return real(**kw)  # ConcurrentModificationException: the version is ours now

    flaky_update(sent_twice)
    ok(["-c", "glue", "tag", "create", f"{db}.t", "v1", "--yes"])
    assert "v1" in pyiceberg_catalog(props).load_table(f"{db}.t").metadata.refs


def test_inventory_lists_glue_tables_from_their_parameters(glue):
    """list --all: each database's Iceberg tables from the get_tables pages, read from the metadata
    location their parameters hold; a non-Iceberg Glue table is no table of the catalog, and a
    table whose metadata file is gone is listed with its error."""
    props, db = glue
    create(db)
    ok(["-c", "glue", "create", f"{db}.gone", "-s", "id:long", "--yes"])
    py = pyiceberg_catalog(props)
    append(py.load_table(f"{db}.t"), [7])
    glue_client(props).create_table(DatabaseName=db, TableInput={"Name": "hive_t", "Parameters": {}})
    gone = py.load_table(f"{db}.gone").metadata_location
    glue_table = glue_client(props).get_table(DatabaseName=db, Name="gone")["Table"]
    params = dict(glue_table["Parameters"], metadata_location=gone.replace(".metadata.json", ".missing.json"))
    glue_client(props).update_table(DatabaseName=db, TableInput={"Name": "gone", "Parameters": params,
                                                                 "TableType": glue_table.get("TableType", "")})
    gone = params["metadata_location"]
    code, out, err = cli(["-c", "glue", "-o", "jsonl", "list", "--all"])
    assert code == ExitCode.PARTIAL_FAILURE, err
    mine = sorted((json.loads(line) for line in out.splitlines() if json.loads(line)["namespace"] == db),
                  key=lambda r: r["name"])  # in Glue's order
    assert [r["name"] for r in mine] == [f"{db}.gone", f"{db}.t"]
    t = py.load_table(f"{db}.t")
    assert (mine[1]["metadata_location"], mine[1]["current_snapshot_id"], mine[1]["error"]) == \
        (t.metadata_location, t.metadata.current_snapshot_id, None)
    assert mine[0]["metadata_location"] == gone and mine[0]["error"]["kind"] == "not-found"


@pytest.mark.spark
def test_compact_through_the_spark_job(glue, monkeypatch, tmp_path):
    """icectl compacts a Glue table on S3 with the real Spark job (spark-submit, local[*]): the
    job reads and writes the table's files on moto's S3, icectl commits through Glue (VersionId),
    and PyIceberg reads the same rows from the one new data file."""
    props, db = glue
    monkeypatch.setenv("PYSPARK_PYTHON", sys.executable)
    monkeypatch.setenv("TMPDIR", str(tmp_path))  # the job's local work folder
    monkeypatch.setattr(tempfile, "tempdir", None)
    create(db)
    py = pyiceberg_catalog(props)
    for ids in ([1, 2], [3], [4, 5], [6]):
        append(py.load_table(f"{db}.t"), ids)
    before = glue_client(props).get_table(DatabaseName=db, Name="t")["Table"]
    assert len(py.load_table(f"{db}.t").inspect.files()) == 4

    code, out, err = cli(["-c", "glue", "-o", "json", "compact", f"{db}.t", "--rewrite-all", "--yes"])
    assert code == 0, (out, err)
    res = json.loads(out)
    assert (res["rewritten_data_files"], res["added_data_files"]) == (4, 1), res
    assert "running spark-submit (1 groups, 4 files)" in err and res["failed_groups"] == []
    assert SECRET not in out + err

    after = glue_client(props).get_table(DatabaseName=db, Name="t")["Table"]
    assert after["VersionId"] != before["VersionId"]
    assert after["Parameters"]["previous_metadata_location"] == before["Parameters"]["metadata_location"]
    t = py.load_table(f"{db}.t")
    assert t.metadata_location == after["Parameters"]["metadata_location"] != before["Parameters"]["metadata_location"]
    assert t.current_snapshot().summary.operation.value == "replace"
    [data_file] = t.inspect.files().column("file_path").to_pylist()
    assert data_file.startswith(f"{props['warehouse']}/{db}.db/t/data/")
    assert rows(t) == [1, 2, 3, 4, 5, 6]
    assert sorted(t.scan().to_arrow().column("name").to_pylist()) == [f"n{i}" for i in range(1, 7)]
    code, out, err = cli(["-c", "glue", "validate", f"{db}.t", "--deep"])
    assert code == 0, out + err
