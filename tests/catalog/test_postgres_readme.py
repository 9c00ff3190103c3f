"""The README's and the docs' tour commands work on a PostgreSQL catalog: `icectl demo` and every
command of tests/cli/test_readme.py's TOUR, in order, with `--uri postgresql://...` (an
`icectl` on PATH that adds it, and `--warehouse ./warehouse`, to every command that names no
catalog of its own). `compact --yes` runs a real Spark job, hence the `spark` marker."""
from __future__ import annotations

import pathlib
import subprocess
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "cli"))
from test_readme import _env, first_command, readme_commands  # noqa: E402

pytestmark = [pytest.mark.postgres, pytest.mark.spark, pytest.mark.slow]


def test_readme_commands_run_on_a_postgresql_catalog(postgres_server, postgres_db, tmp_path):
    env = _env(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    uri = postgres_server.uri(postgres_db)
    (tmp_path / "bin" / "icectl").write_text(
        "#!/bin/sh\n"
        f'case " $* " in *" --uri "*) exec "{sys.executable}" -m icectl "$@";; esac\n'
        f'exec "{sys.executable}" -m icectl --uri "{uri}" --warehouse "$PWD/warehouse" "$@"\n')
    setup = first_command().split("&&", 1)[1].strip()  # what follows the pip install
    for cmd in [setup] + readme_commands():
        proc = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=work, env=env, capture_output=True,
                              text=True, timeout=900)
        assert proc.returncode == 0, f"{cmd}\nexit {proc.returncode}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}"
        assert "Traceback" not in proc.stderr, proc.stderr
        assert postgres_server.password not in proc.stdout + proc.stderr
    # The tables are in PostgreSQL, not in a SQLite file of the local default catalog.
    assert not (work / "warehouse" / "icectl_catalog.db").exists()
    with postgres_server.connect(postgres_db) as con:
        tables = sorted(r[0] for r in con.execute("SELECT table_namespace || '.' || table_name FROM iceberg_tables"))
    # docs/tables.md renames demo.orders to lake.orders and then drops it with --purge.
    assert tables == ["demo.events"]
