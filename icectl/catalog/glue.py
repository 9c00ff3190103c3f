"""The AWS Glue catalog: Glue databases are namespaces, a Glue table whose parameter ``table_type``
is ``ICEBERG`` is an Iceberg table whose current metadata file is its ``metadata_location``
parameter, as Iceberg Java's ``GlueCatalog``/``GlueTableOperations`` and PyIceberg's
``pyiceberg/catalog/glue.py`` store them.

A commit applies the updates with the builder (:class:`~icectl.catalog.base.MetastoreCatalog`),
writes the next metadata file and calls ``UpdateTable`` with the table's ``VersionId`` as read
with the base metadata location: Glue refuses the update with ``ConcurrentModificationException``
when another writer changed the table in between, which is a conflict the caller's transaction
plans again for. ``UpdateTable`` sets ``metadata_location``, ``previous_metadata_location`` (the
base), the table's properties as parameters, and the storage descriptor's columns and location
(as PyIceberg writes them; other parameters of the Glue table are kept). A request whose outcome
is unknown (the connection broke after it was sent) is checked by reading the table again, as
Java's ``checkCommitStatus`` does; when that fails too it is a :class:`CommitStateUnknownError`.

Through botocore (no boto3). The settings are PyIceberg's: ``glue.id`` (the catalog id, an
account id), ``glue.region`` / ``client.region``, ``glue.endpoint``, ``glue.profile-name`` /
``client.profile-name``, ``glue.access-key-id``, ``glue.secret-access-key``,
``glue.session-token`` (or their ``client.`` forms), then the usual AWS chain (environment,
profile, instance metadata); ``glue.max-retries`` and ``glue.retry-mode`` (botocore's retries,
default 10 attempts, standard mode); ``glue.connect-timeout`` (icectl's, seconds, default 5: a
``glue.endpoint`` that refuses connections fails before the first request, as ``s3.endpoint``
does); ``glue.skip-archive`` (default true: Glue keeps no old
version for each commit); ``warehouse`` for tables of databases that have no location.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

import botocore.config
import botocore.exceptions
import botocore.session

from icectl import secrets
from icectl.catalog.base import (Identifier, ListedTable, MetastoreCatalog, NamespacePropertiesChange,
                                 check_property_changes, ident_str)
from icectl.catalog.hive_types import hive_type_string
from icectl.errors import (AlreadyExistsError, CommitConflictError, CommitStateUnknownError, IcectlError,
                           NamespaceNotEmptyError, NoSuchNamespaceError, NoSuchTableError, NotAuthorizedError,
                           StorageError, UsageError)
from icectl.io import FileIO, join
from icectl.io.endpoint import CONNECT_TIMEOUT_S, check_endpoint
from icectl.io.s3 import int_property
from icectl.io.safety import table_guard
from icectl.spec.metadata import TableMetadata
from icectl.spec.types import NestedField
from icectl.table.catalog_contract import TableState
from icectl.table.metadata_io import read_metadata_file

GLUE_ID = "glue.id"
GLUE_ENDPOINT = "glue.endpoint"
GLUE_SKIP_ARCHIVE = "glue.skip-archive"
GLUE_MAX_RETRIES = "glue.max-retries"
GLUE_RETRY_MODE = "glue.retry-mode"
GLUE_CONNECT_TIMEOUT = "glue.connect-timeout"  # icectl's, as s3.connect-timeout: seconds
# (glue.X, client.X) pairs, first set wins, as PyIceberg's get_first_property_value.
GLUE_REGION = ("glue.region", "client.region")
GLUE_PROFILE = ("glue.profile-name", "client.profile-name")
GLUE_ACCESS_KEY_ID = ("glue.access-key-id", "client.access-key-id")
GLUE_SECRET_ACCESS_KEY = ("glue.secret-access-key", "client.secret-access-key")
GLUE_SESSION_TOKEN = ("glue.session-token", "client.session-token")
RETRY_MODES = ("standard", "adaptive", "legacy")
MAX_RETRIES = 10

TABLE_TYPE = "table_type"
ICEBERG = "ICEBERG"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
ICEBERG_FIELD_ID = "iceberg.field.id"
ICEBERG_FIELD_OPTIONAL = "iceberg.field.optional"
ICEBERG_FIELD_CURRENT = "iceberg.field.current"

# Glue's column types for Iceberg's primitives (PyIceberg's GLUE_PRIMITIVE_TYPES); any other
# primitive is written as Iceberg spells it, decimals as decimal(P,S).
GLUE_PRIMITIVES = {
    "boolean": "boolean", "int": "int", "long": "bigint", "float": "float", "double": "double",
    "date": "date", "time": "string", "string": "string", "uuid": "string", "timestamp": "timestamp",
    "timestamptz": "timestamp", "binary": "binary",
}
_NOT_AUTHORIZED = {"AccessDeniedException", "AccessDenied", "UnrecognizedClientException",
                   "InvalidSignatureException", "ExpiredTokenException", "InvalidClientTokenId",
                   "SignatureDoesNotMatch", "MissingAuthenticationTokenException"}
# Failures after which the request may have reached Glue: the outcome of an UpdateTable is unknown.
_AMBIGUOUS = (botocore.exceptions.ReadTimeoutError, botocore.exceptions.ConnectionClosedError)


class UnansweredRequest(Exception):
    """A Glue request whose outcome is unknown (a read timeout, a broken connection, a 5xx)."""


def _first(props: dict[str, str], keys: tuple[str, ...]) -> str | None:
    return next((props[k] for k in keys if props.get(k)), None)


def glue_columns(md: TableMetadata) -> list[dict[str, Any]]:
    """The storage descriptor's columns: the current schema's, then the other schemas' columns not
    seen yet (``iceberg.field.current=false``), each with its field id and optionality."""
    out: dict[str, dict[str, Any]] = {}
    current = md.current_schema_or_none

    def add(f: NestedField, is_current: bool) -> None:
        if f.name in out:
            return
        col: dict[str, Any] = {"Name": f.name, "Type": hive_type_string(f.field_type, GLUE_PRIMITIVES),
                               "Parameters": {ICEBERG_FIELD_ID: str(f.field_id),
                                              ICEBERG_FIELD_OPTIONAL: str(not f.required).lower(),
                                              ICEBERG_FIELD_CURRENT: str(is_current).lower()}}
        if f.doc:
            col["Comment"] = f.doc
        out[f.name] = col

    if current is not None:
        for f in current.fields:
            add(f, True)
    for schema in md.schemas:
        if current is None or schema.schema_id != current.schema_id:
            for f in schema.fields:
                add(f, False)
    return list(out.values())


def table_input(name: str, metadata_location: str, md: TableMetadata, *, glue_table: dict[str, Any] | None = None,
                previous_location: str | None = None) -> dict[str, Any]:
    """``TableInput`` for CreateTable/UpdateTable, as PyIceberg's ``_construct_table_input``: the
    parameters of the Glue table kept, the pointer and the table's properties set over them."""
    params = dict((glue_table or {}).get("Parameters") or {})
    params.update({TABLE_TYPE: ICEBERG, METADATA_LOCATION: metadata_location})
    if previous_location:
        params[PREVIOUS_METADATA_LOCATION] = previous_location
    for k, v in md.properties.items():
        params[k] = str(v)
    storage: dict[str, Any] = {"Columns": glue_columns(md)}
    if md.location:  # v4 may leave it to the catalog
        storage["Location"] = md.location
    out: dict[str, Any] = {"Name": name, "TableType": EXTERNAL_TABLE, "Parameters": params,
                           "StorageDescriptor": storage}
    if "Description" in md.properties:
        out["Description"] = md.properties["Description"]
    return out


