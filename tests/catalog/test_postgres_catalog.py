"""The SQL catalog on a real PostgreSQL server: connection errors (one line naming the server,
never the password), privileges, the tables created by several clients at once, a connection
lost before and during a commit, and a password that never reaches any output."""
from __future__ import annotations

import io
import json
import threading

import pytest

import pg_cluster
from icectl.catalog.postgres import connection_params, redact_uri
from icectl.catalog.sql import SqlCatalog
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import CommitStateUnknownError, ExitCode, StorageError
from icectl.io import FileIO
from helpers import create_table
from icectl.table.loaded import load_table
from helpers import append_files

from test_sql_catalog import SCHEMA, write_parquet

pytestmark = pytest.mark.postgres

# Until icectl has a not-authorized exit code, a refused login is a usage error (exit 2).
NOT_AUTHORIZED = int(getattr(ExitCode, "NOT_AUTHORIZED", ExitCode.USAGE))


def cli(args: list[str]) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(args, env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture
def no_config(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.delenv("PGPASSWORD", raising=False)
    monkeypatch.chdir(tmp_path)


def error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.startswith("icectl: error:")]
    assert len(lines) == 1, err
    return lines[0]


def assert_no_secret(secret: str, *texts: str) -> None:
    for text in texts:
        assert secret not in text, text


# -- connection errors --------------------------------------------------------------------------

def test_refused_connection_is_a_storage_error_naming_the_server(no_config, tmp_path):
    port = pg_cluster.free_port()  # nothing listens there
    secret = "s3cret-Refused"
    for uri in (f"postgresql://alice:{secret}@127.0.0.1:{port}/lake",
                f"jdbc:postgresql://127.0.0.1:{port}/lake?user=alice&password={secret}"):
        flags = ["-c", "prod", "--uri", uri, "--warehouse", str(tmp_path / "wh")]
        code, out, err = cli(flags + ["list"])
        assert code == ExitCode.STORAGE == 10
        line = error_line(err)
        assert f"alice@127.0.0.1:{port}/lake" in line and "connection refused" in line
        assert "Traceback" not in err
        code, out, verbose = cli(flags + ["--verbose", "describe", "db.t"])
        assert code == 10 and "Traceback" in verbose
        code, out, js = cli(flags + ["-o", "json", "describe", "db.t"])
        assert code == 10 and json.loads(js)["error"]["exit_code"] == 10
        assert_no_secret(secret, out, err, verbose, js)
    assert not (tmp_path / "wh").exists()


def test_wrong_password_is_refused_without_printing_it(postgres_server, postgres_db, no_config, tmp_path):
    wrong = "wrong-" + postgres_server.password[::-1]
    for uri in (postgres_server.uri(postgres_db, password=wrong),
                postgres_server.jdbc_uri(postgres_db).replace(postgres_server.password, wrong)):
        flags = ["-c", "prod", "--uri", uri, "--warehouse", str(tmp_path / "wh")]
        code, out, err = cli(flags + ["list"])
        assert code == NOT_AUTHORIZED
        line = error_line(err)
        assert f"icectl@127.0.0.1:{postgres_server.port}/{postgres_db}" in line
        assert "password authentication failed" in line
        code, out2, verbose = cli(flags + ["-v", "-o", "json", "list"])
        assert code == NOT_AUTHORIZED and "Traceback" in verbose
        assert_no_secret(wrong, out, err, out2, verbose)
        assert_no_secret(postgres_server.password, out, err, out2, verbose)


def test_missing_database_is_not_found(postgres_server, no_config, tmp_path):
    code, out, err = cli(["--uri", postgres_server.uri("no_such_db"), "--warehouse", str(tmp_path), "list"])
    assert code == ExitCode.NOT_FOUND
    assert "no_such_db does not exist" in error_line(err)
    assert_no_secret(postgres_server.password, out, err)


@pytest.mark.parametrize("uri,message", [
    ("jdbc:postgresql://127.0.0.1:1/db?user=u&password=pw-Xyz&loggerLevel=TRACE", "unsupported connection parameter"),
    ("postgresql://u:pw-Xyz@127.0.0.1:1/db?nonsense=1", "invalid PostgreSQL catalog URI"),
])
def test_unusable_uri_is_a_usage_error(no_config, tmp_path, uri, message):
    code, out, err = cli(["--uri", uri, "--warehouse", str(tmp_path), "list"])
    assert code == ExitCode.USAGE
    assert message in error_line(err)
    assert_no_secret("pw-Xyz", out, err)


def test_uri_forms():
    assert connection_params("postgresql+psycopg2://u:p%40ss@h:6543/db?sslmode=disable") == {
        "user": "u", "password": "p@ss", "host": "h", "port": "6543", "dbname": "db", "sslmode": "disable"}
    assert connection_params("jdbc:postgresql://h/db?user=u&password=a%26b&ssl=true&ApplicationName=x"
                             "&currentSchema=iceberg") == {
        "host": "h", "dbname": "db", "user": "u", "password": "a&b", "sslmode": "require",
        "application_name": "x", "options": "-c search_path=iceberg"}
    assert connection_params("jdbc:postgresql:lake") == {"host": "localhost", "dbname": "lake"}
    assert redact_uri("postgresql://u:p@ss@h/db") == "postgresql://u:***@h/db"
    assert redact_uri("jdbc:postgresql://h/db?user=u&Password=x&ssl=true") == \
        "jdbc:postgresql://h/db?user=u&Password=***&ssl=true"


# -- the password never reaches an output ---------------------------------------------------------

def test_the_password_is_in_no_output(postgres_server, postgres_db, no_config, tmp_path):
    uri = postgres_server.uri(postgres_db)
    flags = ["--uri", uri, "--warehouse", str(tmp_path / "warehouse")]
    outputs = []
    for command in (["demo"], ["describe", "demo.events"], ["-o", "json", "describe", "demo.events"],
                    ["list"], ["-o", "json", "list"], ["snapshots", "demo.events"],
                    ["-v", "expire", "demo.events", "--dry-run"], ["-o", "json", "expire", "demo.events", "--yes"],
                    ["-v", "describe", "demo.missing"], ["-v", "-o", "json", "describe", "demo.missing"],
                    ["validate", "demo.events"]):
        code, out, err = cli(flags + command)
        assert code in (0, 3), (command, err)
        outputs += [out, err]
    assert_no_secret(postgres_server.password, *outputs)
    # The demo's suggested commands name the catalog with the password masked.
    assert f"--uri 'postgresql://icectl:***@127.0.0.1:{postgres_server.port}/{postgres_db}'" in outputs[0]
    cat = SqlCatalog("default", uri, str(tmp_path / "warehouse"), FileIO())
    assert postgres_server.password not in cat.uri + repr(vars(cat))


# -- privileges ---------------------------------------------------------------------------------

def test_a_role_without_create_uses_existing_tables(postgres_server, postgres_db, tmp_path):
    """The tables are created only when missing, so a role that may not create tables (the
    default for non-owners since PostgreSQL 15) works on a catalog another role set up; a role
    without privileges on them gets one line naming the server."""
    wh = str(tmp_path / "wh")
    owner = SqlCatalog("cat", postgres_server.uri(postgres_db), wh, FileIO())
    create_table(owner, ("db", "t"), schema_text=SCHEMA)
    with postgres_server.connect(postgres_db) as con:
        for role in ("writer", "stranger"):
            con.execute(f"DROP ROLE IF EXISTS {role}")
            con.execute(f"CREATE ROLE {role} LOGIN PASSWORD 'pw-{role}'")
        con.execute("GRANT SELECT, INSERT, UPDATE, DELETE ON iceberg_tables, iceberg_namespace_properties TO writer")
    base = f"@127.0.0.1:{postgres_server.port}/{postgres_db}"
    writer = SqlCatalog("cat", f"postgresql://writer:pw-writer{base}", wh, FileIO())
    t = append_files(load_table(writer, ("db", "t")), [write_parquet(tmp_path / "a.parquet", [1], ["a"])])
    create_table(writer, ("db", "u"), schema_text=SCHEMA)
    assert owner.load_metadata_location(("db", "t")) == t.metadata_location
    assert owner.list_tables(("db",)) == [("db", "t"), ("db", "u")]

    code, out, err = cli(["--uri", f"postgresql://stranger:pw-stranger{base}", "--warehouse", wh, "list"])
    assert code == NOT_AUTHORIZED
    line = error_line(err)
    assert "stranger@127.0.0.1" in line and "permission denied" in line and "pw-stranger" not in err
    # On an empty database, a role that may not create the tables is told so.
    fresh = postgres_server.create_database(postgres_db + "_empty")
    try:
        code, out, err = cli(["--uri", f"postgresql://writer:pw-writer@127.0.0.1:{postgres_server.port}/{fresh}",
                              "--warehouse", wh, "list"])
        assert code == NOT_AUTHORIZED and "permission denied for schema public" in error_line(err)
    finally:
        postgres_server.drop_database(fresh)
        with postgres_server.connect(postgres_db) as con:
            con.execute("DROP OWNED BY writer, stranger")
            con.execute("DROP ROLE writer")
            con.execute("DROP ROLE stranger")


# -- several clients ----------------------------------------------------------------------------

@pytest.mark.parametrize("round_", range(4))
def test_many_clients_create_the_tables_at_once(postgres_server, postgres_db, tmp_path, monkeypatch, round_):
    """Clients that find no tables create them at the same moment: one wins, the others use its
    tables (PostgreSQL reports the losers' CREATE TABLE as a duplicate table, type or key)."""
    n = 8
    barrier = threading.Barrier(n)
    catalogs: list[SqlCatalog] = []
    errors: list[BaseException] = []
    init = SqlCatalog._init_postgres_schema

    def init_together(self):  # connected: all look for the tables at once
        barrier.wait()
        init(self)

    monkeypatch.setattr(SqlCatalog, "_init_postgres_schema", init_together)

    def open_catalog():
        try:
            catalogs.append(SqlCatalog("cat", postgres_server.uri(postgres_db), str(tmp_path), FileIO()))
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=open_catalog) for _ in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == [] and len(catalogs) == n
    create_table(catalogs[0], ("db", "t"), schema_text=SCHEMA)
    assert all(c.list_tables(None) == [("db", "t")] for c in catalogs)


