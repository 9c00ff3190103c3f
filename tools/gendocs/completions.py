"""Static bash, zsh and fish completion scripts generated from the command tree: they never
start Python on TAB."""
from __future__ import annotations

import re
from typing import Callable, Iterable, Sequence

from tools.gendocs.tree import GENERATED, PROG, CommandSpec, OptionSpec, Tree, one_line


# --------------------------------------------------------------------------------------------
# bash
# --------------------------------------------------------------------------------------------

def _sq(text: str) -> str:
    """Single-quote for POSIX shells."""
    return "'" + text.replace("'", "'\\''") + "'"


def _opts_at(tree: Tree, cmd: CommandSpec) -> list[OptionSpec]:
    """Options offered for a command: its own, plus the global ones anywhere below the root."""
    if not cmd.path:
        return list(cmd.options)
    own = {n for o in cmd.options for n in o.names}
    return list(cmd.options) + [o for o in tree.global_options if not set(o.names) & own]


def _names(options: Iterable[OptionSpec], pred: Callable[[OptionSpec], bool] = lambda o: True) -> list[str]:
    return sorted({n for o in options if pred(o) for n in o.names})


def gen_bash(tree: Tree) -> str:
    cmds = sorted(tree.root.walk(), key=lambda c: c.path)
    out: list[str] = [
        "# bash completion for icectl                                   -*- shell-script -*-",
        f"# {GENERATED}",
        "#",
        "# Use: source this file, or install it as icectl in bash-completion's completions directory",
        "# (e.g. ~/.local/share/bash-completion/completions/icectl).",
        "",
        "# Sets subcmds, opts, valopts (options taking a value) and numopts for command path $1.",
        "__icectl_spec() {",
        '    case "$1" in',
    ]
    for c in cmds:
        opts = _opts_at(tree, c)
        out += [
            f"        {_sq(c.key)})",
            f"            subcmds={_sq(' '.join(s.name for s in c.subcommands))}",
            f"            opts={_sq(' '.join(_names(opts)))}",
            f"            valopts={_sq(' '.join(_names(opts, lambda o: o.takes_value)))}",
            f"            numopts={_sq(' '.join(_names(opts, lambda o: o.value_kind == 'number')))}",
            "            ;;",
        ]
    out += [
        "        *)",
        "            subcmds='' opts='' valopts='' numopts=''",
        "            ;;",
        "    esac",
        "}",
        "",
        "# Prints the choices of option $2 of command path $1 (empty if it has none).",
        "__icectl_choices() {",
        '    case "$1|$2" in',
    ]
    choice_cases: list[tuple[str, str]] = []
    for c in cmds:
        for o in _opts_at(tree, c):
            if o.takes_value and o.choices:
                for n in o.names:
                    choice_cases.append((f"{c.key}|{n}", " ".join(sorted(o.choices))))
    for pattern, words in sorted(choice_cases):
        out.append(f"        {_sq(pattern)}) echo {_sq(words)} ;;")
    out += [
        "    esac",
        "}",
        "",
        "__icectl_in() {",
        '    local w="$1"; shift',
        '    local x; for x in $*; do [[ "$x" == "$w" ]] && return 0; done',
        "    return 1",
        "}",
        "",
        "_icectl() {",
        "    local -a words=()",
        "    local i tok last",
        "    # Re-join --opt=value, which bash splits at '=' when '=' is in COMP_WORDBREAKS.",
        "    for ((i = 0; i <= COMP_CWORD; i++)); do",
        '        tok="${COMP_WORDS[i]}"',
        "        if ((${#words[@]} > 0)); then",
        '            last="${words[${#words[@]}-1]}"',
        '            if [[ "$last" == -* && ( "$tok" == "=" || "$last" == *= ) ]]; then',
        '                words[${#words[@]}-1]="$last$tok"',
        "                continue",
        "            fi",
        "        fi",
        '        words+=("$tok")',
        "    done",
        '    local cur="${words[${#words[@]}-1]}"',
        '    local path="" subcmds opts valopts numopts expect="" dashdash=""',
        "    COMPREPLY=()",
        "    for ((i = 1; i < ${#words[@]} - 1; i++)); do",
        '        tok="${words[i]}"',
        '        if [[ -n "$expect" ]]; then expect=""; continue; fi',
        '        __icectl_spec "$path"',
        '        case "$tok" in',
        '            --) dashdash=1; break ;;',
        '            -*=*) ;;',
        '            -*) __icectl_in "$tok" "$valopts" && expect="$tok" ;;',
        '            *) __icectl_in "$tok" "$subcmds" && path="${path:+$path }$tok" ;;',
        "        esac",
        "    done",
        '    __icectl_spec "$path"',
        '    local opt="$expect" value="$cur" prefix=""',
        '    if [[ -z "$opt" && -z "$dashdash" && "$cur" == -*=* ]]; then',
        '        opt="${cur%%=*}" value="${cur#*=}"',
        '        [[ "$COMP_WORDBREAKS" == *=* ]] || prefix="$opt="',
        "    fi",
        '    if [[ -n "$opt" ]]; then',
        '        local choices; choices="$(__icectl_choices "$path" "$opt")"',
        '        if [[ -n "$choices" ]]; then',
        '            COMPREPLY=($(compgen -P "$prefix" -W "$choices" -- "$value"))',
        '        elif __icectl_in "$opt" "$numopts"; then',
        "            compopt +o default 2>/dev/null",
        "        fi",
        "        return 0  # otherwise bash's default (file names) completes the value",
        "    fi",
        '    if [[ -z "$dashdash" && "$cur" == -* ]]; then',
        '        COMPREPLY=($(compgen -W "$opts" -- "$cur"))',
        '    elif [[ -n "$subcmds" ]]; then',
        "        compopt +o default 2>/dev/null  # a group takes only its subcommands",
        '        COMPREPLY=($(compgen -W "$subcmds" -- "$cur"))',
        "    fi",
        "    return 0  # arguments: table names may be paths, so bash's default completes file names",
        "}",
        "",
        "complete -o default -F _icectl icectl",
        "",
    ]
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# zsh
# --------------------------------------------------------------------------------------------

