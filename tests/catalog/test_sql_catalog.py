"""The SQL catalog: JdbcCatalog's table layout, compare-and-set commits, retries, listing, errors
through the CLI, and interoperability with PyIceberg's SqlCatalog.

Every test that takes the ``backend`` fixture runs twice: on a SQLite file and on a fresh database
of a private PostgreSQL server (marker ``postgres``; tests/conftest.py starts the server)."""
from __future__ import annotations

import io
import json
import sqlite3
import threading

import pytest

from icectl.catalog.sql import SqlCatalog, sqlite_path
from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.formats.manifest import DataFile
from helpers import create_table
from icectl.table.snapshot_producer import SnapshotChange, build_snapshot
from helpers import append_files
from icectl.table.transaction import Transaction, commit
from icectl.table.updates import SetProperties
from icectl.table.loaded import load_table
from icectl.errors import AlreadyExistsError, CommitConflictError, NoSuchNamespaceError, NoSuchTableError
from icectl.io import FileIO

SCHEMA = "id:long!, name:string"


# -- helpers -----------------------------------------------------------------------------------

def write_parquet(path, ids: list[int], names: list[str | None]) -> DataFile:
    """A Parquet data file with Iceberg field ids (id=1, name=2), and its DataFile."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([
        pa.field("id", pa.int64(), nullable=False, metadata={"PARQUET:field_id": "1"}),
        pa.field("name", pa.string(), nullable=True, metadata={"PARQUET:field_id": "2"}),
    ])
    buf = io.BytesIO()
    pq.write_table(pa.table({"id": ids, "name": names}, schema=schema), buf)
    data = buf.getvalue()
    FileIO().write(str(path), data)
    return DataFile(file_path=str(path), file_format="PARQUET", partition=(), record_count=len(ids),
                    file_size_in_bytes=len(data))


def cli(args: list[str]) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    code = run(args, env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


def metadata_files(table_dir) -> list[str]:
    return sorted(p.name for p in (table_dir / "metadata").glob("*.metadata.json"))


class Backend:
    """The catalog's database, and a side door into it for the assertions."""

    def __init__(self, kind: str, uri: str, raw_connect):
        self.kind, self.uri, self._connect = kind, uri, raw_connect

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        con = self._connect()
        try:
            return [tuple(r) for r in con.execute(sql.replace("?", "%s") if self.kind == "postgresql" else sql,
                                                  params).fetchall()]
        finally:
            con.close()

    def execute(self, sql: str) -> None:
        con = self._connect()
        try:
            con.execute(sql)
            con.commit()
        finally:
            con.close()

    def columns(self, table: str) -> list[tuple[str, str, bool]]:
        """(name, SQL type, part of the primary key) of each column, in order."""
        if self.kind == "sqlite":
            return [(r[1], r[2].upper(), r[5] > 0) for r in self.rows(f"PRAGMA table_info({table})")]
        return self.rows(
            "SELECT a.attname, replace(upper(format_type(a.atttypid, a.atttypmod)), 'CHARACTER VARYING', 'VARCHAR'), "
            "coalesce(a.attnum = ANY(i.indkey), false) FROM pg_attribute a "
            "LEFT JOIN pg_index i ON i.indrelid = a.attrelid AND i.indisprimary "
            "WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum", (table,))


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def backend(request, tmp_path) -> Backend:
    if request.param == "sqlite":
        db = tmp_path / "catalog.db"
        return Backend("sqlite", f"sqlite:///{db}", lambda: sqlite3.connect(db))
    server = request.getfixturevalue("postgres_server")
    name = request.getfixturevalue("postgres_db")
    return Backend("postgresql", server.uri(name), lambda: server.connect(name))


@pytest.fixture
def uri(backend) -> str:
    return backend.uri


@pytest.fixture
def wh(tmp_path):
    return tmp_path / "warehouse"


@pytest.fixture
def catalog(uri, wh):
    return SqlCatalog("cat", uri, str(wh), FileIO())


