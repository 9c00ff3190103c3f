"""The job protocol (icectl.spark.protocol): every message survives JSON unchanged, a message of
another version (or none) is refused with one line naming both versions, on each hop: the plan
the job reads, the task an executor reads, the result icectl reads. No JVM: the job refuses a
plan before it starts Spark."""
from __future__ import annotations

import base64
import dataclasses
import json
import os
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from icectl.errors import ExitCode, ExternalCommandError
from icectl.spark import protocol
from icectl.spark.protocol import (PROTOCOL_VERSION, EqualityDelete, InputFile, NdvColumn, NdvPlan, NdvResult,
                                   NdvTask, NdvTaskResult, PartitionField, PositionDelete, ProtocolError,
                                   RewriteGroup, RewritePlan, RewriteResult, RewriteTask, RewriteTaskResult,
                                   SortField, WrittenFile)

text = st.text(max_size=12)
ints = st.integers(min_value=-(2 ** 63), max_value=2 ** 63 - 1)
json_scalars = st.none() | st.booleans() | ints | text | st.floats(allow_nan=False)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3) |
                           st.dictionaries(text, inner, max_size=3), max_leaves=8)

position_deletes = st.builds(PositionDelete, path=text, format=st.sampled_from(["parquet", "puffin"]),
                             offset=st.none() | ints, length=st.none() | ints,
                             path_aliases=st.lists(text, max_size=2))
equality_deletes = st.builds(EqualityDelete, path=text, equality_ids=st.lists(ints, max_size=3))
input_files = st.builds(InputFile, path=text, format=text, record_count=ints, size=ints,
                        first_row_id=st.none() | ints, data_sequence_number=ints,
                        position_deletes=st.lists(position_deletes, max_size=2),
                        equality_deletes=st.lists(equality_deletes, max_size=2))
partition_fields = st.builds(PartitionField, name=text, transform=text, column=text, source_type=text)
sort_fields = st.builds(SortField, column=text, transform=text, direction=st.sampled_from(["asc", "desc"]),
                        null_order=st.sampled_from(["nulls-first", "nulls-last"]))
rewrite_tasks = st.builds(RewriteTask, task_id=text, group_id=ints, output_dir=text,
                          inputs=st.lists(input_files, max_size=2),
                          repartition=st.none() | st.lists(partition_fields, max_size=2))
rewrite_groups = st.builds(RewriteGroup, group_id=ints, partition=text, expected_outputs=ints,
                           tasks=st.lists(rewrite_tasks, max_size=2))
schemas = st.dictionaries(text, json_values, max_size=3)
rewrite_plans = st.builds(RewritePlan, table=text, location=text, format_version=ints, schema=schemas,
                          target_file_size=ints, row_lineage=st.booleans(),
                          sort=st.none() | st.lists(sort_fields, max_size=2),
                          io_properties=st.dictionaries(text, text, max_size=2), compression=text,
                          row_group_bytes=ints, app_name=text, groups=st.lists(rewrite_groups, max_size=2))
int_maps = st.dictionaries(ints, ints, max_size=3)
hex_maps = st.dictionaries(ints, st.binary(max_size=8).map(bytes.hex), max_size=3)
written_files = st.builds(WrittenFile, path=text, size=ints, record_count=ints, column_sizes=int_maps,
                          value_counts=int_maps, null_value_counts=int_maps, nan_value_counts=int_maps,
                          lower_bounds=hex_maps, upper_bounds=hex_maps, split_offsets=st.lists(ints, max_size=3),
                          task_id=st.none() | text, group_id=st.none() | ints, sorted=st.booleans(),
                          partition=st.none() | st.lists(json_scalars, max_size=3))
rewrite_task_results = st.builds(RewriteTaskResult, task_id=text, files=st.lists(written_files, max_size=2),
                                 error=st.none() | text)
