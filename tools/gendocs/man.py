"""The roff man page generated from the command tree, icectl.errors.ExitCode and the
environment and files documented below."""
from __future__ import annotations

import re

from tools.gendocs.tree import GENERATED, METAVAR_CHOICES, PROG, ArgumentSpec, CommandSpec, OptionSpec, Tree, \
    exit_codes, first_sentence

# Documented in the man page beyond the options' own env vars (see icectl/catalog/config.py and
# icectl/cli/context.py). Env vars declared on options (envvar=...) are added automatically.
ENVIRONMENT: dict[str, str] = {
    "ICECTL_CONFIG": "Path of the configuration file to read instead of $PYICEBERG_HOME/.pyiceberg.yaml, "
                     "~/.icectl.yaml and ~/.pyiceberg.yaml. It is an error if the file does not exist.",
    "PYICEBERG_HOME": "Folder of a .pyiceberg.yaml to read (as PyIceberg does) when ICECTL_CONFIG is not set; "
                      "it comes before ~/.icectl.yaml.",
    "PYICEBERG_CATALOG__NAME__KEY": "Sets property KEY of catalog NAME over the configuration file, as "
                                    "PyIceberg does: names are case-insensitive, __ separates levels, _ "
                                    "becomes - (PYICEBERG_CATALOG__PROD__S3__SECRET_ACCESS_KEY sets "
                                    "s3.secret-access-key of prod). PYICEBERG_DEFAULT_CATALOG sets default-catalog.",
    "ICECTL_CATALOG": "Name of the catalog to use from the configuration file, as --catalog "
                      "(the option wins). Without either, the file's default-catalog is used.",
    "NO_COLOR": "If set, human-readable output is not coloured.",
    "COLUMNS": "Width of human-readable output when standard output is not a terminal (default 200).",
}
FILES: dict[str, str] = {
    "~/.icectl.yaml": "Catalog configuration, in the shape of PyIceberg's .pyiceberg.yaml: a "
                      "catalog: mapping of catalog names to properties (type, uri, warehouse, "
                      "s3.endpoint, ...) and an optional default-catalog.",
    "~/.pyiceberg.yaml": "Read instead when ~/.icectl.yaml does not exist (then ./.pyiceberg.yaml), so an "
                         "existing PyIceberg configuration works unchanged. With no configuration and neither "
                         "--uri nor --warehouse, icectl uses a local SQLite catalog in ./warehouse; "
                         "icectl catalogs shows what was found.",
}
_EXTRA_EXIT_CODES = {130: "interrupted (SIGINT)"}


