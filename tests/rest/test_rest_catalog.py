"""The REST catalog against the real server: the catalog contract, pagination, /v1/config
(defaults, overrides, prefix, endpoints), errors mapped to exit codes, and the requests each
command needs."""
from __future__ import annotations

import json

import pytest

from catalog_contract import check_catalog_contract
from icectl.catalog.rest import RestCatalog
from icectl.errors import NoSuchNamespaceError, NoSuchTableError, UnsupportedError
from helpers import create_table
from rest_proxy import Fault

SCHEMA = "id:long!, name:string"


def make(catalog):
    return lambda ident: create_table(catalog, ident, schema_text=SCHEMA).metadata_location


def test_catalog_contract_over_rest(rest_env):
    cat = rest_env.catalog()
    assert isinstance(cat, RestCatalog)
    check_catalog_contract(cat, (rest_env.namespace,), make(cat))


def test_purge_is_sent_and_the_server_deletes_the_files(rest_env, proxy):
    rest_env.write(uri=proxy.url)
    cat = rest_env.catalog()
    ns = (rest_env.namespace,)
    t = create_table(cat, ns + ("p",), schema_text=SCHEMA)
    kept = create_table(cat, ns + ("k",), schema_text=SCHEMA)
    cat.drop_table(ns + ("k",))
    cat.drop_table(ns + ("p",), purge=True)
    drops = proxy.requests("DELETE", r"/tables/")
    assert [p for _, p, _ in drops] == [f"/v1/namespaces/{ns[0]}/tables/k", f"/v1/namespaces/{ns[0]}/tables/p"]
    assert proxy.log[-1][2] == 204
    import os

    assert os.path.exists(kept.metadata_location)  # a drop without purge keeps the files
    assert not os.path.exists(t.metadata_location)  # the server purged


def test_listings_follow_page_tokens(rest_env, proxy):
    rest_env.write(uri=proxy.url, **{"rest-page-size": "2"})
    cat = rest_env.catalog()
    root = (rest_env.namespace,)
    cat.create_namespace(root)
    for i in range(5):
        cat.create_namespace(root + (f"n{i}",))
    for i in range(5):
        create_table(cat, root + ("n0", f"t{i}"), schema_text=SCHEMA)
    proxy.log.clear()
    assert cat.list_namespaces(root) == [root + (f"n{i}",) for i in range(5)]
    assert len(proxy.requests("GET", r"/v1/namespaces$")) == 3  # 2 + 2 + 1
    assert cat.list_tables(root + ("n0",)) == [root + ("n0", f"t{i}") for i in range(5)]
    assert len(proxy.requests("GET", r"/tables$")) == 3


def test_config_defaults_overrides_prefix_and_endpoints(rest_env, proxy):
    """defaults < client properties < overrides; the prefix goes into every path; an endpoint
    the server does not list is refused before any request."""
    proxy.prefix = "wh1"
    proxy.config = {"defaults": {"rest-page-size": "1", "a": "default", "b": "default"},
                    "overrides": {"prefix": "wh1", "b": "override"},
                    "endpoints": ["GET /v1/{prefix}/namespaces", "POST /v1/{prefix}/namespaces",
                                  "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
                                  "POST /v1/{prefix}/namespaces/{namespace}/tables",
                                  "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"]}
    rest_env.write(uri=proxy.url, a="client", b="client")
    cat = rest_env.catalog()
    assert (cat.properties["a"], cat.properties["b"], cat.properties["rest-page-size"]) == ("client", "override", "1")
    cat.create_namespace((rest_env.namespace,))
    t = create_table(cat, (rest_env.namespace, "t"), schema_text=SCHEMA)
    assert cat.load((rest_env.namespace, "t")).metadata_location == t.metadata_location
    assert all(p.startswith("/v1/wh1/") for _, p, _ in proxy.log if p != "/v1/config")
    n = len(proxy.log)
    with pytest.raises(UnsupportedError, match="DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}"):
        cat.drop_table((rest_env.namespace, "t"))
    with pytest.raises(UnsupportedError, match="rename"):
        cat.rename_table((rest_env.namespace, "t"), (rest_env.namespace, "u"))
    assert len(proxy.log) == n  # refused before any request
    code, out, err = rest_env.cli("list", rest_env.namespace)
    assert code == 7 and "GET /v1/{prefix}/namespaces/{namespace}/tables" in err, err


