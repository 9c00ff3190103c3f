"""PostgreSQL for the SQL catalog, through psycopg 3 (the ``postgresql`` extra).

URIs: ``postgresql://user:password@host:port/db`` (also ``postgres://``, SQLAlchemy's
``postgresql+psycopg://`` and ``postgresql+psycopg2://``), any libpq query parameter
(``?sslmode=require``), and Iceberg Java's ``jdbc:postgresql://host:port/db?user=u&password=p``
(pgJDBC's ``ApplicationName``, ``connectTimeout``/``loginTimeout`` and ``currentSchema`` are
translated; ``ssl=true`` is ``sslmode=require``). Without a password in the URI, libpq's
``PGPASSWORD`` and ``~/.pgpass`` apply, which keep it out of shell history and configuration.

Nothing here ever puts a password in a message: errors name the server as ``user@host:port/db``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, quote, urlsplit

from icectl.errors import (NotAuthorizedError, NotFoundError, StorageError, UnsupportedError, UsageError,
                           install_hint)

SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://", "postgresql+psycopg2://",
           "jdbc:postgresql:")
DEFAULT_CONNECT_TIMEOUT = "10"

# pgJDBC's connection properties that libpq spells differently (pgJDBC: "Connection Parameters").
_JDBC_KEYS = {"applicationname": "application_name", "connecttimeout": "connect_timeout",
              "logintimeout": "connect_timeout", "sslmode": "sslmode", "user": "user", "password": "password",
              "sslcert": "sslcert", "sslkey": "sslkey", "sslrootcert": "sslrootcert", "options": "options"}


def is_postgres_uri(uri: str) -> bool:
    return uri.startswith(SCHEMES)


def redact_uri(uri: str) -> str:
    """``uri`` with any password replaced by ``***`` (user info and ``password=`` parameters)."""
    uri = re.sub(r"(://[^/?#@:]*:)[^/?#]*@", r"\1***@", uri)  # to the last @ of the authority
    return re.sub(r"(?i)([?&;]password=)[^&;]*", r"\1***", uri)


def not_authorized(message: str, *, hint: str | None = None) -> Exception:
    """The error for a refused login or a missing privilege (exit code 11)."""
    return NotAuthorizedError(message, hint=hint)


@dataclass(frozen=True)
class Server:
    """Where a catalog's database is, for messages: never the password."""

    host: str
    port: str
    dbname: str
    user: str

    def __str__(self) -> str:
        user = f"{self.user}@" if self.user else ""
        return f"{user}{self.host}:{self.port}/{self.dbname}"


def connection_params(uri: str) -> dict[str, str]:
    """libpq keywords for ``uri`` (with the password, to be handed to libpq only)."""
    if uri.startswith("jdbc:postgresql:"):
        return _jdbc_params(uri)
    for scheme in ("postgresql+psycopg://", "postgresql+psycopg2://"):
        if uri.startswith(scheme):
            uri = "postgresql://" + uri[len(scheme):]
    return _libpq_params(uri)


def _libpq_params(dsn: str) -> dict[str, str]:
    from psycopg.conninfo import conninfo_to_dict  # type: ignore

    try:
        params = conninfo_to_dict(dsn)
    except Exception as e:  # psycopg.ProgrammingError; the message may quote the URI: keep the reason
        reason = str(e).splitlines()[0].split(":", 1)[0] if str(e) else type(e).__name__
        raise UsageError(f"invalid PostgreSQL catalog URI {redact_uri(dsn)}: {reason}",
                         hint="postgresql://user@host:port/database?sslmode=... (libpq's URI form)") from None
    return {k: str(v) for k, v in params.items() if v is not None}