@pytest.fixture
def cli_flags(uri, wh, tmp_path, monkeypatch):
    """Global options naming the same catalog as the ``catalog`` fixture (no config file)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)
    return ["--catalog", "cat", "--uri", uri, "--warehouse", str(wh)]


# -- layout ------------------------------------------------------------------------------------

def test_table_layout_is_jdbc_catalogs(catalog, backend):
    """Iceberg Java's JdbcUtil: V0_CREATE_CATALOG_SQL plus V1's iceberg_type VARCHAR(5), and
    CREATE_NAMESPACE_PROPERTIES_TABLE_SQL: the same names, types and primary keys."""
    catalog.create_namespace(("db",))  # the first write creates the database
    assert backend.columns("iceberg_tables") == [
        ("catalog_name", "VARCHAR(255)", True), ("table_namespace", "VARCHAR(255)", True),
        ("table_name", "VARCHAR(255)", True), ("metadata_location", "VARCHAR(1000)", False),
        ("previous_metadata_location", "VARCHAR(1000)", False), ("iceberg_type", "VARCHAR(5)", False)]
    assert backend.columns("iceberg_namespace_properties") == [
        ("catalog_name", "VARCHAR(255)", True), ("namespace", "VARCHAR(255)", True),
        ("property_key", "VARCHAR(255)", True), ("property_value", "VARCHAR(1000)", False)]


def test_rows_written_by_create_and_commit(catalog, backend, wh, tmp_path):
    t = create_table(catalog, ("db", "t"), schema_text=SCHEMA)
    rows = backend.rows("SELECT * FROM iceberg_tables")
    assert rows == [("cat", "db", "t", t.metadata_location, None, "TABLE")]
    assert t.metadata_location.startswith(str(wh / "db" / "t" / "metadata" / "00000-"))
    assert backend.rows("SELECT * FROM iceberg_namespace_properties") == [("cat", "db", "exists", "true")]

    t2 = append_files(t, [write_parquet(tmp_path / "d1.parquet", [1, 2], ["a", "b"])])
    assert t2.metadata_location.startswith(str(wh / "db" / "t" / "metadata" / "00001-"))
    rows = backend.rows("SELECT metadata_location, previous_metadata_location FROM iceberg_tables")
    assert rows == [(t2.metadata_location, t.metadata_location)]


def test_existing_database_without_iceberg_type_column(backend, wh, tmp_path):
    """A catalog created by JdbcCatalog's schema V0 (no iceberg_type: what Iceberg Java 1.10
    creates unless jdbc.schema-version=V1) works as it is, and is not altered."""
    backend.execute("""CREATE TABLE iceberg_tables (catalog_name VARCHAR(255) NOT NULL,
        table_namespace VARCHAR(255) NOT NULL, table_name VARCHAR(255) NOT NULL,
        metadata_location VARCHAR(1000), previous_metadata_location VARCHAR(1000),
        PRIMARY KEY (catalog_name, table_namespace, table_name))""")
    cat = SqlCatalog("cat", backend.uri, str(wh), FileIO())
    t = create_table(cat, ("db", "t"), schema_text=SCHEMA)
    assert load_table(cat, ("db", "t")).metadata_location == t.metadata_location
    assert cat.list_tables(None) == [("db", "t")]
    t2 = append_files(load_table(cat, ("db", "t")), [write_parquet(tmp_path / "a.parquet", [1], ["a"])])
    assert backend.rows("SELECT * FROM iceberg_tables") == [("cat", "db", "t", t2.metadata_location,
                                                             t.metadata_location)]
    assert [c for c, _, _ in backend.columns("iceberg_tables")][-1] == "previous_metadata_location"


def test_views_are_not_tables(catalog, backend):
    t = create_table(catalog, ("db", "t"), schema_text=SCHEMA)
    backend.execute("INSERT INTO iceberg_tables VALUES ('cat', 'db', 'v', '/x/v.metadata.json', NULL, 'VIEW')")
    assert catalog.list_tables(("db",)) == [("db", "t")]
    with pytest.raises(NoSuchTableError):
        catalog.load_metadata_location(("db", "v"))
    # A commit never moves a view's row, even one whose pointer matches.
    assert catalog._compare_and_set(("db", "v"), "/x/v.metadata.json", "/x/v2.metadata.json") is False
    assert catalog._compare_and_set(("db", "t"), "/not/the/base", "/x/t2.metadata.json") is False
    assert backend.rows("SELECT table_name, metadata_location FROM iceberg_tables ORDER BY table_name") == [
        ("t", t.metadata_location), ("v", "/x/v.metadata.json")]


@pytest.mark.parametrize("uri,path", [
    ("sqlite:///rel/catalog.db", "rel/catalog.db"),
    ("sqlite:////abs/catalog.db", "/abs/catalog.db"),
    ("jdbc:sqlite:/abs/catalog.db", "/abs/catalog.db"),
    ("jdbc:sqlite:file:/abs/catalog.db", "/abs/catalog.db"),
    ("sqlite:///:memory:", ":memory:"),
    ("/plain/catalog.db", "/plain/catalog.db"),
])
def test_sqlite_uri_forms(uri, path):
    assert sqlite_path(uri) == path


def test_jdbc_uri_opens_the_same_database(backend, wh, request):
    """Iceberg Java's URI for the same database (jdbc:sqlite:PATH; jdbc:postgresql://HOST:PORT/DB
    with user and password as parameters) reaches the same catalog."""
    a = SqlCatalog("cat", backend.uri, str(wh), FileIO())
    t = create_table(a, ("db", "t"), schema_text=SCHEMA)
    if backend.kind == "sqlite":
        jdbc = "jdbc:sqlite:" + backend.uri[len("sqlite:///"):]
    else:
        server = request.getfixturevalue("postgres_server")
        jdbc = server.jdbc_uri(backend.uri.rsplit("/", 1)[1]) + "&ApplicationName=test&connectTimeout=5"
    b = SqlCatalog("cat", jdbc, str(wh), FileIO())
    assert b.load_metadata_location(("db", "t")) == t.metadata_location


# -- commits -----------------------------------------------------------------------------------

def test_compare_and_set_conflict_leaves_no_orphan_metadata(catalog, wh, tmp_path):
    create_table(catalog, ("db", "t"), schema_text=SCHEMA)
    first = load_table(catalog, ("db", "t"))
    second = load_table(catalog, ("db", "t"))
    assert first.metadata_location == second.metadata_location

    won = append_files(first, [write_parquet(tmp_path / "a.parquet", [1], ["a"])])
    with pytest.raises(CommitConflictError) as ei:
        append_files(second, [write_parquet(tmp_path / "b.parquet", [2], ["b"])])
    assert ei.value.exit_code == 5
    # Only the two committed metadata files exist; the pointer is the winner's.
    assert metadata_files(wh / "db" / "t") == sorted(
        [first.metadata_location.rsplit("/", 1)[-1], won.metadata_location.rsplit("/", 1)[-1]])
    assert catalog.load_metadata_location(("db", "t")) == won.metadata_location
    current = load_table(catalog, ("db", "t"))
    assert [f.file_path for _, f in current.live_files(current.metadata.current_snapshot)] == [
        str(tmp_path / "a.parquet")]


def test_commit_against_a_foreign_catalog_connection_conflicts(uri, wh, tmp_path):
    """Two catalogs on the same database (two connections, as two processes) see each other's commits."""
    a = SqlCatalog("cat", uri, str(wh), FileIO())
    b = SqlCatalog("cat", uri, str(wh), FileIO())
    create_table(a, ("db", "t"), schema_text=SCHEMA)
    ta, tb = load_table(a, ("db", "t")), load_table(b, ("db", "t"))
    append_files(tb, [write_parquet(tmp_path / "b.parquet", [2], ["b"])])
    with pytest.raises(CommitConflictError):
        append_files(ta, [write_parquet(tmp_path / "a.parquet", [1], ["a"])])
    assert len(metadata_files(wh / "db" / "t")) == 2


