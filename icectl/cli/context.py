"""The environment a command runs in: output format, streams, verbosity and catalog options.

Commands receive it through typer's context object, so tests can run the app with their own. The
catalog and tables a command opens come from :mod:`icectl.cli.session` (this module stays light:
``icectl --help`` imports it).
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from icectl.ops.catalogs import Catalog, CatalogConfig


@dataclass
class Env:
    output: str = "table"  # table | json | jsonl
    verbose: bool = False
    wide: bool = False  # --wide: tables keep every column and every path whole
    catalog: str | None = None
    uri: str | None = None
    warehouse: str | None = None
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    # The catalog this run opened (icectl.cli.session.open_catalog opens it once).
    opened_catalog: Catalog | None = field(default=None, repr=False, compare=False)
    # Its configuration: which catalog the options resolved to, and where it came from.
    catalog_config: CatalogConfig | None = field(default=None, repr=False, compare=False)

    @property
    def json(self) -> bool:
        """Machine output: JSON on stdout, and errors as JSON on stderr (json and jsonl)."""
        return self.output in ("json", "jsonl")

    def is_terminal(self, stream: TextIO | None = None) -> bool:
        s = stream or self.stdout
        try:
            return s.isatty()
        except (AttributeError, ValueError):
            return False

    def console(self, stderr: bool = False, *, width: int | None = None) -> Any:
        """A rich console on stdout (or stderr): on a terminal as wide as the terminal (or the
        ``COLUMNS`` variable), unless ``width`` is given."""
        from rich.console import Console  # rich is heavy: only the text output of a command loads it

        stream = self.stderr if stderr else self.stdout
        tty = self.is_terminal(stream)
        if width is None and not tty:
            width = int(os.environ.get("COLUMNS", "200"))
        return Console(file=stream, width=width, no_color=not tty or "NO_COLOR" in os.environ,
                       highlight=False, soft_wrap=not tty, force_terminal=False if not tty else None)