def _terminate(server, db: str, application_name: str = "icectl") -> int:
    with server.connect(db) as con:
        return con.execute("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                           "WHERE datname = %s AND application_name = %s", (db, application_name)).fetchone()[0]


def test_a_lost_connection_is_a_storage_error(postgres_server, postgres_db, no_config, tmp_path):
    cat = SqlCatalog("cat", postgres_server.uri(postgres_db), str(tmp_path), FileIO())
    create_table(cat, ("db", "t"), schema_text=SCHEMA)
    assert _terminate(postgres_server, postgres_db) == 1
    with pytest.raises(StorageError) as ei:
        cat.list_tables(None)
    assert ei.value.exit_code == 10 and "lost the connection to PostgreSQL server" in ei.value.message
    assert postgres_server.password not in ei.value.message


def test_a_connection_lost_during_the_commit_keeps_the_new_metadata(postgres_server, postgres_db, tmp_path):
    """The outcome of a commit whose connection broke is unknown: CommitStateUnknownError, and the
    metadata file it wrote is kept (it may be the table's current one)."""
    cat = SqlCatalog("cat", postgres_server.uri(postgres_db), str(tmp_path / "wh"), FileIO())
    t = create_table(cat, ("db", "t"), schema_text=SCHEMA)
    write = cat.write_metadata
    written: list[str] = []

    def write_then_lose_the_connection(location, md):
        write(location, md)
        written.append(location)
        _terminate(postgres_server, postgres_db)

    cat.write_metadata = write_then_lose_the_connection
    with pytest.raises(CommitStateUnknownError) as ei:
        append_files(load_table(cat, ("db", "t")), [write_parquet(tmp_path / "a.parquet", [1], ["a"])])
    assert ei.value.exit_code == ExitCode.COMMIT_STATE_UNKNOWN and "may or may not have happened" in ei.value.message
    assert len(written) == 1 and FileIO().exists(written[0])
    other = SqlCatalog("cat", postgres_server.uri(postgres_db), str(tmp_path / "wh"), FileIO())
    assert other.load_metadata_location(("db", "t")) == t.metadata_location  # it did not happen