def test_commit_with_retry_succeeds_after_a_conflict(catalog, tmp_path):
    create_table(catalog, ("db", "t"), schema_text=SCHEMA)
    stale = load_table(catalog, ("db", "t"))
    other = append_files(load_table(catalog, ("db", "t")), [write_parquet(tmp_path / "a.parquet", [1], ["a"])])
    mine = write_parquet(tmp_path / "b.parquet", [2, 3], ["b", "c"])

    seen: list[str] = []

    def build(txn):
        seen.append(txn.table.metadata_location)
        return build_snapshot(txn, SnapshotChange("append", added=[mine]))

    result = Transaction(stale).commit(build).table
    assert seen == [stale.metadata_location, other.metadata_location]  # rebuilt on the refreshed table
    assert result.metadata.current_snapshot.parent_snapshot_id == other.metadata.current_snapshot_id
    assert result.metadata.last_sequence_number == 2
    current = load_table(catalog, ("db", "t"))
    assert current.metadata_location == result.metadata_location
    live = sorted(f.file_path for _, f in current.live_files(current.metadata.current_snapshot))
    assert live == [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    assert len(current.metadata.metadata_log) == 2


def test_commit_with_retry_gives_up(catalog, tmp_path):
    create_table(catalog, ("db", "t"), schema_text=SCHEMA)
    stale = load_table(catalog, ("db", "t"))
    append_files(load_table(catalog, ("db", "t")), [write_parquet(tmp_path / "a.parquet", [1], ["a"])])
    f = write_parquet(tmp_path / "b.parquet", [2], ["b"])
    with pytest.raises(CommitConflictError):
        Transaction(stale, retries=0).commit(lambda txn: build_snapshot(txn, SnapshotChange("append", added=[f]))).table


def test_concurrent_writers_all_land_with_retry(uri, wh, tmp_path):
    """Writers on separate connections racing on one table: every append lands exactly once."""
    create_table(SqlCatalog("cat", uri, str(wh), FileIO()), ("db", "t"), schema_text=SCHEMA)
    n = 4
    files = [write_parquet(tmp_path / f"f{i}.parquet", [i], [str(i)]) for i in range(n)]
    tables = [load_table(SqlCatalog("cat", uri, str(wh), FileIO()), ("db", "t")) for _ in range(n)]
    barrier = threading.Barrier(n)
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            barrier.wait()
            Transaction(tables[i], retries=n).commit(
                lambda txn: build_snapshot(txn, SnapshotChange("append", added=[files[i]]))).table
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    current = load_table(SqlCatalog("cat", uri, str(wh), FileIO()), ("db", "t"))
    assert len(current.metadata.snapshots) == n
    assert sorted(f.file_path for _, f in current.live_files(current.metadata.current_snapshot)) == sorted(
        f.file_path for f in files)
    assert len(metadata_files(wh / "db" / "t")) == n + 1  # losers' metadata files were removed


# -- listing -----------------------------------------------------------------------------------

def test_list_namespaces_and_tables(catalog, uri, wh):
    for ident in [("db", "b"), ("db", "a"), ("other", "c"), ("a", "b", "deep")]:
        create_table(catalog, ident, schema_text=SCHEMA)
    catalog.create_namespace(("empty",))
    assert catalog.list_namespaces() == [("a", "b"), ("db",), ("empty",), ("other",)]
    assert catalog.list_tables(None) == [("a", "b", "deep"), ("db", "a"), ("db", "b"), ("other", "c")]
    assert catalog.list_tables(("db",)) == [("db", "a"), ("db", "b")]
    assert catalog.list_tables(("a", "b")) == [("a", "b", "deep")]
    assert catalog.list_tables(("empty",)) == []
    with pytest.raises(NoSuchNamespaceError):
        catalog.list_tables(("missing",))
    assert load_table(catalog, ("a", "b", "deep")).location == str(wh / "a" / "b" / "deep")
    # Another catalog name in the same database sees nothing of these.
    other = SqlCatalog("other", uri, str(wh), FileIO())
    assert other.list_tables(None) == []
    assert other.list_namespaces() == []
    with pytest.raises(NoSuchTableError):
        other.load_metadata_location(("db", "a"))


def test_list_through_the_cli(catalog, cli_flags):
    create_table(catalog, ("db", "a"), schema_text=SCHEMA)
    create_table(catalog, ("ns", "b"), schema_text=SCHEMA)
    code, out, err = cli(cli_flags + ["list", "--output", "json"])
    assert code == 0, err
    assert json.loads(out) == {"catalog": "cat", "namespaces": ["db", "ns"], "tables": ["db.a", "ns.b"], "views": []}
    code, out, err = cli(cli_flags + ["list", "db", "--output", "json"])
    assert code == 0, err
    assert json.loads(out)["tables"] == ["db.a"]
    code, out, err = cli(cli_flags + ["list", "nope"])
    assert code == 3, err


# -- errors ------------------------------------------------------------------------------------

def test_duplicate_create_is_already_exists(catalog, wh):
    t = create_table(catalog, ("db", "t"), schema_text=SCHEMA)
    with pytest.raises(AlreadyExistsError):
        create_table(catalog, ("db", "t"), schema_text="x:int")
    # The existing table is untouched and no stray metadata file was left in its folder.
    assert catalog.load_metadata_location(("db", "t")) == t.metadata_location
    assert metadata_files(wh / "db" / "t") == [t.metadata_location.rsplit("/", 1)[-1]]


def test_duplicate_create_through_the_cli_exits_5(cli_flags, wh):
    code, out, err = cli(cli_flags + ["create", "--yes", "db.t", "--schema", SCHEMA])
    assert code == 0, err
    code, out, err = cli(cli_flags + ["create", "--yes", "db.t", "--schema", SCHEMA])
    assert code == 5
    lines = [line for line in err.splitlines() if line.startswith("icectl: error:")]
    assert len(lines) == 1 and "db.t" in lines[0] and "already exists" in lines[0]
    assert len(metadata_files(wh / "db" / "t")) == 1
    # By location, the table is still the one created first.
    code, out, err = cli(["describe", str(wh / "db" / "t"), "--output", "json"])
    assert code == 0, err
    code2, out2, _ = cli(cli_flags + ["describe", "db.t", "--output", "json"])
    assert json.loads(out)["table_uuid"] == json.loads(out2)["table_uuid"]


@pytest.mark.parametrize("command", [["describe"], ["snapshots"], ["files"]])
def test_table_not_found_exits_3(cli_flags, command):
    code, out, err = cli(cli_flags + command + ["db.missing"])
    assert code == 3
    assert "db.missing" in err and "does not exist" in err
    code, out, err = cli(cli_flags + command + ["db.missing", "--output", "json"])
    assert code == 3
    assert json.loads(err.strip())["error"]["type"] == "NoSuchTableError"


def test_invalid_table_name_is_a_usage_error(cli_flags):
    code, out, err = cli(cli_flags + ["describe", "justaname"])
    assert code == 2


# -- PyIceberg ---------------------------------------------------------------------------------

def sqlalchemy_uri(uri: str) -> str:
    """PyIceberg's SqlCatalog takes SQLAlchemy URLs: psycopg 3 is the postgresql+psycopg dialect."""
    return uri.replace("postgresql://", "postgresql+psycopg://", 1)


@pytest.mark.interop
@pytest.mark.parametrize("format_version", [1, 2])
def test_pyiceberg_reads_a_table_icectl_created(cli_flags, uri, wh, tmp_path, format_version):
    pytest.importorskip("sqlalchemy")
    sql = pytest.importorskip("pyiceberg.catalog.sql")

    code, out, err = cli(cli_flags + ["create", "--yes", "db.t", "--schema", SCHEMA, "--format-version", str(format_version)])
    assert code == 0, err
    cat = SqlCatalog("cat", uri, str(wh), FileIO())
    t = load_table(cat, ("db", "t"))
    t = append_files(t, [write_parquet(wh / "db" / "t" / "data" / "a.parquet", [1, 2], ["a", None])])
    t = append_files(t, [write_parquet(wh / "db" / "t" / "data" / "b.parquet", [3], ["c"])])

    py = sql.SqlCatalog("cat", uri=sqlalchemy_uri(uri), warehouse=f"file://{wh}")
    assert ("db",) in py.list_namespaces()
    assert py.list_tables("db") == [("db", "t")]
    pt = py.load_table("db.t")
    assert pt.metadata_location == t.metadata_location
    assert pt.format_version == format_version
    assert pt.metadata.current_snapshot_id == t.metadata.current_snapshot_id
    assert len(pt.metadata.snapshots) == 2
    rows = pt.scan().to_arrow().sort_by("id").to_pylist()
    assert rows == [{"id": 1, "name": "a"}, {"id": 2, "name": None}, {"id": 3, "name": "c"}]
    # A different catalog name does not see it.
    other = sql.SqlCatalog("not-cat", uri=sqlalchemy_uri(uri), warehouse=f"file://{wh}")
    assert other.list_namespaces() == []


@pytest.mark.interop
def test_icectl_reads_a_table_pyiceberg_wrote(cli_flags, uri, wh):
    pytest.importorskip("sqlalchemy")
    sql = pytest.importorskip("pyiceberg.catalog.sql")
    import pyarrow as pa

    py = sql.SqlCatalog("cat", uri=sqlalchemy_uri(uri), warehouse=f"file://{wh}")
    py.create_namespace("db")
    arrow = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": pa.array(["a", "b", None])})
    pt = py.create_table("db.t", schema=arrow.schema)
    pt.append(arrow)
    pt = py.load_table("db.t")

    code, out, err = cli(cli_flags + ["describe", "db.t", "--output", "json"])
    assert code == 0, err
    d = json.loads(out)
    assert d["metadata_location"] == pt.metadata_location
    assert d["totals"]["records"] == 3
    code, out, err = cli(cli_flags + ["files", "db.t", "--output", "json"])
    assert code == 0, err
    assert sum(f["record_count"] for f in json.loads(out)) == 3

    # And icectl can commit to it; PyIceberg then sees both appends.
    cat = SqlCatalog("cat", uri, str(wh), FileIO())
    t = load_table(cat, ("db", "t"))
    append_files(t, [write_parquet(wh / "db" / "t" / "data" / "icectl.parquet", [4], ["d"])])
    assert py.load_table("db.t").scan().to_arrow().num_rows == 4


def test_replace_metadata_moves_the_pointer_only_from_its_base(catalog):
    """Catalog.replace_metadata (restore's one operation for a state no update expresses): the
    file becomes current when the table is still at the base, a conflict when it moved."""
    t = create_table(catalog, ("db", "t"), schema_text=SCHEMA)
    moved = commit(t, [SetProperties({"a": "1"})])
    md = moved.metadata.replace(properties={**moved.metadata.properties, "b": "2"})
    with pytest.raises(CommitConflictError):
        catalog.replace_metadata(t.identifier, t.metadata_location, md)
    assert load_table(catalog, ("db", "t")).metadata_location == moved.metadata_location
    state = catalog.replace_metadata(t.identifier, moved.metadata_location, md)
    now = load_table(catalog, ("db", "t"))
    assert now.metadata_location == state.metadata_location != moved.metadata_location
    assert now.metadata.properties["b"] == "2"