def _zsh_desc(text: str) -> str:
    """An _arguments/_describe description: one line, with []: escaped."""
    text = " ".join(text.split())
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def _zsh_action(kind: str, choices: Sequence[str]) -> str:
    if choices:
        return "(" + " ".join(c.replace(" ", "\\ ") for c in sorted(choices)) + ")"
    if kind == "number":
        return " "
    return "_files"


def _zsh_option(o: OptionSpec) -> str:
    desc = _zsh_desc(one_line(o.help))
    value = ""
    if o.takes_value:
        value = ":" + _zsh_desc(o.metavar.lower()) + ":" + _zsh_action(o.value_kind, o.choices)
    names = sorted(o.names, key=lambda n: (n.startswith("--"), n))
    if o.multiple:
        excl = "*"
    else:
        excl = "(" + " ".join(names) + ")" if len(names) > 1 else ""
    spec_tail = f"[{desc}]{value}"
    if o.takes_value:  # --opt=value / -ovalue as well as a separate word
        names = [n + ("=" if n.startswith("--") else "+") for n in names]
    if len(names) == 1:
        return _sq(f"{excl}{names[0]}{spec_tail}")
    return _sq(excl) + "{" + ",".join(names) + "}" + _sq(spec_tail)


def _zsh_func(cmd: CommandSpec) -> str:
    return "_icectl" + "".join("__" + re.sub(r"[^A-Za-z0-9]", "_", p) for p in cmd.path)


def gen_zsh(tree: Tree) -> str:
    out: list[str] = [
        "#compdef icectl",
        f"# zsh completion for icectl. {GENERATED}",
        "#",
        "# Use: install as _icectl in a directory on $fpath (before compinit runs).",
        "",
    ]
    for c in sorted(tree.root.walk(), key=lambda c: c.path):
        fn = _zsh_func(c)
        specs = [_zsh_option(o) for o in sorted(_opts_at(tree, c), key=lambda o: o.key)]
        if c.subcommands:
            specs += [_sq(": :" + fn + "_commands"), _sq("*:: :->args")]
        else:
            for a in c.arguments:
                action = _zsh_action(a.value_kind, a.choices)
                msg = _zsh_desc(a.name)
                if a.variadic:
                    specs.append(_sq(f"*:{msg}:{action}"))
                else:
                    specs.append(_sq(f"{'' if a.required else ':'}:{msg}:{action}"))
        # Not guarded for the root: autoloading runs this file as the body of _icectl, which must
        # then redefine itself before the call at the end.
        out += ([f"(( $+functions[{fn}] )) ||"] if c.path else []) + [f"{fn}() {{"]
        if c.subcommands:
            out += ["    local curcontext=\"$curcontext\" state line ret=1", "    typeset -A opt_args"]
        out.append("    _arguments -s -S" + ("" if not c.subcommands else " -C") + " \\")
        for i, s in enumerate(specs):
            out.append("        " + s + (" \\" if i < len(specs) - 1 else ""))
        if c.subcommands:
            out[-1] += " && ret=0"
            out += [
                "    case $state in",
                "        args)",
                "            curcontext=\"${curcontext%:*:*}:icectl-$words[1]:\"",
                "            case $words[1] in",
            ]
            for s in c.subcommands:
                out.append(f"                {s.name}) {_zsh_func(s)} && ret=0 ;;")
            out += [
                "            esac",
                "            ;;",
                "    esac",
                "    return ret",
            ]
        out += ["}", ""]
        if c.subcommands:
            out += [f"(( $+functions[{fn}_commands] )) ||", f"{fn}_commands() {{", "    local -a commands",
                    "    commands=("]
            for s in c.subcommands:
                out.append("        " + _sq(s.name.replace(":", "\\:") + ":" + " ".join(s.short_help.split())))
            title = " ".join((PROG,) + c.path + ("command",))
            out += ["    )", f"    _describe -t commands {_sq(title)} commands", "}", ""]
    out += [
        'if [[ "$funcstack[1]" == "_icectl" ]]; then',
        '    _icectl "$@"',
        "else",
        "    compdef _icectl icectl",
        "fi",
        "",
    ]
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# fish
# --------------------------------------------------------------------------------------------

