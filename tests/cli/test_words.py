"""Words a person reads: ``health`` on the demo table says sizes in binary units and the retention
in days (its JSON keeps bytes and milliseconds), and results that are not errors (maintenance
needed, a declined prompt) keep their exit codes without being printed as errors."""
from __future__ import annotations

import io
import json

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def icectl(*args: str, stdin: str = "", tty: bool = False) -> tuple[int, str, str]:
    cls = Tty if tty else io.StringIO
    env = Env(stdout=cls(), stderr=cls(), stdin=cls(stdin))
    code = run(list(args), env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("words")
    mp = pytest.MonkeyPatch()
    mp.chdir(cwd)
    mp.setenv("HOME", str(cwd / "home"))
    mp.delenv("ICECTL_CONFIG", raising=False)
    mp.delenv("ICECTL_CATALOG", raising=False)
    assert icectl("demo")[0] == 0
    yield cwd
    mp.undo()


def test_health_text_in_binary_units_and_days_json_in_bytes_and_ms(demo):
    code, out, err = icectl("health", "demo.events")
    assert code == ExitCode.HEALTH_WARNING
    assert "under 384 MiB (target 512 MiB)" in out and "retention of 5 days" in out
    assert "402653184" not in out and "432000000" not in out
    assert err.splitlines()[0] == "icectl: 1 of 1 tables need maintenance (demo.events)" and "error" not in err
    code, out, err = icectl("-o", "json", "health", "demo.events")
    m = json.loads(out)["tables"][0]["metrics"]
    assert code == ExitCode.HEALTH_WARNING and m["max_snapshot_age_ms"] == 432_000_000
    assert isinstance(m["data_bytes"], int)


def test_declined_prompt_is_not_an_error(demo):
    code, out, err = icectl("expire", "demo.events", stdin="n\n", tty=True)
    assert code == ExitCode.REFUSED
    assert "icectl: not confirmed; nothing was changed" in err and "icectl: error" not in err


def test_refusal_without_a_terminal_is_still_an_error(demo):
    code, _, err = icectl("expire", "demo.events")
    assert code == ExitCode.REFUSED and err.startswith("icectl: error: refusing to")


def test_missing_table_suggests_the_nearest_names(demo):
    code, _, err = icectl("describe", "demo.evnts")
    assert code == ExitCode.NOT_FOUND
    assert err.splitlines() == ["icectl: error: table demo.evnts does not exist in catalog default",
                                "hint: did you mean demo.events?"]
    code, _, err = icectl("describe", "demo.zzzzzz")
    assert code == ExitCode.NOT_FOUND and "did you mean" not in err
