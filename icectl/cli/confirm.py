"""Plan, show, ask: the one place a mutating command asks before it changes anything."""
from __future__ import annotations

from icectl.cli.context import Env
from icectl.errors import RefusedError


def confirm(env: Env, question: str, *, yes: bool) -> None:
    """Return to proceed; raise RefusedError when the user says no or cannot be asked."""
    if yes:
        return
    if not env.is_terminal(env.stdin) or not env.is_terminal(env.stderr):
        raise RefusedError("refusing to change the table without --yes: there is no terminal to ask",
                           hint="review the plan above (or --dry-run), then run again with --yes")
    env.stderr.write(f"{question} [y/N] ")
    env.stderr.flush()
    answer = env.stdin.readline().strip().lower()
    if answer not in ("y", "yes"):
        raise RefusedError("not confirmed; nothing was changed")


def progress_deleter(env: Env, io, total: int):
    """A delete function with a progress bar on stderr when it is a terminal."""
    from icectl.ops.expire import delete_files

    def run(files):
        if not env.is_terminal(env.stderr) or not files:
            return delete_files(io, files)
        from rich.progress import Progress

        with Progress(console=env.console(stderr=True), transient=True) as p:
            task = p.add_task("deleting files", total=len(files))
            return delete_files(io, files, progress=lambda n: p.advance(task, n))

    return run
