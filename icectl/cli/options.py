"""Options that several commands share, as ``Annotated`` aliases (one help text everywhere)."""
from __future__ import annotations

from typing import Annotated

import typer

YesOpt = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation (for cron and Airflow).")]
