"""The demo table in a Hive Metastore and in Glue (moto), for the crash suite: the table's files
in a local folder put back byte for byte as :class:`~crash_state.DemoWorkspace` does, and the
catalog's entry (the Hive table, the Glue table) put back to the one of the pristine copy.

``untouched`` also compares the catalog's entry; :meth:`locks_left` and :meth:`check_lock_expires`
tell whether a run left the Hive table lock behind and whether the next writer clears it (Java's
release of a lock whose heartbeat is older than ``iceberg.hive.lock-heartbeat-interval-ms``).
"""
from __future__ import annotations

import copy
import io
import os
import pathlib
import shutil
import sys
from dataclasses import dataclass, field
from typing import Any

import yaml

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from crash_state import DemoWorkspace  # noqa: E402

HEARTBEAT_MS = 1000  # a dead writer's lock is cleared by the next writer after this


@dataclass
class RemoteWorkspace(DemoWorkspace):
    """``NAMESPACE.events`` in a metastore catalog (``props``), its files under ``root/wh``."""

    namespace: str = "demo"
    recovers_lost_answers: bool = False  # every call's lost answer ends in a successful command
    props: dict[str, str] = field(default_factory=dict)
    _pristine_entry: Any = None

    @property
    def events(self) -> str:
        return f"{self.namespace}.events"

    def catalog_props(self) -> dict[str, str]:
        return {**self.props, "warehouse": self.warehouse}

    def catalog(self) -> Any:
        from icectl.catalog import CatalogConfig, build_catalog

        return build_catalog(CatalogConfig("default", self.catalog_props()))

    @property
    def catalog_args(self) -> list[str]:
        return []

    def run(self, *args: str) -> tuple[int, str, str]:
        from icectl.cli.context import Env
        from icectl.cli.main import run

        config = self.root.with_name(self.root.name + ".yaml")
        if not config.exists():

            config.write_text(yaml.safe_dump({"default-catalog": "crash", "catalog": {"crash": self.catalog_props()}}))
        old = os.environ.get("ICECTL_CONFIG")
        os.environ["ICECTL_CONFIG"] = str(config)
        try:
            env = Env(stdout=io.StringIO(), stderr=io.StringIO())
            code = run(["-c", "crash", *args], env)
        finally:
            if old is None:
                os.environ.pop("ICECTL_CONFIG", None)
            else:
                os.environ["ICECTL_CONFIG"] = old
        return code, env.stdout.getvalue(), env.stderr.getvalue()

    def build(self) -> "RemoteWorkspace":
        from icectl.errors import AlreadyExistsError
        from icectl.ops.demo import build_demo

        self.root.mkdir(parents=True)
        (self.root / "wh").mkdir()
        catalog = self.catalog()
        try:
            catalog.create_namespace((self.namespace,), {"location": f"{self.warehouse}/{self.namespace}.db"})
        except AlreadyExistsError:
            pass
        build_demo(catalog, self.namespace, format_version=self.format_version)
        shutil.copytree(self.root, self.pristine)
        self._pristine_entry = self.entry()
        return self

    def reset(self) -> None:
        super().reset()
        self.put_entry(self._pristine_entry)

    def untouched(self) -> bool:
        return super().untouched() and self.pointer(self.entry()) == self.pointer(self._pristine_entry)

    # the catalog's entry of the table
    def entry(self) -> Any:
        raise NotImplementedError

    def put_entry(self, entry: Any) -> None:
        raise NotImplementedError

    def pointer(self, entry: Any) -> str:
        raise NotImplementedError


@dataclass
class HiveWorkspace(RemoteWorkspace):
    recovers_lost_answers: bool = True
    # A writer that died holding the table lock, taken again at each reset: the command waits
    # (check_lock), finds it (show_locks), clears it (unlock) and checks again.
    dead_lock: bool = False
    heartbeat_ms: int = HEARTBEAT_MS

    def catalog_props(self) -> dict[str, str]:
        return {**super().catalog_props(), "type": "hive",
                "iceberg.hive.lock-heartbeat-interval-ms": str(self.heartbeat_ms),
                "iceberg.hive.lock-timeout-ms": "30000"}

    def _client(self) -> Any:
        return self.catalog().client

    def entry(self) -> Any:
        return self._client().call(lambda c: c.get_table(self.namespace, "events"))

    def put_entry(self, entry: Any) -> None:
        client = self._client()
        for lk in self._locks():
            from hive_metastore.ttypes import UnlockRequest

            client.call(lambda c: c.unlock(UnlockRequest(lockid=lk.lockid)))
        client.call(lambda c: c.alter_table(self.namespace, "events", copy.deepcopy(entry)))
        if self.dead_lock:
            from hive_metastore.ttypes import LockComponent, LockLevel, LockRequest, LockState, LockType

            component = LockComponent(type=LockType.EXCLUSIVE, level=LockLevel.TABLE, dbname=self.namespace,
                                      tablename="events")
            request = LockRequest(component=[component], user="dead", hostname="dead", agentInfo="dead-writer")
            assert client.call(lambda c: c.lock(request)).state == LockState.ACQUIRED

    def pointer(self, entry: Any) -> str:
        return (entry.parameters or {}).get("metadata_location", "")

    def _locks(self) -> list[Any]:
        from hive_metastore.ttypes import ShowLocksRequest

        req = ShowLocksRequest(dbname=self.namespace, tablename="events")
        return list(self._client().call(lambda c: c.show_locks(req)).locks or [])

    def locks_left(self) -> list[Any]:
        """The locks on the table but the dead writer's of the set-up."""
        return [lk for lk in self._locks() if lk.agentInfo != "dead-writer"]

    def check_lock_expires(self) -> None:
        """A new writer takes the table lock although a dead one still holds it (it clears it once
        its heartbeat is older than the interval), and releases it."""
        catalog = self.catalog()
        with catalog._table_lock(self.namespace, "events"):
            pass


class GlueWorkspace(RemoteWorkspace):
    def catalog_props(self) -> dict[str, str]:
        return {**super().catalog_props(), "type": "glue"}

    def _client(self) -> Any:
        return self.catalog().client

    def entry(self) -> Any:
        return self._client().get_table(DatabaseName=self.namespace, Name="events")["Table"]

    def put_entry(self, entry: Any) -> None:
        keep = ("Name", "Description", "Owner", "TableType", "Parameters", "StorageDescriptor", "PartitionKeys")
        request = {k: copy.deepcopy(entry[k]) for k in keep if k in entry}
        self._client().update_table(DatabaseName=self.namespace, TableInput=request)

    def pointer(self, entry: Any) -> str:
        return (entry.get("Parameters") or {}).get("metadata_location", "")

    def locks_left(self) -> list[Any]:
        return []  # Glue commits take no lock

    def check_lock_expires(self) -> None:
        pass
