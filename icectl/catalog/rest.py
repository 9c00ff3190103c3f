"""The REST catalog (``type: rest``): the Iceberg REST catalog API (``open-api/rest-catalog-open-api.yaml``).

The server owns the pointer: a commit sends the operation's requirements and updates
(``POST /v1/{prefix}/namespaces/{ns}/tables/{table}``) and the server applies them. Creating a
table is the spec's create transaction: ``stage-create`` tells icectl where the server puts the
table (written nowhere), then a commit with ``assert-create`` sends icectl's create updates, so
the server builds the first metadata from exactly the updates the SQL catalog applies itself.

Configuration uses PyIceberg's keys: ``uri``, ``warehouse``, ``credential``, ``token``,
``scope``, ``audience``, ``resource``, ``oauth2-server-uri``, ``header.<Name>``,
``rest.sigv4-enabled`` / ``rest.signing-region`` / ``rest.signing-name``, ``prefix``; and Iceberg
Java's ``rest.client.connection-timeout-ms``, ``rest.client.socket-timeout-ms``,
``rest-page-size``. ``GET /v1/config`` comes first: its ``defaults``, then the client's
properties, then its ``overrides`` make the catalog's properties; its ``endpoints`` say which
operations the server offers (an operation it does not list is refused before any request).
"""
from __future__ import annotations

import threading
from typing import Any, Iterable, Iterator

from icectl import secrets
from icectl.catalog.base import Catalog, ListedTable, NamespacePropertiesChange, check_property_changes
from icectl.catalog.rest_http import COMMIT, READ, WRITE, RestClient, encode_name, encode_namespace
from icectl.errors import (
    AlreadyExistsError,
    CommitConflictError,
    CommitStateUnknownError,
    IcectlError,
    NoSuchNamespaceError,
    UnsupportedError,
    UsageError,
)
from icectl.spec.view import parse_view_metadata
from icectl.io import FileIO, has_scheme, join
from icectl.io.safety import table_guard
from icectl.spec.metadata import TableMetadata, parse_table_metadata
from icectl.table.catalog_contract import TableState, ViewState
from icectl.table.identifier import Identifier, ident_str
from icectl.table.metadata_io import metadata_bytes, new_metadata_location, read_view_metadata_file
from icectl.table.requirements import AssertCreate, TableRequirement
from icectl.table.updates import TableUpdate, UpgradeFormatVersion, updates_json

ACCESS_DELEGATION = "X-Iceberg-Access-Delegation"

# The spec's default endpoints, for a server whose /v1/config lists none.
DEFAULT_ENDPOINTS = frozenset({
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
})

LIST_NAMESPACES = "GET /v1/{prefix}/namespaces"
CREATE_NAMESPACE = "POST /v1/{prefix}/namespaces"
LOAD_NAMESPACE = "GET /v1/{prefix}/namespaces/{namespace}"
DROP_NAMESPACE = "DELETE /v1/{prefix}/namespaces/{namespace}"
UPDATE_NAMESPACE = "POST /v1/{prefix}/namespaces/{namespace}/properties"
LIST_TABLES = "GET /v1/{prefix}/namespaces/{namespace}/tables"
CREATE_TABLE = "POST /v1/{prefix}/namespaces/{namespace}/tables"
LOAD_TABLE = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}"
UPDATE_TABLE = "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"
DROP_TABLE = "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}"
REGISTER_TABLE = "POST /v1/{prefix}/namespaces/{namespace}/register"
RENAME_TABLE = "POST /v1/{prefix}/tables/rename"
LIST_VIEWS = "GET /v1/{prefix}/namespaces/{namespace}/views"
CREATE_VIEW = "POST /v1/{prefix}/namespaces/{namespace}/views"
LOAD_VIEW = "GET /v1/{prefix}/namespaces/{namespace}/views/{view}"
DROP_VIEW = "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}"
# Not in Iceberg 1.10's REST spec; later specs add it (RegisterViewRequest: name, metadata-location).
REGISTER_VIEW = "POST /v1/{prefix}/namespaces/{namespace}/register-view"


