"""Plan, show, ask: the one place a mutating command shows its plan and asks before it changes
anything."""
from __future__ import annotations

import dataclasses
from typing import Any

from icectl.cli.context import Env
from icectl.cli.output import progress_writer, render
from icectl.errors import RefusedError
from icectl.ops.maintain.expire import delete_files
from icectl.ops.maintain.expire_pending import progress_lines


def confirm_plan(env: Env, plan: Any, question: str, *, yes: bool, action: str = "change the table") -> None:
    """Show ``plan`` (a result with ``dry_run`` and ``applied`` false), then ask; return to go
    ahead, raise RefusedError (exit 6) when the user says no or cannot be asked.

    Text: the plan is printed on stdout first, with or without ``--yes``. JSON: stdout holds one
    document, so the plan document is printed there only when the command stops here (no terminal
    and no ``--yes``, or "no" at the prompt); at a prompt, the plan is shown as text on stderr."""
    if not env.json:
        render(env, plan)
    if yes:
        return
    if not env.is_terminal(env.stdin) or not env.is_terminal(env.stderr):
        if env.json:
            render(env, plan)
            hint = 'the plan is the JSON document on stdout ("applied": false); run again with --yes to apply it'
        else:
            hint = "review the plan above (or --dry-run), then run again with --yes"
        raise RefusedError(f"refusing to {action} without --yes: there is no terminal to ask", hint=hint)
    if env.json:
        render(dataclasses.replace(env, output="table", stdout=env.stderr), plan)
    env.stderr.write(f"{question} [y/N] ")
    env.stderr.flush()
    answer = env.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        if env.json:
            render(env, plan)
        raise RefusedError("not confirmed; nothing was changed", outcome=True)  # declined: not an error


def progress_deleter(env: Env, io: Any, total: int, *, location: str | None, allow_symlinks: bool = False) -> Any:
    """A delete function for the files of the table at ``location`` (each allowed by the table's
    path guard first), with a progress bar on stderr when it is a terminal."""
    def run(files):
        if not env.is_terminal(env.stderr) or not files:
            return delete_files(io, files, location=location, allow_symlinks=allow_symlinks)
        from rich.progress import Progress  # rich is heavy: loaded only for a progress bar on a terminal

        with Progress(console=env.console(stderr=True), transient=True) as p:
            task = p.add_task("deleting files", total=len(files))
            return delete_files(io, files, location=location, allow_symlinks=allow_symlinks,
                                progress=lambda n: p.advance(task, n))

    return run


class PhaseProgress:
    """``progress(phase, done, total)`` of a long operation (expire reading 100,000 manifest
    lists): a rich bar per phase on stderr when it is a terminal; otherwise timestamped lines
    (:func:`icectl.cli.output.progress_writer`, through :func:`progress_lines`) when a long phase
    starts, at each tenth and when it ends, so a cron log shows where a run is.
    ``with PhaseProgress(env, "db.t: expire") as progress:``."""

    def __init__(self, env: Env, prefix: str):
        self.env = env
        self.bar: Any = None
        self.tasks: dict[str, Any] = {}
        self.say = progress_writer(env)
        self.lines = progress_lines(lambda m: self.say(f"{prefix}: {m}"))

    def __enter__(self) -> "PhaseProgress":
        if self.env.is_terminal(self.env.stderr):
            from rich.progress import Progress  # rich is heavy: loaded only for a progress bar on a terminal

            self.bar = Progress(console=self.env.console(stderr=True), transient=True)
            self.bar.__enter__()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.__exit__(*exc)
            self.bar = None

    def __call__(self, phase: str, done: int, total: int) -> None:
        if self.bar is None:
            self.lines(phase, done, total)
            return
        if phase not in self.tasks:
            self.tasks[phase] = self.bar.add_task(phase, total=total)
        self.bar.update(self.tasks[phase], completed=done, total=total)
