"""What the test folders that run a server of the Java oracle share (tests/hive: the Hive
Metastore; tests/rest: the REST catalog server): where the oracle lives, the markers every test of
such a folder gets, and the per-test catalog environment (a configuration file with one catalog
on the server, icectl run in-process against it, a fresh namespace).

    oracle_dir() -> pathlib.Path          $ICECTL_ORACLE_DIR, else <repo>/../shared/oracle
    add_folder_markers(items, folder, *markers)
                                          in a conftest's pytest_collection_modifyitems (tryfirst)
    CatalogEnv                            base of HiveEnv and RestEnv: write(), catalog(), cli(), table()
    catalog_env(cls, tmp_path, monkeypatch, namespace=..., **fields)
                                          ICECTL_CONFIG on tmp_path/icectl.yaml, no ICECTL_CATALOG,
                                          the working folder tmp_path; an env of ``cls``
"""
from __future__ import annotations

import io
import os
import pathlib
from dataclasses import dataclass, field
from typing import ClassVar, TypeVar

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[1]


def oracle_dir() -> pathlib.Path:
    env = os.environ.get("ICECTL_ORACLE_DIR")
    return pathlib.Path(env) if env else REPO.parent / "shared" / "oracle"


def add_folder_markers(items: list[pytest.Item], folder: pathlib.Path, *markers: str) -> None:
    """Every test below ``folder`` gets ``markers`` (a module that forgot its pytestmark still
    stays out of a run that deselects them)."""
    for item in items:
        if folder in pathlib.Path(item.path).resolve().parents:
            names = {m.name for m in item.iter_markers()}
            for marker in markers:
                if marker not in names:
                    item.add_marker(getattr(pytest.mark, marker))


@dataclass(kw_only=True)
class CatalogEnv:
    """A configuration file with catalog ``catalog_name`` of type ``catalog_type`` (the
    subclass's), and a fresh namespace for the test."""

    catalog_name: ClassVar[str]
    catalog_type: ClassVar[str]
    config_path: pathlib.Path
    namespace: str
    properties: dict[str, str] = field(default_factory=dict)
    outputs: list[str] = field(default_factory=list)  # every stdout and stderr a cli() call printed

    def write(self, **properties: str) -> None:
        """(Re)write the catalog with these properties over the ones written before."""
        self.properties.update(properties)
        self.config_path.write_text(yaml.safe_dump({
            "default-catalog": self.catalog_name,
            "catalog": {self.catalog_name: {"type": self.catalog_type, **self.properties}}}))

    def catalog(self):
        from icectl.catalog import build_catalog, resolve_catalog_config

        return build_catalog(resolve_catalog_config(self.catalog_name))

    def cli(self, *args: str) -> tuple[int, str, str]:
        from icectl.cli.context import Env
        from icectl.cli.main import run

        env = Env(stdout=io.StringIO(), stderr=io.StringIO())
        code = run(list(args), env)
        out, err = env.stdout.getvalue(), env.stderr.getvalue()
        self.outputs += [out, err]
        return code, out, err

    def table(self, name: str = "events") -> str:
        return f"{self.namespace}.{name}"


E = TypeVar("E", bound=CatalogEnv)


def catalog_env(cls: type[E], tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, *, namespace: str,
                **fields) -> E:
    cfg = tmp_path / "icectl.yaml"
    monkeypatch.setenv("ICECTL_CONFIG", str(cfg))
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    monkeypatch.chdir(tmp_path)
    return cls(config_path=cfg, namespace=namespace, **fields)