def is_iceberg(glue_table: dict[str, Any]) -> bool:
    return str((glue_table.get("Parameters") or {}).get(TABLE_TYPE, "")).lower() == "iceberg"


class GlueCatalog(MetastoreCatalog):
    kind = "glue"

    def __init__(self, name: str, properties: dict[str, str], io: FileIO, warehouse: str | None = None):
        self.name = name
        self.io = io
        self.properties = dict(properties)
        self.warehouse = warehouse.rstrip("/") if warehouse else None
        self.endpoint = properties.get(GLUE_ENDPOINT) or None
        self.catalog_id = properties.get(GLUE_ID) or None
        self.skip_archive = str(properties.get(GLUE_SKIP_ARCHIVE, "true")).lower() == "true"
        self._client: Any = None
        # What the last read of each table returned: the Glue table whose VersionId a commit from
        # that metadata location must name.
        self._read: dict[Identifier, dict[str, Any]] = {}

    # -- the client ---------------------------------------------------------------------------
    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = self._make_client()
        return self._client

    def _make_client(self) -> Any:
        props = self.properties
        secrets.remember_properties(props)
        try:
            session = botocore.session.Session(profile=_first(props, GLUE_PROFILE))
            key, secret = _first(props, GLUE_ACCESS_KEY_ID), _first(props, GLUE_SECRET_ACCESS_KEY)
            if key and secret:
                session.set_credentials(key, secret, _first(props, GLUE_SESSION_TOKEN))
            mode = props.get(GLUE_RETRY_MODE)
            timeout = int_property(props, GLUE_CONNECT_TIMEOUT, CONNECT_TIMEOUT_S, hi=600)
            config = botocore.config.Config(retries={"max_attempts": int_property(props, GLUE_MAX_RETRIES, MAX_RETRIES,
                                                                                  lo=0, hi=50),
                                                     "mode": mode if mode in RETRY_MODES else "standard"},
                                            connect_timeout=timeout)
            client = session.create_client("glue", region_name=_first(props, GLUE_REGION),
                                           endpoint_url=self.endpoint, config=config)
        except botocore.exceptions.ProfileNotFound as e:
            raise UsageError(f"catalog {self.name}: {e}") from None
        except botocore.exceptions.NoRegionError:
            raise UsageError(f"catalog {self.name}: no AWS region for Glue",
                             hint="set glue.region in the catalog's configuration, or AWS_REGION") from None
        if self.endpoint:
            # A refused connection fails now, not after botocore's retries with backoff (76 s with
            # the default 10 attempts).
            check_endpoint(self.endpoint, timeout=timeout, service="Glue", setting=GLUE_ENDPOINT,
                           timeout_setting=GLUE_CONNECT_TIMEOUT,
                           hint="check glue.endpoint (and glue.region) and that the Glue service is up")
        if self.catalog_id:
            catalog_id = self.catalog_id

            def add_catalog_id(params: dict[str, Any], **_: Any) -> None:
                params.setdefault("CatalogId", catalog_id)

            client.meta.events.register("provide-client-params.glue", add_catalog_id)
        return client

    def _where(self) -> str:
        return f"Glue catalog {self.name}" + (f" at {self.endpoint}" if self.endpoint else "")

    def _call(self, op: str, *, missing: Callable[[], IcectlError] | None = None,
              exists: Callable[[], IcectlError] | None = None, ambiguous: bool = False,
              **kwargs: Any) -> dict[str, Any]:
        """One Glue request; its failures as icectl's errors (one line each). ``ambiguous``: a
        timeout, a broken connection or a server error (5xx), after which the request may have
        been carried out, is an :class:`UnansweredRequest`."""
        try:
            return getattr(self.client, op)(**kwargs)
        except _AMBIGUOUS as e:
            if ambiguous:
                raise UnansweredRequest(" ".join(str(e).split())) from None
            raise StorageError(f"{self._where()}: {op} failed: the connection broke or timed out") from None
        except botocore.exceptions.ClientError as e:
            err = e.response.get("Error", {})
            code, message = err.get("Code", ""), " ".join(str(err.get("Message", "")).split())
            status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0
            if ambiguous and status >= 500:  # a server error: the change may have been made
                raise UnansweredRequest(f"{code}: {message}") from None
            if code == "EntityNotFoundException" and missing is not None:
                raise missing() from None
            if code == "AlreadyExistsException" and exists is not None:
                raise exists() from None
            if code == "ConcurrentModificationException":
                raise CommitConflictError(f"{self._where()}: {message or code}") from None
            if code in _NOT_AUTHORIZED:
                raise NotAuthorizedError(f"{self._where()} refused {op}: {code}: {message}",
                                         hint="check the AWS credentials and the Glue permissions of the "
                                              "catalog's settings (glue.profile-name, glue.access-key-id, ...)") from None
            if code in ("InvalidInputException", "ValidationException"):  # a name or value Glue does not take
                raise UsageError(f"{self._where()} refused {op}: {code}: {message}") from None
            raise StorageError(f"{self._where()}: {op} failed: {code}: {message}") from None
        except botocore.exceptions.NoCredentialsError:
            raise NotAuthorizedError(f"{self._where()}: no AWS credentials",
                                     hint="set glue.access-key-id and glue.secret-access-key, glue.profile-name, "
                                          "or the AWS environment variables") from None
        except botocore.exceptions.EndpointConnectionError:
            raise StorageError(f"{self._where()}: cannot connect to the Glue endpoint "
                               f"{self.endpoint or '(the region default)'}") from None
        except botocore.exceptions.BotoCoreError as e:
            raise StorageError(f"{self._where()}: {op} failed: {' '.join(str(e).split())}") from None

    # -- names --------------------------------------------------------------------------------
    def _database(self, namespace: Identifier) -> str:
        if len(namespace) != 1 or not namespace[0]:
            raise UsageError(f"invalid namespace {'.'.join(namespace)!r}: a Glue namespace is one database name")
        return namespace[0]

    def _db_table(self, ident: Identifier) -> tuple[str, str]:
        if len(ident) != 2:
            raise UsageError(f"invalid table name {ident_str(ident)!r}: a Glue table is DATABASE.TABLE")
        return ident[0], ident[1]

    def _missing_namespace(self, namespace: Identifier) -> NoSuchNamespaceError:
        return NoSuchNamespaceError(f"namespace {'.'.join(namespace)} does not exist in catalog {self.name}")

    def _missing_table(self, ident: Identifier) -> NoSuchTableError:
        return NoSuchTableError(f"table {ident_str(ident)} does not exist in catalog {self.name}")

    def _exists_error(self, ident: Identifier) -> AlreadyExistsError:
        return AlreadyExistsError(f"table {ident_str(ident)} already exists in catalog {self.name}")

    # -- tables -------------------------------------------------------------------------------
    def _get_table(self, ident: Identifier) -> dict[str, Any]:
        """The Glue table of an Iceberg table (NoSuchTableError for a missing or non-Iceberg one),
        remembered as the base of the next commit."""
        db, name = self._db_table(ident)
        table = self._call("get_table", DatabaseName=db, Name=name, missing=lambda: self._missing_table(ident))["Table"]
        if not is_iceberg(table):
            raise NoSuchTableError(f"table {ident_str(ident)} in catalog {self.name} is not an Iceberg table "
                                   f"(its Glue parameter table_type is "
                                   f"{(table.get('Parameters') or {}).get(TABLE_TYPE, 'not set')!r})")
        if not (table.get("Parameters") or {}).get(METADATA_LOCATION):
            raise NoSuchTableError(f"table {ident_str(ident)} in catalog {self.name} has no metadata_location")
        self._read[ident] = table
        return table

    def load_metadata_location(self, ident: Identifier) -> str:
        return self._get_table(ident)["Parameters"][METADATA_LOCATION]

    def previous_metadata_location(self, ident: Identifier) -> str | None:
        return self._get_table(ident)["Parameters"].get(PREVIOUS_METADATA_LOCATION) or None

    def default_table_location(self, ident: Identifier) -> str:
        """The database's location and the table's name, else ``<warehouse>/<db>.db/<table>``
        (Java's and PyIceberg's Hive-style default)."""
        db, name = self._db_table(ident)
        database = self._call("get_database", Name=db, missing=lambda: self._missing_namespace(ident[:-1]))["Database"]
        if database.get("LocationUri"):
            return join(database["LocationUri"].rstrip("/"), name)
        if not self.warehouse:
            raise UsageError(f"catalog {self.name} has no warehouse and database {db} has no location: "
                             "pass --location")
        return join(self.warehouse, f"{db}.db", name)

    def _create_pointer(self, ident: Identifier, md: TableMetadata, location: str) -> str:
        db, name = self._db_table(ident)
        self.load_namespace_properties(ident[:-1])  # NoSuchNamespaceError before a file is written
        if self._exists(ident):
            raise self._exists_error(ident)
        self.write_metadata(location, md)
        try:
            self._call("create_table", DatabaseName=db, TableInput=table_input(name, location, md),
                       missing=lambda: self._missing_namespace(ident[:-1]), exists=lambda: self._exists_error(ident))
        except (AlreadyExistsError, NoSuchNamespaceError, NotAuthorizedError):
            self._delete_unreferenced(location, md)  # refused: the file is no table's
            raise
        return location

    def _exists(self, ident: Identifier) -> bool:
        """Whether the name is taken (by an Iceberg table or any other Glue table)."""
        db, name = self._db_table(ident)
        try:
            self._call("get_table", DatabaseName=db, Name=name, missing=lambda: self._missing_table(ident))
        except NoSuchTableError:
            return False
        return True

    def _delete_unreferenced(self, location: str, md: TableMetadata) -> None:
        try:
            self.io.delete(location, guard=table_guard(self.io, md.location))
        except IcectlError:
            pass

    def _swap_pointer(self, ident: Identifier, base_location: str, md: TableMetadata, location: str) -> str:
        db, name = self._db_table(ident)
        base = self._read.get(ident)
        if base is None or base["Parameters"].get(METADATA_LOCATION) != base_location:
            base = self._get_table(ident)
        if base["Parameters"][METADATA_LOCATION] != base_location:
            raise CommitConflictError(f"table {ident_str(ident)} changed since it was read (its metadata "
                                      f"location is no longer {base_location})")
        version = base.get("VersionId")
        if not version:
            raise CommitConflictError(f"cannot commit to table {ident_str(ident)}: Glue returned no VersionId")
        self.write_metadata(location, md)
        request = table_input(name, location, md, glue_table=base, previous_location=base_location)
        try:
            self._update_table(db, request, version)
        except CommitConflictError:
            self._read.pop(ident, None)
            if self._points_at(ident, location):
                # botocore retried a request whose first answer was lost, and the first one had
                # been carried out: the commit happened.
                return location
            self._delete_unreferenced(location, md)
            raise CommitConflictError(f"table {ident_str(ident)} changed since it was read: Glue refused the "
                                      f"update of table version {version} (ConcurrentModificationException)") from None
        except UnansweredRequest as e:
            self._read.pop(ident, None)
            self._check_commit(ident, location, version, e, md)
        except (NoSuchTableError, NotAuthorizedError, StorageError):
            self._read.pop(ident, None)
            self._delete_unreferenced(location, md)
            raise
        self._read.pop(ident, None)
        return location

    def _points_at(self, ident: Identifier, location: str) -> bool:
        try:
            return self._committed(self._get_table(ident), location)
        except IcectlError:
            return False

    def _committed(self, table: dict[str, Any], location: str) -> bool:
        """Whether ``location`` is the table's metadata file, or one it was committed on top of
        (its previous file, or in its metadata log), as Java's ``checkCommitStatus`` looks."""
        params = table["Parameters"]
        if location in (params[METADATA_LOCATION], params.get(PREVIOUS_METADATA_LOCATION)):
            return True
        current = read_metadata_file(self.io, params[METADATA_LOCATION])
        return any(e.metadata_file == location for e in current.metadata_log)

    def _update_table(self, db: str, request: dict[str, Any], version: str) -> None:
        """UpdateTable guarded by the table's VersionId (ConcurrentModificationException: a
        CommitConflictError); a read timeout, a broken connection or a server error is an
        :class:`UnansweredRequest`, for the caller to check what happened."""
        ident = (db, request["Name"])
        self._call("update_table", DatabaseName=db, TableInput=request, SkipArchive=self.skip_archive,
                   VersionId=version, missing=lambda: self._missing_table(ident), ambiguous=True)

    def _check_commit(self, ident: Identifier, location: str, version: str, error: Exception,
                      md: TableMetadata | None = None) -> None:
        """After an UpdateTable whose answer was lost, read the table again (as Java's
        ``checkCommitStatus``): committed when it points at ``location`` or has it in its history
        (another writer committed on top); failed for certain when
        its VersionId moved on to another writer's (ours, guarded by ``version``, can no longer
        apply): a conflict the transaction plans again for (the unreferenced file deleted);
        otherwise (the table unchanged, or unreadable: the request may still arrive) unknown."""
        cause = " ".join(str(error).split())
        try:
            table = self._get_table(ident)
            if self._committed(table, location):
                return
        except IcectlError as e:
            table, cause = None, f"{cause}; reading the table again: {e.message}"
        if table is not None and table.get("VersionId") != version:
            if md is not None:
                self._delete_unreferenced(location, md)
            raise CommitConflictError(f"table {ident_str(ident)} changed since it was read: the commit did not "
                                      f"happen ({cause})") from None
        raise CommitStateUnknownError(
            f"the commit to table {ident_str(ident)} may or may not have happened: {self._where()}: {cause}",
            hint=f"check the table's metadata location; {location} is kept") from None

    def replace_metadata(self, ident: Identifier, base_location: str, metadata: TableMetadata) -> TableState:
        self._read.pop(ident, None)  # compare against the table as it is now
        return super().replace_metadata(ident, base_location, metadata)

    def _iceberg_tables(self, ns: Identifier) -> Iterator[dict[str, Any]]:
        """The database's Iceberg tables as ``get_tables`` gives them, a page at a time."""
        db = self._database(ns)
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {"DatabaseName": db}
            if token:
                kwargs["NextToken"] = token
            page = self._call("get_tables", missing=lambda: self._missing_namespace(ns), **kwargs)
            yield from (t for t in page.get("TableList", []) if is_iceberg(t))
            token = page.get("NextToken")
            if not token:
                return

    def list_tables(self, namespace: Identifier | None = None) -> list[Identifier]:
        namespaces = self.list_namespaces() if namespace is None else [namespace]
        return sorted((self._database(ns), t["Name"]) for ns in namespaces for t in self._iceberg_tables(ns))

    def walk_tables(self) -> Iterator[ListedTable]:
        """Each database's Iceberg tables a ``get_tables`` page at a time, with the metadata
        location their parameters hold (no ``get_table`` per table, nothing remembered)."""
        for ns in self.list_namespaces():
            db = self._database(ns)
            for t in self._iceberg_tables(ns):
                yield ListedTable((db, t["Name"]), (t.get("Parameters") or {}).get(METADATA_LOCATION) or None)

    def drop_table(self, ident: Identifier, *, purge: bool = False) -> None:
        """Delete the Glue table (an Iceberg one only). The files stay, with ``purge`` too: the
        operation that asks for a purge deletes them."""
        db, name = self._db_table(ident)
        self._get_table(ident)
        self._call("delete_table", DatabaseName=db, Name=name, missing=lambda: self._missing_table(ident))
        self._read.pop(ident, None)

    def rename_table(self, source: Identifier, destination: Identifier) -> None:
        """As Java and PyIceberg (Glue has no rename): create the destination from the source's
        Glue table, then delete the source; when that fails, the destination is deleted again."""
        db, name = self._db_table(source)
        to_db, to_name = self._db_table(destination)
        table = self._get_table(source)
        self.load_namespace_properties(destination[:-1])
        request: dict[str, Any] = {"Name": to_name, "TableType": table.get("TableType") or EXTERNAL_TABLE}
        for key in ("Owner", "Parameters", "StorageDescriptor", "Description"):
            if key in table:
                request[key] = table[key]
        self._call("create_table", DatabaseName=to_db, TableInput=request,
                   missing=lambda: self._missing_namespace(destination[:-1]),
                   exists=lambda: self._exists_error(destination))
        try:
            self._call("delete_table", DatabaseName=db, Name=name, missing=lambda: self._missing_table(source))
        except IcectlError:
            try:
                self._call("delete_table", DatabaseName=to_db, Name=to_name)
            except IcectlError:
                pass
            raise
        self._read.pop(source, None)

    def register_table(self, ident: Identifier, metadata_location: str, *, overwrite: bool = False) -> TableState:
        db, name = self._db_table(ident)
        md = read_metadata_file(self.io, metadata_location)
        self._check_format_version(metadata_location, md)
        if overwrite:
            try:
                base = self._get_table(ident)
            except NoSuchTableError:
                base = None
            if base is not None:
                request = table_input(name, metadata_location, md, glue_table=base,
                                      previous_location=base["Parameters"][METADATA_LOCATION])
                self._read.pop(ident, None)
                try:
                    self._update_table(db, request, base["VersionId"])
                except UnansweredRequest as e:
                    self._check_commit(ident, metadata_location, base["VersionId"], e)
                return self.load(ident)
        self._call("create_table", DatabaseName=db, TableInput=table_input(name, metadata_location, md),
                   missing=lambda: self._missing_namespace(ident[:-1]), exists=lambda: self._exists_error(ident))
        return self.load(ident)

    # -- namespaces ---------------------------------------------------------------------------
    def list_namespaces(self, parent: Identifier | None = None) -> list[Identifier]:
        if parent:
            self.load_namespace_properties(parent)  # NoSuchNamespaceError
            return []  # Glue databases have no children
        out: list[Identifier] = []
        token: str | None = None
        while True:
            page = self._call("get_databases", **({"NextToken": token} if token else {}))
            out += [(d["Name"],) for d in page.get("DatabaseList", [])]
            token = page.get("NextToken")
            if not token:
                break
        return sorted(out)

    def create_namespace(self, namespace: Identifier, properties: dict[str, str] | None = None) -> None:
        db = self._database(namespace)
        self._call("create_database", DatabaseInput=_database_input(db, properties or {}),
                   exists=lambda: AlreadyExistsError(f"namespace {db} already exists in catalog {self.name}"))

    def drop_namespace(self, namespace: Identifier) -> None:
        db = self._database(namespace)
        page = self._call("get_tables", DatabaseName=db, MaxResults=1,
                          missing=lambda: self._missing_namespace(namespace))
        if page.get("TableList"):
            iceberg = "Iceberg" if is_iceberg(page["TableList"][0]) else "non-Iceberg"
            raise NamespaceNotEmptyError(f"namespace {db} is not empty: it holds {iceberg} tables")
        self._call("delete_database", Name=db, missing=lambda: self._missing_namespace(namespace))

    def load_namespace_properties(self, namespace: Identifier) -> dict[str, str]:
        """The database's parameters, its ``LocationUri`` as ``location`` and its ``Description``
        (PyIceberg's mapping)."""
        db = self._database(namespace)
        database = self._call("get_database", Name=db, missing=lambda: self._missing_namespace(namespace))["Database"]
        props = dict(database.get("Parameters") or {})
        if database.get("LocationUri"):
            props["location"] = database["LocationUri"]
        if database.get("Description"):
            props["Description"] = database["Description"]
        return props

    def update_namespace_properties(self, namespace: Identifier, *, updates: dict[str, str] | None = None,
                                    removals: Iterable[str] = ()) -> NamespacePropertiesChange:
        updates, removal_list = check_property_changes(updates, removals)
        db = self._database(namespace)
        current = self.load_namespace_properties(namespace)
        removed = [k for k in removal_list if k in current]
        missing = [k for k in removal_list if k not in current]
        new = {k: v for k, v in current.items() if k not in removed}
        new.update(updates)
        self._call("update_database", Name=db, DatabaseInput=_database_input(db, new),
                   missing=lambda: self._missing_namespace(namespace))
        return NamespacePropertiesChange(tuple(sorted(updates)), tuple(sorted(removed)), tuple(sorted(missing)))


def _database_input(name: str, properties: dict[str, str]) -> dict[str, Any]:
    """``DatabaseInput``: ``location`` is its LocationUri, ``Description`` its description, every
    other property a parameter (PyIceberg's ``_construct_database_input``)."""
    out: dict[str, Any] = {"Name": name}
    params = {}
    for k, v in properties.items():
        if k == "Description":
            out["Description"] = v
        elif k == "location":
            out["LocationUri"] = v
        else:
            params[k] = v
    out["Parameters"] = params
    return out
