"""Every plan carries its planned commit (the REST spec's requirements and updates), and it is the
commit that is then sent when nothing changed in between: alter, upgrade-format, refs."""
from __future__ import annotations

import pytest

from icectl.catalog import CatalogConfig, build_catalog
from icectl.ops.recover import refs
from icectl.ops.evolve.alter import AlterRequest, commit_alter, plan_alter
from helpers import create_table
from icectl.ops.evolve.upgrade import apply_upgrade, plan_upgrade
from icectl.spec.metadata import MAIN_BRANCH

from test_refs import Repo


@pytest.fixture
def catalog(tmp_path):
    return build_catalog(CatalogConfig("default", {"type": "hadoop", "warehouse": str(tmp_path / "wh")}))


@pytest.fixture
def repo(tmp_path):
    return Repo(tmp_path)


def test_alter_plan_carries_the_commit_it_sends(catalog):
    t = create_table(catalog, ("db", "t"), schema_text="id:long!, name:string", format_version=2)
    plan = plan_alter(t, AlterRequest(add_columns=["qty int"], set_properties=["a=b"]))
    planned = plan.planned_commit
    assert planned is not None and [u["action"] for u in planned["updates"]] == ["add-schema", "set-current-schema",
                                                                                   "set-properties"]
    done = commit_alter(plan)
    assert planned == done.sent_json()
    assert plan_alter(done.table, AlterRequest(set_properties=["a=b"])).planned_commit is None  # already so


def test_upgrade_plan_carries_the_commit_it_sends(catalog):
    t = create_table(catalog, ("db", "t"), schema_text="id:long!", format_version=2)
    plan = plan_upgrade(t, 3)
    assert plan.planned_commit == {"requirements": plan.planned_commit["requirements"],
                                   "updates": [{"action": "upgrade-format-version", "format-version": 3}]}
    assert plan.planned_commit == apply_upgrade(t, 3).sent_json()
    assert plan_upgrade(t, 2).planned_commit is None


def test_ref_plan_carries_refs_before_after_and_the_commit_it_sends(repo):
    t = repo.table
    plan = refs.plan_ref_change(t, lambda t: refs.rollback_to_snapshot(t.metadata, repo.s2))
    assert plan.refs_before == {MAIN_BRANCH: repo.s3, "dev": repo.d1}
    assert plan.refs_after == {MAIN_BRANCH: repo.s2, "dev": repo.d1}
    assert plan.current_snapshot_id == repo.s2
    assert plan.impact(MAIN_BRANCH).leaving_history == [repo.s3]
    assert plan.planned_commit == refs.commit_ref_change(plan).sent_json()


def test_cherry_pick_that_writes_a_snapshot_plans_it_as_null(repo):
    """Re-applying d1 onto main (not a fast-forward) writes a snapshot only when committed."""
    plan = refs.plan_cherry_pick(repo.table, repo.d1)
    assert plan.updates is None and plan.after is None
    assert plan.refs_after == {MAIN_BRANCH: None, "dev": repo.d1}
    assert plan.current_snapshot_id is None
    commit = plan.planned_commit
    assert [r["type"] for r in commit["requirements"]] == ["assert-table-uuid", "assert-ref-snapshot-id"]
    assert commit["updates"][0]["action"] == "add-snapshot" and commit["updates"][0]["snapshot"] is None
