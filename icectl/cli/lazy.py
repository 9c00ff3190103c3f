"""A command group that imports a command's module only when that command is used.

``icectl --help`` lists every command from a table of names, modules and one-line helps, without
importing any command module; running a command, asking for its own ``--help`` or completing its
options imports its module (and what that module imports) then. Start-up stays fast this way, so
each command module keeps its imports at its top.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
import typer.main
from typer.core import TyperGroup

from icectl.cli.options import DEFAULT_OUTPUTS

# typer vendors click as typer._click (the version pyproject.toml requires)
from typer._click import Command as ClickCommand
from typer._click.shell_completion import CompletionItem
from typer._click.utils import make_default_short_help

from icectl.cli.help import GROUPS, WHOLE, readable_metavars


@dataclass(frozen=True)
class LazyCommand:
    """A command (or group of commands) of the app: its name, the module and attribute that define
    it (a typer command function or a ``typer.Typer`` group) and its one-line help, shown by
    ``icectl --help`` and shell completion (a test checks it is the start of the command's own help);
    and the ``--output`` formats it prints (checked before it runs)."""

    name: str
    module: str
    attr: str
    help: str
    outputs: tuple[str, ...] = DEFAULT_OUTPUTS  # the --output formats it prints

    def load(self) -> Any:
        """The click command, built by typer from the module's function or group (the module is
        imported now)."""
        obj = getattr(importlib.import_module(self.module), self.attr)
        holder = typer.Typer(rich_markup_mode=None)  # plain click help, as the root app's
        if isinstance(obj, typer.Typer):
            holder.add_typer(obj, name=self.name)
        else:
            holder.command(self.name)(obj)
        cmd = typer.main.get_group(holder).commands[self.name]
        readable_metavars(cmd, self.name)
        plain_values_as_given(cmd)
        return cmd


class ValuesAsGiven:
    """The coercion of a parameter whose value typer's own would give back unchanged.

    typer (>= 0.29) coerces each parameter's value through a pydantic ``TypeAdapter``, and importing
    pydantic costs every command run ~0.1 s of CPU (a third of ``describe``'s). A missing value
    comes out of it as None (``()`` for a parameter of several values), and a str of a parameter
    typed ``str`` (no parser, choices or path checks) as that str: those are passed as they are;
    any other value is handed to typer's coercion, built then (pydantic is loaded then)."""

    def __init__(self, plain_str: bool) -> None:
        self.plain_str = plain_str

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        many = param.multiple or param.nargs == -1
        if value is None:
            return () if many else None
        if self.plain_str and not many and type(value) is str:
            return value
        param._runtime_param = None  # typer's own, built on first use (typer.core._TyperParameter)
        return param.get_runtime_param().coerce(value, param=param, ctx=ctx)


def plain_values_as_given(cmd: Any) -> None:
    """Give each parameter of ``cmd`` (and of its subcommands) :class:`ValuesAsGiven` in place of
    typer's coercion until a value needs that: when the command asks for its parameters, so that
    those typer adds later (``--help``, ``--install-completion``) have it too. A typer without this
    hook is left as it is."""
    get_params = cmd.get_params

    def params_as_given(ctx: Any) -> list[Any]:
        params = get_params(ctx)
        for p in params:
            d = getattr(p, "type_descriptor", None)
            if d is None or not hasattr(p, "get_runtime_param") or getattr(p, "_runtime_param", False) is not None:
                continue
            plain_str = (d.annotation is str and d.parameter_info.parser is None and d.file_annotation is None
                         and not d.is_path and d.choices is None)
            p._runtime_param = ValuesAsGiven(plain_str)
        return params

    cmd.get_params = params_as_given
    for sub in (getattr(cmd, "commands", None) or {}).values():
        plain_values_as_given(sub)


class LazyGroup(TyperGroup):
    """A typer group whose subcommands are :class:`LazyCommand` entries, loaded on first use.

    Subclasses set ``lazy_commands`` (name -> entry; listed in that order)."""

    lazy_commands: ClassVar[dict[str, LazyCommand]] = {}

    def list_commands(self, ctx: Any) -> list[str]:
        return list(dict.fromkeys([*self.lazy_commands, *super().list_commands(ctx)]))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        entry = self.lazy_commands.get(cmd_name)
        if cmd is None and entry is not None:
            cmd = entry.load()
            self.add_command(cmd, cmd_name)
        return cmd

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        readable_metavars(self)
        plain_values_as_given(self)

    def _short_help(self, ctx: Any, name: str, limit: int) -> str | None:
        """The one-line help of ``name``, from the table when the command is not loaded; None for
        an unknown or hidden command."""
        if name in self.commands:
            cmd = self.commands[name]
            return None if cmd.hidden else cmd.get_short_help_str(limit)
        entry = self.lazy_commands.get(name)
        return make_default_short_help(entry.help, limit) if entry is not None else None

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The commands by group (:data:`icectl.cli.help.GROUPS`), each with its whole first
        sentence, wrapped rather than cut; commands of no group follow under "Other commands"."""
        names = [n for n in self.list_commands(ctx) if self._short_help(ctx, n, WHOLE) is not None]
        if not names:
            return
        sections = [(title, [n for n in members if n in names]) for title, members in GROUPS.items()]
        grouped = {n for _, members in sections for n in members}
        sections.append(("Other commands", [n for n in names if n not in grouped]))
        for title, members in sections:
            if members:
                with formatter.section(f"{title} commands" if title != "Other commands" else title):
                    formatter.write_dl([(n, self._short_help(ctx, n, WHOLE) or "") for n in members])

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        """The commands that start with ``incomplete`` (from the table), then the group's options."""
        results = [CompletionItem(n, help=self._short_help(ctx, n, WHOLE)) for n in self.list_commands(ctx)
                   if n.startswith(incomplete) and self._short_help(ctx, n, WHOLE) is not None]
        results.extend(ClickCommand.shell_complete(self, ctx, incomplete))
        return results