def _jdbc_params(uri: str) -> dict[str, str]:
    rest = uri[len("jdbc:postgresql:"):]
    if not rest.startswith("//"):  # jdbc:postgresql:database (localhost)
        rest = "//localhost/" + rest.lstrip("/")
    parts = urlsplit("postgresql:" + rest)
    base = f"postgresql://{parts.netloc}{parts.path}"
    query: dict[str, str] = {}
    options: list[str] = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        k = key.lower()
        if k == "ssl":
            if value.lower() in ("", "true"):
                query.setdefault("sslmode", "require")
        elif k == "currentschema":
            options.append(f"-c search_path={value}")
        elif k in _JDBC_KEYS:
            query[_JDBC_KEYS[k]] = value
        else:
            raise UsageError(f"unsupported connection parameter {key!r} in PostgreSQL catalog URI {redact_uri(uri)}",
                             hint="supported: user, password, sslmode, ssl, ApplicationName, connectTimeout, "
                                  "currentSchema, sslcert, sslkey, sslrootcert, options")
    if options:
        query["options"] = " ".join(filter(None, [query.get("options", "")] + options))
    if query:
        base += "?" + "&".join(f"{k}={quote(v, safe='')}" for k, v in query.items())
    return _libpq_params(base)


def server_of(params: dict[str, str]) -> Server:
    import getpass
    import os

    host = params.get("host") or params.get("hostaddr") or os.environ.get("PGHOST") or "localhost"
    port = params.get("port") or os.environ.get("PGPORT") or "5432"
    user = params.get("user") or os.environ.get("PGUSER") or ""
    if not user:
        try:
            user = getpass.getuser()
        except Exception:  # pragma: no cover - no user name at all
            user = ""
    dbname = params.get("dbname") or os.environ.get("PGDATABASE") or user
    return Server(host, port, dbname, user)


def connect(uri: str) -> tuple[Any, Server]:
    """An autocommit psycopg connection (every statement is its own transaction; the catalog opens
    one explicitly where it needs several), and the server it reached."""
    try:
        import psycopg  # type: ignore
    except ImportError:
        raise UnsupportedError("a PostgreSQL catalog needs psycopg, which this install lacks",
                               hint=install_hint("postgresql")) from None
    params = connection_params(uri)
    params.setdefault("connect_timeout", DEFAULT_CONNECT_TIMEOUT)
    params.setdefault("application_name", "icectl")
    server = server_of(params)
    try:
        conn = psycopg.connect(autocommit=True, **params)
    except psycopg.Error as e:
        raise connection_error(e, server) from None
    return conn, server


def _server_message(e: BaseException) -> str:
    """libpq's text without the ``connection failed: connection to server at ... failed:`` frame."""
    text = " ".join(str(e).split())
    text = re.sub(r"^connection failed:\s*", "", text)
    text = re.sub(r'^connection to server (at|on) .*? failed:\s*', "", text)
    text = re.sub(r"^(FATAL|ERROR):\s*", "", text)
    return text or type(e).__name__


def connection_error(e: BaseException, server: Server) -> Exception:
    """One icectl error for a failed connection: unreachable (exit 10), a refused login (not
    authorized), or a database that does not exist (exit 3)."""
    msg = _server_message(e)
    low = msg.lower()
    where = f"PostgreSQL server {server}"
    if ("password authentication failed" in low or "no password supplied" in low
            or "authentication failed" in low or ("role" in low and "does not exist" in low)
            or "pg_hba.conf" in low):
        return not_authorized(f"{where} refused the login: {msg}",
                              hint="check the user and password (in the URI, PGPASSWORD or ~/.pgpass)")
    if "permission denied" in low:
        return not_authorized(f"{where}: {msg}", hint="grant the user CONNECT on the database")
    if "database" in low and "does not exist" in low:
        return NotFoundError(f"catalog database {server.dbname} does not exist on {where}: {msg}",
                             hint="create it (createdb) or check the URI's database name")
    reason = "connection refused" if "connection refused" in low else msg
    return StorageError(f"cannot reach {where}: {reason}",
                        hint="is the server running and accepting TCP connections on that host and port?")


def query_error(e: BaseException, server: Server) -> Exception:
    """An icectl error for a statement that failed on an open connection."""
    import psycopg  # type: ignore

    where = f"PostgreSQL server {server}"
    msg = _server_message(e)
    if isinstance(e, psycopg.errors.InsufficientPrivilege):
        return not_authorized(f"{where}: {msg}",
                              hint="the catalog needs SELECT, INSERT, UPDATE and DELETE on iceberg_tables and "
                                   "iceberg_namespace_properties (and CREATE on the schema to create them)")
    if isinstance(e, psycopg.OperationalError):
        return StorageError(f"lost the connection to {where}: {msg}")
    return StorageError(f"{where}: {msg}")
