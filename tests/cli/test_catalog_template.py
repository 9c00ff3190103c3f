"""The spark-submit job template a catalog's configuration names (``spark.template``) is the one
compact uses when --template is not given (icectl.ops.catalogs.spark_template)."""
from __future__ import annotations

import io
import json

import pytest

from icectl.cli.context import Env
from icectl.cli.main import run


def icectl(*args: str) -> tuple[int, str, str]:
    env = Env(stdout=io.StringIO(), stderr=io.StringIO(), stdin=io.StringIO())
    code = run(list(args), env)
    return code, env.stdout.getvalue(), env.stderr.getvalue()


@pytest.fixture
def configured(tmp_path, monkeypatch):
    template = tmp_path / "job.yaml"
    template.write_text("master: spark://configured:7077\n")
    config = tmp_path / "icectl.yaml"
    config.write_text(f"catalog:\n  c:\n    type: hadoop\n    warehouse: {tmp_path / 'wh'}\n"
                      f"    spark.template: {template}\n")
    monkeypatch.setenv("ICECTL_CONFIG", str(config))
    monkeypatch.chdir(tmp_path)
    code, _, err = icectl("-c", "c", "demo")
    assert code == 0, err
    return tmp_path


def _master(argv: list[str]) -> str:
    return argv[argv.index("--master") + 1]


def test_compact_uses_the_catalogs_template(configured):
    code, out, err = icectl("-c", "c", "-o", "json", "compact", "demo.events", "--dry-run")
    assert code == 0, err
    assert _master(json.loads(out)["spark_submit"]) == "spark://configured:7077"


def test_template_option_wins(configured):
    own = configured / "own.yaml"
    own.write_text("master: yarn\n")
    code, out, err = icectl("-c", "c", "-o", "json", "compact", "demo.events", "--dry-run", "--template", str(own))
    assert code == 0, err
    assert _master(json.loads(out)["spark_submit"]) == "yarn"


def test_a_table_by_path_with_an_unknown_catalog_name_gets_the_default(configured, monkeypatch):
    """A table given by path needs no catalog: a --catalog that is not configured is no error (the
    default template and storage settings apply)."""
    location = configured / "wh" / "demo" / "events"
    code, out, err = icectl("-c", "nope", "-o", "json", "compact", str(location), "--dry-run")
    assert code == 0, err
    assert _master(json.loads(out)["spark_submit"]) == "local[*]"