def _fq(text: str) -> str:
    """Single-quote for fish."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def gen_fish(tree: Tree) -> str:
    cmds = sorted(tree.root.walk(), key=lambda c: c.path)
    out: list[str] = [
        f"# fish completion for icectl. {GENERATED}",
        "#",
        "# Use: copy to ~/.config/fish/completions/icectl.fish",
        "",
        "# The subcommands (argv[1]: command path) and value-taking options (argv[1]: path).",
        "function __icectl_subcommands",
        "    switch \"$argv[1]\"",
    ]
    for c in cmds:
        if c.subcommands:
            names = " ".join(_fq(s.name) for s in c.subcommands)
            out += [f"        case {_fq(c.key)}", "            printf '%s\\n' " + names]
    out += ["    end", "end", "", "function __icectl_value_options", "    switch \"$argv[1]\""]
    for c in cmds:
        vals = _names(_opts_at(tree, c), lambda o: o.takes_value)
        if vals:
            out += [f"        case {_fq(c.key)}", "            printf '%s\\n' -- " + " ".join(_fq(v) for v in vals)]
    out += [
        "    end",
        "end",
        "",
        "# Prints the subcommand path of the command line being completed ('' at the top level).",
        "function __icectl_path",
        "    set -l tokens (commandline -opc)",
        "    set -e tokens[1]",
        "    set -l path",
        "    set -l skip 0",
        "    for t in $tokens",
        "        if test $skip -eq 1",
        "            set skip 0",
        "            continue",
        "        end",
        "        switch $t",
        "            case '--'",
        "                break",
        "            case '-*=*'",
        "                continue",
        "            case '-*'",
        "                if contains -- $t (__icectl_value_options \"$path\")",
        "                    set skip 1",
        "                end",
        "            case '*'",
        "                if contains -- $t (__icectl_subcommands \"$path\")",
        "                    set -a path $t",
        "                end",
        "        end",
        "    end",
        "    echo \"$path\"",
        "end",
        "",
        "function __icectl_at",
        "    test (__icectl_path) = \"$argv\"",
        "end",
        "",
        "complete -c icectl -e",
    ]

    def option_line(o: OptionSpec, cond: str | None) -> str:
        parts = ["complete -c icectl"]
        if cond is not None:
            parts.append("-n " + _fq(cond))
        for n in sorted(o.names):
            if n.startswith("--"):
                parts.append("-l " + n[2:])
            elif len(n) == 2:
                parts.append("-s " + n[1:])
            else:
                parts.append("-o " + n[1:])
        if o.takes_value:
            if o.choices:
                parts.append("-x -a " + _fq(" ".join(sorted(o.choices))))
            elif o.value_kind == "number":
                parts.append("-x")
            else:
                parts.append("-r")  # and fish's default: file names
        if o.help:
            parts.append("-d " + _fq(one_line(o.help)))
        return " ".join(parts)

    out += ["", "# Global options (accepted before or after the command)"]
    for o in sorted(tree.global_options, key=lambda o: o.key):
        out.append(option_line(o, None))
    for c in cmds:
        cond = "__icectl_at" + ("" if not c.path else " " + " ".join(c.path))
        title = " ".join((PROG,) + c.path)
        out += ["", f"# {title}"]
        if c.subcommands:
            for s in c.subcommands:
                out.append(f"complete -c icectl -n {_fq(cond)} -f -a {_fq(s.name)} -d {_fq(s.short_help)}")
        own = c.options if c.path else tree.root_only_options
        for o in sorted(own, key=lambda o: o.key):
            out.append(option_line(o, cond))
        for a in c.arguments:
            if a.choices:
                out.append(f"complete -c icectl -n {_fq(cond)} -f -a {_fq(' '.join(sorted(a.choices)))}")
    out.append("")
    return "\n".join(out)
