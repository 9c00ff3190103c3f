"""The one place errors become exit codes and one-line messages (JSON errors on stderr too)."""
from __future__ import annotations

import json
import re
import traceback
from typing import Any

import typer
import typer.main

from icectl.cli.context import Env
from icectl.errors import ExitCode, IcectlError
from icectl.secrets import RedactingStream, redact


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def one_line(text: str) -> str:
    """``text`` as one printable line: a line break, another control character or a lone surrogate
    (a path read from a corrupt file may hold any of them) is written as its escape, ``\\n``,
    ``\\x00``, ``\\ud800``."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape", "backslashreplace").decode("ascii"), text)


def _emit(env: Env, kind: str, message: str, *, hint: str | None, code: int, outcome: bool = False) -> None:
    """One line on stderr: ``icectl: error: ...``, or for an outcome (:class:`~icectl.errors.Outcome`, a
    result with its exit code, not an error) ``icectl: ...``; with ``-o json`` the one JSON
    document of the error contract, whichever it is."""
    message, hint = one_line(message), one_line(hint) if hint else hint
    if env.json:
        env.stderr.write(json.dumps({"error": {"type": kind, "message": message, "hint": hint,
                                               "exit_code": int(code)}}) + "\n")
    else:
        env.stderr.write(f"icectl: {message}\n" if outcome else f"icectl: error: {message}\n")
        if hint:
            env.stderr.write(f"hint: {hint}\n")
    env.stderr.flush()


def _click_classes() -> tuple[tuple[type, ...], tuple[type, ...], tuple[type, ...]]:
    """(exit, abort, usage-error) classes of every click the running typer may raise from:
    typer >= 0.20 vendors click as ``typer._click``; older typer uses click itself."""
    exits: list[type] = [typer.Exit]
    aborts: list[type] = [typer.Abort]
    usage: list[type] = []
    for name in ("typer._click.exceptions", "click.exceptions"):
        try:
            mod = __import__(name, fromlist=["x"])
        except ImportError:
            continue
        exits += [getattr(mod, "Exit")] if hasattr(mod, "Exit") else []
        aborts += [getattr(mod, "Abort")] if hasattr(mod, "Abort") else []
        usage += [getattr(mod, "ClickException")] if hasattr(mod, "ClickException") else []
    return tuple(exits), tuple(aborts), tuple(usage)


def requested_output(args: list[str]) -> str | None:
    """The ``--output``/``-o`` value on a command line, read before click parses it, so that a
    usage error found while parsing (an unknown command or option) is reported in that format."""
    for i, a in enumerate(args):
        if a == "--":
            break
        for name in ("--output", "-o"):
            if a == name and i + 1 < len(args):
                return args[i + 1]
            if a.startswith(name + "=") or (name == "-o" and a.startswith("-o") and len(a) > 2):
                return a.split("=", 1)[1] if "=" in a else a[2:]
    return None


def _traceback(env: Env) -> None:
    env.stderr.write(redact(traceback.format_exc()))


def invoke(app: Any, args: list[str], env: Env) -> int:
    """Run the app on ``args``. Everything it writes passes through :func:`icectl.secrets.redact`:
    no token, client secret or storage key the run learned reaches stdout or stderr."""
    if not isinstance(env.stdout, RedactingStream):
        env.stdout, env.stderr = RedactingStream(env.stdout), RedactingStream(env.stderr)
    return _invoke(app, args, env)


def _invoke(app: Any, args: list[str], env: Env) -> int:
    requested = requested_output(args)
    if requested in ("json", "jsonl"):
        env.output = requested
    exits, aborts, usage = _click_classes()
    command = typer.main.get_command(app)
    try:
        with command.make_context("icectl", list(args), obj=env) as ctx:
            command.invoke(ctx)
        return 0
    except exits as e:
        return int(getattr(e, "exit_code", 0) or 0)
    except aborts:
        env.stderr.write("icectl: aborted\n")
        return int(ExitCode.REFUSED)
    except usage as e:
        if type(e).__name__ == "NoArgsIsHelpError" and getattr(e, "ctx", None) is not None:
            # bare `icectl` (or a bare group such as `icectl branch`): the help, which is no error
            env.stdout.write(e.ctx.get_help() + "\n")
            return 0
        # Usage errors: the option names and choices come from click; one line plus usage hint.
        text = e.format_message() if hasattr(e, "format_message") else str(e)
        msg = text.splitlines()[0] if text else type(e).__name__
        _emit(env, "UsageError", msg, hint="run with --help for usage", code=ExitCode.USAGE)
        return int(ExitCode.USAGE)
    except IcectlError as e:
        if env.verbose:
            _traceback(env)
        _emit(env, type(e).__name__, e.message, hint=e.hint, code=e.exit_code, outcome=e.outcome)
        return int(e.exit_code)
    except KeyboardInterrupt:
        env.stderr.write("icectl: interrupted\n")
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # a bug: still one line unless --verbose
        if env.verbose:
            _traceback(env)
        first = str(e).splitlines()[0] if str(e) else ""
        _emit(env, "InternalError", f"internal error: {type(e).__name__}: {first}",
              hint=None if env.verbose else "run with --verbose for the traceback", code=ExitCode.ERROR)
        return int(ExitCode.ERROR)
