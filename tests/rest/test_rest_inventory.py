"""``list --all`` on the real REST server (Iceberg Java's handlers): namespaces walked at two
depths, tables listed a page at a time (``rest-page-size: 1``), each loaded through the server;
a table whose metadata file the server cannot read is listed with its error, not dropped."""
from __future__ import annotations

import json
import os

from icectl.errors import ExitCode


def test_inventory_of_a_rest_catalog(rest_env):
    ns = rest_env.namespace
    rest_env.write(**{"rest-page-size": "1"})
    for args in (["namespace", "create", ns, "--yes"], ["namespace", "create", f"{ns}.sub", "--yes"],
                 ["create", f"{ns}.a", "--schema", "id:long", "--yes"],
                 ["create", f"{ns}.b", "--schema", "id:long", "--format-version", "3", "--yes"],
                 ["create", f"{ns}.sub.c", "--schema", "id:long", "--yes"],
                 ["create", f"{ns}.sub.broken", "--schema", "id:long", "--yes"]):
        code, _, err = rest_env.cli(*args)
        assert code == 0, (args, err)
    code, out, err = rest_env.cli("-o", "json", "demo", f"{ns}.sub")
    assert code == 0, err
    demo = json.loads(out)
    code, out, _ = rest_env.cli("-o", "json", "describe", f"{ns}.a")
    a = json.loads(out)
    code, out, _ = rest_env.cli("-o", "json", "describe", f"{ns}.sub.broken")
    broken = json.loads(out)["metadata_location"]
    # The server's metadata file is gone. (A truncated one makes Iceberg Java's server retry its
    # read for minutes before it answers; icectl then gives up after its socket timeout, and lists
    # the table with that storage error just the same.)
    os.unlink(broken.removeprefix("file:"))

    code, out, err = rest_env.cli("-o", "jsonl", "list", "--all")
    assert code == ExitCode.PARTIAL_FAILURE, err
    rows = [json.loads(line) for line in out.splitlines()]
    mine = [r for r in rows if r["namespace"] == ns or r["namespace"].startswith(ns + ".")]
    # Each namespace's tables, then the namespaces below it.
    assert [r["name"] for r in mine] == [f"{ns}.a", f"{ns}.b", f"{ns}.sub.broken", f"{ns}.sub.c",
                                         f"{ns}.sub.events"]
    by = {r["name"]: r for r in mine}
    assert by[f"{ns}.a"] == {"kind": "table", "name": f"{ns}.a", "namespace": ns, "format_version": 2,
                             "location": a["location"], "current_snapshot_id": None,
                             "current_snapshot_timestamp_ms": None, "current_version_id": None,
                             "current_version_timestamp_ms": None, "metadata_location": a["metadata_location"],
                             "last_updated_ms": a["last_updated_ms"], "error": None}
    assert by[f"{ns}.b"]["format_version"] == 3
    events = by[f"{ns}.sub.events"]
    assert events["metadata_location"] == demo["metadata_location"] and events["error"] is None
    code, out, _ = rest_env.cli("-o", "json", "describe", f"{ns}.sub.events")
    current = json.loads(out)["current_snapshot"]
    assert (events["current_snapshot_id"], events["current_snapshot_timestamp_ms"]) == \
        (current["snapshot_id"], current["timestamp_ms"])
    error = by[f"{ns}.sub.broken"]["error"]
    assert error is not None and by[f"{ns}.sub.broken"]["format_version"] is None
    # The server cannot read the file: HTTP 404 (not found) or 500 (storage, after the retries).
    assert error["kind"] in ("not-found", "storage"), error
    assert error["exit_code"] in (ExitCode.NOT_FOUND, ExitCode.STORAGE) and "\n" not in error["message"]
    assert f"{ns}.sub.broken" in json.loads(err)["error"]["message"]
    assert f"1 of {len(rows)} tables could not be read" in json.loads(err)["error"]["message"]
