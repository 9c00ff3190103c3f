"""What ``demo`` prints: the table it built, its history and commands to try on it."""
from __future__ import annotations

from icectl.cli.context import Env
from icectl.cli.output import fmt_ts, print_table, say, text_renderer
from icectl.ops.demo import DemoResult


@text_renderer(DemoResult)
def _demo_text(env: Env, r: DemoResult) -> None:
    kind = "deletion vectors" if r.format_version >= 3 else "position delete files"
    say(env, f"Built {r.table} (format version {r.format_version}) at {r.location}")
    say(env, f"{len(r.snapshots)} snapshots; main: {r.records} rows in {r.data_files} data files and "
             f"{r.delete_files} {kind}; schema {r.schema_ids[-1]} added column {r.added_column}")
    say(env)
    print_table(env, ["snapshot", "committed", "operation", "branch", "rows", "what"],
                [[str(s.snapshot_id), fmt_ts(s.timestamp_ms), s.operation, s.branch or "(staged)", str(s.records),
                  s.description] for s in r.snapshots], right={"rows"})
    say(env)
    say(env, "Refs:")
    for ref in r.refs:
        say(env, f"  {ref.name} ({ref.type}) -> {ref.snapshot_id}, {ref.records} rows")
    say(env, f"  staged snapshot {r.staged_snapshot_id} (wap.id {r.wap_id}) is on no branch")
    for p in r.orphan_files:
        age = f"{r.orphan_age_days} days old" if r.orphan_age_days else "new: this storage cannot back-date it"
        say(env, f"Orphan file ({age}, referenced by nothing): {p}")
    say(env)
    say(env, "Try these:")
    width = max(len(c.command) for c in r.try_commands)
    for c in r.try_commands:
        say(env, f"  {c.command.ljust(width)}  # {c.why}")
