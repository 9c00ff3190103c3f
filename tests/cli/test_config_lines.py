"""Configuration errors name the file, the line and the key: a policy file's unknown key or bad
value, and a catalog entry's unknown type."""
from __future__ import annotations

import io

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run
from icectl.errors import ExitCode


def icectl(*args: str) -> tuple[int, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO())
    return run(list(args), env), env.stderr.getvalue()


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("ICECTL_CONFIG", raising=False)
    monkeypatch.delenv("ICECTL_CATALOG", raising=False)
    return tmp_path


@pytest.mark.parametrize("text,line", [
    ("defaults:\n  delete-record-ratio: 0.1\n  small-files: 3\n", "policy file {p}:3: defaults: unknown policy key "
                                                                 "'small-files'"),
    ("defaults:\n  orphans-older-than: 3d\ntables:\n  'demo.*':\n    delete-record-ratio: lots\n",
     "policy file {p}:5: tables['demo.*']: delete-record-ratio='lots' is not a valid float"),
    ("defaults: {}\nschedule: daily\n", "policy file {p}:2: unknown section 'schedule'"),
])
def test_policy_errors_name_file_line_and_key(cwd, text, line):
    path = cwd / "policy.yaml"
    path.write_text(text)
    code, err = icectl("health", "demo.events", "--policy", str(path))
    assert code == ExitCode.USAGE
    assert err.startswith("icectl: error: " + line.format(p=path)), err


def test_catalog_type_error_names_file_line_and_key(cwd, monkeypatch):
    path = cwd / "catalogs.yaml"
    path.write_text("catalog:\n  prod:\n    type: nosuch\n")
    monkeypatch.setenv("ICECTL_CONFIG", str(path))
    code, err = icectl("-c", "prod", "list")
    assert code == ExitCode.USAGE
    assert err.startswith(f"icectl: error: unknown catalog type 'nosuch' for catalog prod ({path}:2, key type)"), err