rewrite_results = st.builds(RewriteResult, files=st.lists(written_files, max_size=2), error=st.none() | text)
ndv_columns = st.builds(NdvColumn, field_id=ints, path=st.lists(text, min_size=1, max_size=3), type=text)
ndv_tasks = st.builds(NdvTask, task_id=text, inputs=st.lists(input_files, max_size=2))
ndv_plans = st.builds(NdvPlan, table=text, location=text, schema=schemas,
                      io_properties=st.dictionaries(text, text, max_size=2), columns=st.lists(ndv_columns, max_size=3),
                      app_name=text, tasks=st.lists(ndv_tasks, max_size=2))
sketch_maps = st.dictionaries(ints, st.binary(max_size=16).map(lambda b: base64.b64encode(b).decode()),
                              max_size=3)
ndv_task_results = st.builds(NdvTaskResult, task_id=text, rows=ints, sketches=sketch_maps, error=st.none() | text)
ndv_results = st.builds(NdvResult, rows=ints, sketches=sketch_maps, error=st.none() | text)

EVERY_CLASS = {PositionDelete: position_deletes, EqualityDelete: equality_deletes, InputFile: input_files,
               PartitionField: partition_fields, SortField: sort_fields, RewriteTask: rewrite_tasks,
               RewriteGroup: rewrite_groups, RewritePlan: rewrite_plans, WrittenFile: written_files,
               RewriteTaskResult: rewrite_task_results, RewriteResult: rewrite_results, NdvColumn: ndv_columns,
               NdvTask: ndv_tasks, NdvPlan: ndv_plans, NdvTaskResult: ndv_task_results, NdvResult: ndv_results}
MESSAGES = [RewritePlan, RewriteTask, RewriteTaskResult, RewriteResult, NdvPlan, NdvTask, NdvTaskResult, NdvResult]


def test_every_dataclass_of_the_module_has_a_strategy():
    found = {v for v in vars(protocol).values() if isinstance(v, type) and dataclasses.is_dataclass(v)}
    assert found == set(EVERY_CLASS)


@pytest.mark.parametrize("cls", list(EVERY_CLASS), ids=lambda c: c.__name__)
def test_round_trip_through_json(cls):
    @settings(max_examples=60, deadline=None)
    @given(EVERY_CLASS[cls])
    def check(message):
        wire = protocol.dumps(message)
        assert protocol.loads(cls, wire) == message
        assert json.loads(wire) == protocol.to_json(message)  # plain JSON data, integer keys as strings

    check()


@given(st.one_of(rewrite_plans, ndv_plans))
@settings(max_examples=40, deadline=None)
def test_the_plan_file_is_read_as_the_kind_it_names(plan):
    assert protocol.load_plan(protocol.dumps(plan)) == plan


def _minimal(cls):
    example = {RewritePlan: RewritePlan("db.t", "/w", 2, {}, 1, False, None, {}, "zstd", 1, "app"),
               RewriteTask: RewriteTask("1-0", 1, "/out", []), RewriteTaskResult: RewriteTaskResult("1-0"),
               RewriteResult: RewriteResult(), NdvPlan: NdvPlan("db.t", "/w", {}, {}, [], "app"),
               NdvTask: NdvTask("0", []), NdvTaskResult: NdvTaskResult("0"), NdvResult: NdvResult()}[cls]
    return protocol.to_json(example)


@pytest.mark.parametrize("cls", MESSAGES, ids=lambda c: c.__name__)
def test_each_message_carries_the_version(cls):
    data = _minimal(cls)
    assert data["version"] == PROTOCOL_VERSION == 1
    assert protocol.from_json(cls, data).version == PROTOCOL_VERSION