def is_rest_uri(uri: str | None) -> bool:
    return bool(uri) and uri.lower().startswith(("http://", "https://"))  # type: ignore[union-attr]


class RestCatalog(Catalog):
    kind = "rest"

    def __init__(self, name: str, properties: dict[str, str]):
        uri = properties.get("uri")
        if not is_rest_uri(uri):
            raise UsageError(f"REST catalog {name} needs a uri starting with http:// or https://, not {uri!r}")
        self.name = name
        self.uri = uri.rstrip("/")  # type: ignore[union-attr]
        secrets.remember_properties(properties)
        self.client = RestClient(name, self.uri, dict(properties))
        self.properties = self._fetch_config(dict(properties))
        secrets.remember_properties(self.properties)
        self.client.configure(self.properties)
        self.io = FileIO(dict(self.properties))
        self._lock = threading.Lock()
        self._table_config: dict[Identifier, dict[str, str]] = {}
        self._table_io: dict[Identifier, tuple[tuple[tuple[str, str], ...], FileIO]] = {}
        self._locations: dict[Identifier, str] = {}
        self._format_versions: dict[Identifier, int] = {}

    # -- configuration ------------------------------------------------------------------------
    def _fetch_config(self, client_props: dict[str, str]) -> dict[str, str]:
        """GET /v1/config: defaults, then the client's properties, then overrides (spec)."""
        params = {"warehouse": client_props["warehouse"]} if client_props.get("warehouse") else None
        resp = self.client.send("GET", self.uri + "/v1/config", kind=READ, params=params,
                                what="read its configuration")
        body = resp.body if isinstance(resp.body, dict) else {}
        defaults = _str_map(body.get("defaults"))
        overrides = _str_map(body.get("overrides"))
        merged = {**defaults, **client_props, **overrides}
        endpoints = body.get("endpoints")
        self.endpoints = frozenset(str(e) for e in endpoints) if isinstance(endpoints, list) else DEFAULT_ENDPOINTS
        self.prefix = merged.get("prefix", "").strip("/")
        if overrides.get("token"):
            self.client.auth.adopt(overrides["token"])
        return merged

    def _path(self, template: str, **parts: str) -> str:
        path = template.split(" ", 1)[1]
        path = path.replace("/{prefix}", f"/{self.prefix}" if self.prefix else "")
        for k, v in parts.items():
            path = path.replace("{" + k + "}", v)
        return self.uri + path

    def _require(self, endpoint: str, what: str) -> None:
        if endpoint not in self.endpoints:
            raise UnsupportedError(f"the REST catalog {self.name} does not offer {endpoint} (needed to {what})",
                                   hint="the server's /v1/config lists the endpoints it supports")

    def _call(self, endpoint: str, *, what: str, kind: str = READ, body: Any = None,
              params: dict[str, str] | None = None, headers: dict[str, str] | None = None, **parts: str) -> Any:
        self._require(endpoint, what)
        method = endpoint.split(" ", 1)[0]
        return self.client.send(method, self._path(endpoint, **parts), kind=kind, body=body, params=params,
                                headers=headers, what=what).body

    def requests_sent(self) -> int:
        return self.client.requests_sent

    # -- tables -------------------------------------------------------------------------------
    def load(self, ident: Identifier) -> TableState:
        name = ident_str(ident)
        body = self._call(LOAD_TABLE, what=f"load table {name}", headers=self._delegation(),
                          namespace=encode_namespace(ident[:-1]), table=encode_name(ident[-1]))
        return self._table_state(ident, body)

    def _delegation(self) -> dict[str, str]:
        value = self.properties.get("header." + ACCESS_DELEGATION, "vended-credentials")
        return {ACCESS_DELEGATION: value} if value else {}

    def load_listed(self, table: ListedTable) -> TableState:
        """As :meth:`load`, but nothing is remembered of the table (its storage config, its format
        version): a walk over a catalog of any size keeps nothing per table."""
        ident = table.identifier
        body = self._call(LOAD_TABLE, what=f"load table {ident_str(ident)}", namespace=encode_namespace(ident[:-1]),
                          table=encode_name(ident[-1]))
        md = self._parse_loaded(ident, body)
        return TableState(body.get("metadata-location") or "", md)

    def _parse_loaded(self, ident: Identifier, body: Any) -> TableMetadata:
        if not isinstance(body, dict) or not isinstance(body.get("metadata"), dict):
            raise IcectlError(f"the REST catalog {self.name} answered for {ident_str(ident)} without table metadata")
        return parse_table_metadata(body["metadata"], source=f"{self.name}:{ident_str(ident)}")

    def _table_state(self, ident: Identifier, body: Any) -> TableState:
        md = self._parse_loaded(ident, body)
        location = body.get("metadata-location") or ""
        config = self._storage_config(body, md)
        with self._lock:
            self._table_config[ident] = config
            self._format_versions[ident] = md.format_version
        return TableState(location, md, config=config)

    def _storage_config(self, body: dict[str, Any], md: TableMetadata) -> dict[str, str]:
        """The load result's ``config``, with the ``storage-credentials`` entry of the longest
        prefix that the table location starts with merged over it (spec: clients check
        ``storage-credentials`` before ``config``)."""
        config = _str_map(body.get("config"))
        best: dict[str, str] | None = None
        best_len = -1
        for cred in body.get("storage-credentials") or []:
            if not isinstance(cred, dict):
                continue
            prefix = str(cred.get("prefix") or "")
            if (md.location or "").startswith(prefix) and len(prefix) > best_len:
                best, best_len = _str_map(cred.get("config")), len(prefix)
        if best:
            config.update(best)
        secrets.remember_properties(config)
        return config

    def io_for(self, ident: Identifier) -> FileIO:
        with self._lock:
            config = self._table_config.get(ident)
            if not config:
                return self.io
            key = tuple(sorted(config.items()))
            cached = self._table_io.get(ident)
            if cached is None or cached[0] != key:
                cached = (key, FileIO({**self.io.properties, **config}))
                self._table_io[ident] = cached
            return cached[1]

    def commit(self, ident: Identifier, requirements: list[TableRequirement], updates: list[TableUpdate], *,
               now_ms: int | None = None, base_location: str | None = None) -> TableState:
        """POST the commit; the server checks the requirements and applies the updates (it keeps
        its own clock, so ``now_ms`` is not sent, and it relies on the requirements rather than on
        ``base_location``). 409 is a conflict the caller re-plans for; 500, 502, 504, a timeout
        or a dropped connection leave the outcome unknown (CommitStateUnknownError)."""
        name = ident_str(ident)
        create = any(isinstance(r, AssertCreate) for r in requirements)
        fv = next((u.format_version for u in updates if isinstance(u, UpgradeFormatVersion)), None)
        if fv is None:  # the version the updates are written for: the table's, as last loaded
            with self._lock:
                fv = self._format_versions.get(ident)
            if fv is None:
                fv = self.load(ident).metadata.format_version
        body = {"identifier": {"namespace": list(ident[:-1]), "name": ident[-1]},
                "requirements": [r.to_json() for r in requirements],
                "updates": updates_json(updates, fv)}
        what = f"create table {name}" if create else f"commit to table {name}"
        try:
            try:
                resp = self._call(UPDATE_TABLE, what=what, kind=COMMIT, body=body,
                                  namespace=encode_namespace(ident[:-1]), table=encode_name(ident[-1]))
            except NoSuchNamespaceError:
                if not create:
                    raise
                # As the SQL catalog does, creating a table creates its namespace.
                try:
                    self.create_namespace(ident[:-1])
                except AlreadyExistsError:
                    pass  # created meanwhile
                resp = self._call(UPDATE_TABLE, what=what, kind=COMMIT, body=body,
                                  namespace=encode_namespace(ident[:-1]), table=encode_name(ident[-1]))
        except UsageError as e:
            if any(isinstance(u, UpgradeFormatVersion) for u in updates) and not create:
                raise UnsupportedError(e.message, hint="the server does not allow this format version") from None
            raise
        state = self._table_state(ident, resp)
        if not state.metadata_location:
            raise IcectlError(f"the REST catalog {self.name} committed to {name} but named no metadata location")
        return state

    def default_table_location(self, ident: Identifier) -> str:
        """Where the server puts a new table: a ``stage-create`` (which writes nothing) asks it."""
        with self._lock:
            known = self._locations.get(ident)
        if known:
            return known
        try:
            # A stage-create changes nothing on the server: retried as a read.
            body = self._call(CREATE_TABLE, what=f"find a location for table {ident_str(ident)}", kind=READ,
                              body={"name": ident[-1], "schema": {"type": "struct", "schema-id": 0, "fields": []},
                                    "stage-create": True},
                              namespace=encode_namespace(ident[:-1]))
        except NoSuchNamespaceError as e:
            warehouse = self.properties.get("warehouse", "")
            if has_scheme(warehouse) or warehouse.startswith("/"):
                return join(warehouse, *ident)  # the usual layout, in a namespace the create will make
            raise NoSuchNamespaceError(e.message, hint="the server chooses where a namespace's tables live: create "
                                       "the namespace first, or pass --location") from None
        location = ((body or {}).get("metadata") or {}).get("location") if isinstance(body, dict) else None
        if not location:
            raise UsageError(f"the REST catalog {self.name} did not say where table {ident_str(ident)} would live",
                             hint="pass --location")
        with self._lock:
            self._locations[ident] = location.rstrip("/")
        return location.rstrip("/")

    def list_tables(self, namespace: Identifier | None = None) -> list[Identifier]:
        if namespace is None:
            out: list[Identifier] = []
            for ns in self.list_namespaces():
                out += self.list_tables(ns)
            return sorted(out)
        found = []
        for page in self._pages(LIST_TABLES, "identifiers", what=f"list the tables of {'.'.join(namespace)}",
                                namespace=encode_namespace(namespace)):
            for t in page:
                if isinstance(t, dict):
                    found.append(tuple(t.get("namespace") or ()) + (str(t.get("name")),))
        return sorted(found)

    def walk_tables(self) -> Iterator[ListedTable]:
        """Namespaces depth first (each level as the server lists it), and each namespace's tables
        a page at a time as the server pages them (``rest-page-size``)."""
        todo: list[Identifier] = [()]
        while todo:
            ns = todo.pop()
            if ns:
                for page in self._pages(LIST_TABLES, "identifiers", what=f"list the tables of {'.'.join(ns)}",
                                        namespace=encode_namespace(ns)):
                    for t in page:
                        if isinstance(t, dict):
                            yield ListedTable(tuple(t.get("namespace") or ns) + (str(t.get("name")),))
            todo += reversed(self.list_namespaces(ns))

    def drop_table(self, ident: Identifier, *, purge: bool = False) -> None:
        self._call(DROP_TABLE, what=f"drop table {ident_str(ident)}", kind=WRITE,
                   params={"purgeRequested": "true"} if purge else None,
                   namespace=encode_namespace(ident[:-1]), table=encode_name(ident[-1]))
        with self._lock:
            self._table_config.pop(ident, None)

    def rename_table(self, source: Identifier, destination: Identifier) -> None:
        self._call(RENAME_TABLE, what=f"rename table {ident_str(source)} to {ident_str(destination)}", kind=WRITE,
                   body={"source": _table_identifier(source), "destination": _table_identifier(destination)})

    def replace_metadata(self, ident: Identifier, base_location: str, metadata: TableMetadata) -> TableState:
        """The server applies updates itself: the metadata file is written here and registered with
        ``overwrite`` (the REST spec's ``RegisterTableRequest.overwrite``) while the table is still at
        ``base_location``. A server without it (Iceberg Java 1.10's handlers answer 409) refuses
        (UnsupportedError with its reason); the file written is then removed, unless the outcome
        is unknown."""
        name = ident_str(ident)
        io = self.io_for(ident)
        location = new_metadata_location(metadata, metadata.location or self.default_table_location(ident),
                                         base_location)
        io.write(location, metadata_bytes(metadata, location))
        try:
            if self.load_metadata_location(ident) == base_location:
                return self.register_table(ident, location, overwrite=True)
            refusal = None
        except CommitStateUnknownError:
            raise  # it may have been registered: keep the file
        except IcectlError as e:
            refusal = e
        try:
            io.delete(location, guard=table_guard(io, metadata.location or self.default_table_location(ident)))
        except (IcectlError, OSError):
            pass
        if refusal is not None:
            raise UnsupportedError(f"the catalog refused a register with overwrite of {name} ({refusal.message})",
                                   hint="a REST server needs RegisterTableRequest.overwrite for this")
        raise CommitConflictError(f"table {name} changed since it was read (its metadata location is no longer "
                                  f"{base_location}); nothing was committed")

    def register_table(self, ident: Identifier, metadata_location: str, *, overwrite: bool = False) -> TableState:
        body: dict[str, Any] = {"name": ident[-1], "metadata-location": metadata_location}
        if overwrite:
            body["overwrite"] = True
        resp = self._call(REGISTER_TABLE, what=f"register table {ident_str(ident)}", kind=WRITE, body=body,
                          headers=self._delegation(), namespace=encode_namespace(ident[:-1]))
        return self._table_state(ident, resp)

    # -- namespaces ---------------------------------------------------------------------------
    def list_namespaces(self, parent: Identifier | None = None) -> list[Identifier]:
        if parent is None:
            out: list[Identifier] = []
            todo: list[Identifier] = [()]
            while todo:
                children = self.list_namespaces(todo.pop())
                out += children
                todo += children
            return sorted(out)
        params = {"parent": "\x1f".join(parent)} if parent else None
        found: list[Identifier] = []
        what = f"list the namespaces in {'.'.join(parent)}" if parent else "list namespaces"
        for page in self._pages(LIST_NAMESPACES, "namespaces", what=what, params=params):
            found += [tuple(str(p) for p in ns) for ns in page if isinstance(ns, list)]
        return sorted(found)

    def create_namespace(self, namespace: Identifier, properties: dict[str, str] | None = None) -> None:
        if not namespace:
            raise UsageError("a namespace needs a name")
        self._call(CREATE_NAMESPACE, what=f"create namespace {'.'.join(namespace)}", kind=WRITE,
                   body={"namespace": list(namespace), "properties": dict(properties or {})})

    def drop_namespace(self, namespace: Identifier) -> None:
        self._call(DROP_NAMESPACE, what=f"drop namespace {'.'.join(namespace)}", kind=WRITE,
                   namespace=encode_namespace(namespace))

    def load_namespace_properties(self, namespace: Identifier) -> dict[str, str]:
        body = self._call(LOAD_NAMESPACE, what=f"load namespace {'.'.join(namespace)}",
                          namespace=encode_namespace(namespace))
        return _str_map((body or {}).get("properties") if isinstance(body, dict) else None)

    def update_namespace_properties(self, namespace: Identifier, *, updates: dict[str, str] | None = None,
                                    removals: Iterable[str] = ()) -> NamespacePropertiesChange:
        updates, removal_list = check_property_changes(updates, removals)
        body = self._call(UPDATE_NAMESPACE, what=f"update the properties of namespace {'.'.join(namespace)}",
                          kind=WRITE, body={"updates": updates, "removals": removal_list},
                          namespace=encode_namespace(namespace))
        body = body if isinstance(body, dict) else {}
        return NamespacePropertiesChange(updated=tuple(sorted(body.get("updated") or [])),
                                         removed=tuple(sorted(body.get("removed") or [])),
                                         missing=tuple(sorted(body.get("missing") or [])))

    # -- views (the spec's /views endpoints: offered when /v1/config lists them) -----------------------
    @property
    def supports_views(self) -> bool:  # type: ignore[override]
        return LIST_VIEWS in self.endpoints

    @property
    def registers_view_files(self) -> bool:  # type: ignore[override]
        return REGISTER_VIEW in self.endpoints

    # Iceberg Java's server deletes a dropped view's current metadata file (icectl cannot tell
    # another server's behaviour, so it assumes the same).
    view_drop_keeps_files = False

    def _check_views(self) -> None:
        if not self.supports_views:
            raise UnsupportedError(f"the REST catalog {self.name} offers no views (its /v1/config lists no "
                                   f"{LIST_VIEWS})")

    def list_views(self, namespace: Identifier | None = None) -> list[Identifier]:
        self._check_views()
        if namespace is None:
            out: list[Identifier] = []
            for ns in self.list_namespaces():
                out += self.list_views(ns)
            return sorted(out)
        found = []
        for page in self._pages(LIST_VIEWS, "identifiers", what=f"list the views of {'.'.join(namespace)}",
                                namespace=encode_namespace(namespace)):
            for t in page:
                if isinstance(t, dict):
                    found.append(tuple(t.get("namespace") or ()) + (str(t.get("name")),))
        return sorted(found)

    def load_view(self, ident: Identifier) -> ViewState:
        self._check_views()
        body = self._call(LOAD_VIEW, what=f"load view {ident_str(ident)}", namespace=encode_namespace(ident[:-1]),
                          view=encode_name(ident[-1]))
        return self._view_state(ident, body)

    def _view_state(self, ident: Identifier, body: Any) -> ViewState:
        if not isinstance(body, dict) or not isinstance(body.get("metadata"), dict):
            raise IcectlError(f"the REST catalog {self.name} answered for {ident_str(ident)} without view metadata")
        md = parse_view_metadata(body["metadata"], source=f"{self.name}:{ident_str(ident)}")
        return ViewState(str(body.get("metadata-location") or ""), md, _str_map(body.get("config")))

    def drop_view(self, ident: Identifier) -> None:
        self._check_views()
        self._call(DROP_VIEW, what=f"drop view {ident_str(ident)}", kind=WRITE,
                   namespace=encode_namespace(ident[:-1]), view=encode_name(ident[-1]))

    def register_view(self, ident: Identifier, metadata_location: str) -> ViewState:
        """``POST .../register-view`` when the server lists it (the view then points at the file,
        history and all). Iceberg 1.10's REST spec has no such endpoint: then the file is read and
        the view is created from it (``POST .../views``, a CreateViewRequest) with the current
        version's schema, SQL per dialect, default catalog and namespace, and the view's location
        and properties. The server writes a new metadata file with a new view-uuid and a history
        of one version (version 1, its own timestamp and summary); the older versions, the
        version log and the current version's summary are not carried over."""
        self._check_views()
        ns = encode_namespace(ident[:-1])
        what = f"register view {ident_str(ident)}"
        if REGISTER_VIEW in self.endpoints:
            body = self._call(REGISTER_VIEW, what=what, kind=WRITE, namespace=ns,
                              body={"name": ident[-1], "metadata-location": metadata_location})
            return self._view_state(ident, body)
        md = read_view_metadata_file(self.io, metadata_location)
        version = md.current_version
        request = {"name": ident[-1], "location": md.location, "schema": md.schema.to_json(),
                   "view-version": version.to_json(), "properties": dict(md.properties)}
        body = self._call(CREATE_VIEW, what=what, kind=WRITE, namespace=ns, body=request)
        return self._view_state(ident, body)

    def _pages(self, endpoint: str, key: str, *, what: str, params: dict[str, str] | None = None,
               **parts: str) -> Iterator[list[Any]]:
        """Each page of a paginated listing (``pageToken`` / ``next-page-token``; ``pageSize``
        from ``rest-page-size`` when set)."""
        query = dict(params or {})
        if self.properties.get("rest-page-size"):
            query["pageSize"] = self.properties["rest-page-size"]
        token: str | None = ""  # an empty pageToken asks a paginating server for its first page
        seen: set[str] = set()
        while True:
            if token:
                query["pageToken"] = token
            body = self._call(endpoint, what=what, params=query or None, **parts)
            body = body if isinstance(body, dict) else {}
            yield list(body.get(key) or [])
            token = body.get("next-page-token")
            if not token or token in seen:
                return
            seen.add(token)


def _table_identifier(ident: Identifier) -> dict[str, Any]:
    return {"namespace": list(ident[:-1]), "name": ident[-1]}


def _str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {str(k): ("" if v is None else str(v)) for k, v in value.items()}


def build_rest_catalog(name: str, properties: dict[str, str]) -> RestCatalog:
    return RestCatalog(name, properties)


__all__ = ["RestCatalog", "build_rest_catalog", "is_rest_uri"]
