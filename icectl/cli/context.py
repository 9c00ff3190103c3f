"""The environment a command runs in: output format, streams, verbosity and catalog options.

Commands receive it through typer's context object, so tests can run the app with their own.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import Any, TextIO


@dataclass
class Env:
    output: str = "table"  # table | json
    verbose: bool = False
    catalog: str | None = None
    uri: str | None = None
    warehouse: str | None = None
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    stdin: TextIO = field(default_factory=lambda: sys.stdin)

    @property
    def json(self) -> bool:
        return self.output == "json"

    def is_terminal(self, stream: TextIO | None = None) -> bool:
        s = stream or self.stdout
        try:
            return s.isatty()
        except (AttributeError, ValueError):
            return False

    def console(self, stderr: bool = False) -> Any:
        from rich.console import Console

        stream = self.stderr if stderr else self.stdout
        tty = self.is_terminal(stream)
        width = None if tty else int(os.environ.get("COLUMNS", "200"))
        return Console(file=stream, width=width, no_color=not tty or "NO_COLOR" in os.environ,
                       highlight=False, soft_wrap=not tty, force_terminal=False if not tty else None)

    def locate_table(self, name: str) -> tuple[Any, tuple[str, ...]]:
        """(catalog, identifier) of ``NS.TABLE`` in the configured catalog, or of a table
        location or metadata file given as a path (a read-only path catalog)."""
        from icectl.catalog.path import PathCatalog, looks_like_path

        if looks_like_path(name):
            from icectl.catalog import resolve_catalog_config
            from icectl.io import FileIO

            props = {}
            if self.catalog or os.environ.get("ICECTL_CONFIG"):
                try:  # storage settings (s3.endpoint...) of the configured catalog, if any
                    props = resolve_catalog_config(self.catalog, uri=self.uri, warehouse=self.warehouse).properties
                except Exception:
                    props = {}
            pc = PathCatalog(name, FileIO(props))
            return pc, pc.identifier()
        from icectl.catalog import parse_identifier

        return self.get_catalog(), parse_identifier(name)

    def open_table(self, name: str) -> Any:
        """A table by ``NS.TABLE`` in the configured catalog, or by path (read-only)."""
        from icectl.table.loaded import load_table

        return load_table(*self.locate_table(name))

    def get_catalog(self) -> Any:
        cached = self.__dict__.get("_catalog")
        if cached is None:
            from icectl.catalog import build_catalog, resolve_catalog_config

            cached = build_catalog(resolve_catalog_config(self.catalog, uri=self.uri, warehouse=self.warehouse))
            self.__dict__["_catalog"] = cached
        return cached