@pytest.mark.parametrize("cls", MESSAGES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("version", [2, 0, "1", True, 1.0, 1.5])
def test_another_version_is_refused_in_one_line(cls, version):
    data = dict(_minimal(cls), version=version)
    with pytest.raises(ProtocolError) as e:
        protocol.from_json(cls, data)
    message = e.value.message
    assert "\n" not in message and f"job protocol version {version!r}" in message
    assert f"this icectl speaks version {PROTOCOL_VERSION}" in message
    assert e.value.exit_code == ExitCode.EXTERNAL and e.value.hint and "python" in e.value.hint


@pytest.mark.parametrize("cls", MESSAGES, ids=lambda c: c.__name__)
def test_a_message_without_a_version_is_refused(cls):
    data = _minimal(cls)
    del data["version"]
    with pytest.raises(ProtocolError, match=r"has no protocol version; this icectl speaks job protocol version 1$"):
        protocol.from_json(cls, data)


def test_a_plan_of_another_version_is_refused_before_its_kind_is_looked_at():
    data = dict(_minimal(RewritePlan), version=7, kind="something-new", groups="whatever")
    with pytest.raises(ProtocolError, match="job plan is of job protocol version 7; this icectl speaks version 1"):
        protocol.load_plan(json.dumps(data))


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("compression"), "RewritePlan lacks 'compression'"),  # no default in the job
    (lambda d: d.pop("row_group_bytes"), "RewritePlan lacks 'row_group_bytes'"),
    (lambda d: d.pop("target_file_size"), "RewritePlan lacks 'target_file_size'"),
    (lambda d: d.update(row_group_size=5), "unknown field 'row_group_size' in RewritePlan"),
    (lambda d: d.update(kind="ndv"), "job plan: unknown field 'compression' in NdvPlan"),  # read as the kind it names
    (lambda d: d.update(kind="vacuum"), "job plan: unknown kind 'vacuum'"),
    (lambda d: d.update(target_file_size="512MB"), "RewritePlan.target_file_size: '512MB' is not an integer"),
    (lambda d: d.update(groups=[{"group_id": 1, "partition": "", "expected_outputs": 1, "tasks": [{}]}]),
     "RewriteTask lacks 'task_id'"),
])
def test_a_malformed_plan_is_refused(change, message):
    data = _minimal(RewritePlan)
    change(data)
    with pytest.raises(ProtocolError, match=message.replace("(", r"\(").replace(")", r"\)")):
        protocol.load_plan(json.dumps(data))


def test_a_result_of_the_other_kind_is_refused():
    with pytest.raises(ProtocolError, match="job result: a 'ndv' message, not 'rewrite'"):
        protocol.loads(RewriteResult, protocol.dumps(NdvResult(error="x")))


def test_the_job_refuses_a_plan_of_another_version_without_starting_spark(tmp_path, monkeypatch):
    from icectl.spark import job

    monkeypatch.setitem(sys.modules, "pyspark", None)  # importing pyspark would fail: Spark never starts
    for kind, result_type in (("rewrite", RewriteResult), ("ndv", NdvResult)):
        plan = dict(_minimal(RewritePlan if kind == "rewrite" else NdvPlan), version=PROTOCOL_VERSION + 1)
        (tmp_path / "plan.json").write_text(json.dumps(plan))
        code = job.main(["--plan", str(tmp_path / "plan.json"), "--result", str(tmp_path / "result.json")])
        assert code == 3
        result = protocol.loads(result_type, (tmp_path / "result.json").read_text())
        assert result.error == (f"job plan is of job protocol version {PROTOCOL_VERSION + 1}; this icectl speaks "
                                f"version {PROTOCOL_VERSION}: the client and the Spark job run different icectl "
                                f"releases")


def test_the_client_refuses_a_result_of_another_version(tmp_path):
    from icectl.ops.spark_job import PreparedJob, read_result

    work = str(tmp_path)
    job = PreparedJob(None, [], work, work, os.path.join(work, "plan.json"), os.path.join(work, "result.json"))
    assert read_result(None, job) is None  # the job wrote none
    (tmp_path / "result.json").write_text(json.dumps({**_minimal(RewriteResult), "version": 2}))
    with pytest.raises(ExternalCommandError, match="^job result is of job protocol version 2; this icectl speaks "
                                                   "version 1"):
        read_result(None, job)
    (tmp_path / "result.json").write_text(protocol.dumps(RewriteResult(error="boom")))
    assert read_result(None, job).error == "boom"
    (tmp_path / "result.json").write_text(protocol.dumps(NdvResult(rows=3)))
    assert read_result(None, job, NdvResult).rows == 3