def roff(text: str) -> str:
    """Escape text for roff: backslashes, hyphens (as minus, so copy-paste works), leading dots."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for ln in text.split("\n"):
        ln = ln.rstrip()
        if ln.startswith((".", "'")):
            ln = "\\&" + ln
        lines.append(ln)
    return "\n".join(lines)


def _roff_paragraphs(text: str) -> list[str]:
    out: list[str] = []
    for i, para in enumerate(p for p in re.split(r"\n\s*\n", text) if p.strip()):
        if i:
            out.append(".PP")
        out.append(roff(" ".join(para.split())))
    return out


def _bold(text: str) -> str:
    return "\\fB" + roff(text) + "\\fR"


def _ital(text: str) -> str:
    return "\\fI" + roff(text) + "\\fR"


def _arg_usage(a: ArgumentSpec) -> str:
    s = _ital(a.metavar) + ("..." if a.variadic else "")
    return s if a.required else f"[{s}]"


def _usage(c: CommandSpec) -> str:
    parts = [_bold(" ".join((PROG,) + c.path))]
    if c.options:
        parts.append("[" + _ital("OPTIONS") + "]")
    parts += [_arg_usage(a) for a in c.arguments]
    if c.subcommands:
        parts += [_ital("COMMAND"), "[" + _ital("ARGS") + "]..."]
    return " ".join(parts)


def _man_option(o: OptionSpec) -> list[str]:
    head = ", ".join(_bold(n) for n in o.names)
    if o.takes_value:
        head += " " + _ital(o.metavar)
    text = o.help
    notes = []
    if o.choices and not METAVAR_CHOICES.match(o.metavar):
        notes.append("one of: " + ", ".join(o.choices))
    if o.required:
        notes.append("required")
    if o.default is not None:
        notes.append(f"default: {o.default}")
    if o.envvar:
        notes.append(f"environment: {o.envvar}")
    if notes:
        text = (text + " " if text else "") + "(" + "; ".join(notes) + ")"
    return [".TP", head, roff(" ".join(text.split()))]


def gen_man(tree: Tree) -> str:
    root = tree.root
    title = first_sentence(root.help)
    name_line = title[:1].lower() + title[1:] if title[:2] != title[:2].upper() else title
    out: list[str] = [
        f'.\\" {GENERATED}',
        f'.TH ICECTL 1 "" "icectl {roff(tree.version)}" "User Commands"',
        ".nh",
        ".SH NAME",
        f"{PROG} \\- {roff(name_line)}",
        ".SH SYNOPSIS",
        _bold(PROG) + " [" + _ital("GLOBAL OPTIONS") + "] " + _ital("COMMAND") + " [" + _ital("OPTIONS") + "] ["
        + _ital("ARGUMENTS") + "]",
    ]
    for c in sorted(root.walk(), key=lambda c: c.path):
        if c.path and not c.subcommands:
            out += [".br", _usage(c)]
    out += [".SH DESCRIPTION"]
    out += _roff_paragraphs(root.help)
    globals_ = sorted(n for o in tree.global_options for n in o.names if n.startswith("--"))
    if globals_:
        helps = [n for o in root.options if o.is_help for n in o.names]
        out += [".PP", roff("The global options " + ", ".join(globals_[:-1]) + (" and " if len(globals_) > 1 else "")
                            + globals_[-1] + " may be given before or after the command; the others must come "
                            "before it.")]
        if helps:
            out[-1] += " " + roff("Every command also accepts " + " or ".join(helps) + ".")
    out += [
        ".PP",
        roff("Errors are reported as one line on standard error (a JSON object with --output json) and an exit "
             "status from EXIT STATUS below; --verbose adds the traceback."),
        ".SH GLOBAL OPTIONS",
    ]
    for o in root.options:
        out += _man_option(o)
    out.append(".SH COMMANDS")
    for c in sorted(root.walk(), key=lambda c: c.path):
        if not c.path:
            continue
        out += [".SS " + '"' + " ".join((PROG,) + c.path).replace('"', "\\(dq") + '"', _usage(c), ".PP"]
        out += _roff_paragraphs(c.help) if c.help else [roff("(no description)")]
        if c.arguments:
            out += [".PP", "Arguments:", ".RS"]
            for a in c.arguments:
                extra = "" if a.required else " (optional)"
                if a.choices:
                    extra += " (one of: " + ", ".join(a.choices) + ")"
                out += [".TP", _ital(a.metavar) + ("..." if a.variadic else ""),
                        roff(" ".join((a.help + extra).split()))]
            out.append(".RE")
        opts = [o for o in c.options if not o.is_help]
        if opts:
            out += [".PP", "Options:", ".RS"]
            for o in opts:
                out += _man_option(o)
            out.append(".RE")
        if c.subcommands:
            out += [".PP", "Commands:", ".RS"]
            for s in c.subcommands:
                out += [".TP", _bold(s.name), roff(s.short_help)]
            out.append(".RE")
    out.append(".SH EXIT STATUS")
    for code, name, meaning in exit_codes():
        out += [".TP", f"\\fB{code}\\fR ({name})", roff(meaning)]
    for code, meaning in sorted(_EXTRA_EXIT_CODES.items()):
        out += [".TP", f"\\fB{code}\\fR", roff(meaning)]
    env = dict(ENVIRONMENT)
    for c in root.walk():
        for o in c.options:
            if o.envvar and o.envvar not in env:
                env[o.envvar] = f"Default for {o.key}."
    out.append(".SH ENVIRONMENT")
    for var in sorted(env):
        out += [".TP", _bold(var), roff(env[var])]
    out.append(".SH FILES")
    for path, text in FILES.items():
        out += [".TP", _ital(path), roff(text)]
    out += [".SH SEE ALSO", roff("Apache Iceberg table specification: https://iceberg.apache.org/spec/"), ""]
    return "\n".join(out)