def test_errors_map_to_exit_codes_with_the_servers_message(rest_env):
    cat = rest_env.catalog()
    with pytest.raises(NoSuchTableError):
        cat.load((rest_env.namespace, "missing"))
    with pytest.raises(NoSuchNamespaceError):
        cat.list_tables((rest_env.namespace,))
    code, out, err = rest_env.cli("describe", f"{rest_env.namespace}.missing")
    assert code == 3 and "Table does not exist" in err and "Traceback" not in err, err
    cat.create_namespace((rest_env.namespace,))
    code, out, err = rest_env.cli("create", f"{rest_env.namespace}.t", "--schema", SCHEMA, "--yes")
    assert code == 0, err
    code, out, err = rest_env.cli("create", f"{rest_env.namespace}.t", "--schema", SCHEMA, "--yes")
    assert code == 5 and "already exists" in err, err
    code, out, err = rest_env.cli("-o", "json", "rollback", f"{rest_env.namespace}.t", "--to-snapshot", "42", "--yes")
    assert code == 3, err


def test_uri_alone_opens_a_rest_catalog(rest_env, rest_server, tmp_path, monkeypatch):
    rest_env.catalog().create_namespace((rest_env.namespace,))
    monkeypatch.delenv("ICECTL_CONFIG")
    monkeypatch.setenv("HOME", str(tmp_path))
    code, out, err = rest_env.cli("--uri", rest_server.url, "-o", "json", "list")
    assert code == 0, err
    assert rest_env.namespace in json.loads(out)["namespaces"]


def test_describe_needs_config_and_load_only(rest_env, proxy):
    rest_env.write(uri=proxy.url)
    cat = rest_env.catalog()
    cat.create_namespace((rest_env.namespace,))
    create_table(cat, (rest_env.namespace, "t"), schema_text=SCHEMA)
    proxy.log.clear()
    proxy.headers_seen.clear()
    code, out, err = rest_env.cli("describe", f"{rest_env.namespace}.t")
    assert code == 0, err
    assert [(m, p) for m, p, _ in proxy.log] == [("GET", "/v1/config"),
                                                 ("GET", f"/v1/namespaces/{rest_env.namespace}/tables/t")]
    assert proxy.headers_seen[1].get("X-Iceberg-Access-Delegation") == "vended-credentials"


def test_a_server_error_on_a_read_is_retried(rest_env, proxy):
    rest_env.write(uri=proxy.url)
    cat = rest_env.catalog()
    cat.create_namespace((rest_env.namespace,))
    create_table(cat, (rest_env.namespace, "t"), schema_text=SCHEMA)
    proxy.log.clear()
    proxy.inject(Fault("GET", r"/tables/t$", "status", 500, times=2), Fault("GET", r"/tables/t$", "drop", nth=3))
    assert cat.load((rest_env.namespace, "t")).metadata.format_version == 2
    assert [s for _, _, s in proxy.requests("GET", r"/tables/t$")] == [500, 500, -1, 200]


def test_register_through_the_cli(rest_env):
    cat = rest_env.catalog()
    cat.create_namespace((rest_env.namespace,))
    t = create_table(cat, (rest_env.namespace, "a"), schema_text=SCHEMA)
    code, out, err = rest_env.cli("-o", "json", "register", rest_env.table("b"), t.metadata_location, "--yes")
    assert code == 0, err
    assert json.loads(out)["registered"] and cat.load((rest_env.namespace, "b")).metadata_location == t.metadata_location
    code, out, err = rest_env.cli("register", rest_env.table("b"), t.metadata_location, "--yes")
    assert code == 5 and "already exists" in err, err
