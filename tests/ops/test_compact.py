"""Compaction planning (icectl.ops.maintain.compact.plan_compaction) against Iceberg Java 1.10.2's
BinPackRewriteFilePlanner / SizeBasedFileRewritePlanner rules:

- a file is a candidate when its length is < min-file-size (0.75 x target) or > max-file-size
  (1.8 x target), when it has >= delete-file-threshold delete files, or when its file-scoped
  deletes (DVs, position delete files naming one data file) remove >= 30 % of its rows;
- candidates of one partition (files of older specs all together) are bin-packed in order into
  groups of at most max-file-group-size bytes (ListPacker, lookback 1);
- a group is kept when it has > 1 and >= min-input-files files, > 1 file and more than target
  bytes, more than max-file-size bytes, or a file with too many deletes / too high a ratio;
  with rewrite-all every file and every group is kept;
- expected output files and the input split size follow expectedOutputFiles / inputSplitSize.

Tables are built with the engine (create_table + append_files); the data files need not exist,
planning reads metadata only.
"""
from __future__ import annotations

import datetime as dt

import pytest

from icectl.catalog.hadoop import HadoopCatalog
from icectl.ops.maintain.compact import (
    CompactOptions,
    expected_output_files,
    plan_compaction,
)
from icectl.formats.manifest import DataFile, FileContent
from helpers import create_table
from helpers import append_files
from icectl.spec.transforms import parse_transform
from icectl.spec.types import primitive
from icectl.errors import NotFoundError, UsageError
from icectl.io import FileIO
from icectl.table.transaction import commit

T = 1000  # target used by most tests: min 750, max 1800, write max 1400
OPTS = CompactOptions(target_file_size=T)
PATH_ID = 2147483546


# -- helpers -------------------------------------------------------------------------------------

@pytest.fixture
def catalog(tmp_path):
    return HadoopCatalog("hc", str(tmp_path / "wh"), FileIO())


_n = iter(range(10 ** 9))


def data(table, size: int, partition: tuple = (), records: int = 100, spec_id: int | None = None,
         name: str | None = None) -> DataFile:
    name = name or f"d{next(_n)}-{size}.parquet"
    return DataFile(file_path=f"{table.location}/data/{name}", file_format="parquet", partition=partition,
                    record_count=records, file_size_in_bytes=size,
                    spec_id=table.metadata.default_spec_id if spec_id is None else spec_id)


def pos_deletes(table, partition: tuple = (), records: int = 1, referenced: str | None = None,
                bounds_path: str | None = None) -> DataFile:
    f = DataFile(file_path=f"{table.location}/data/pd{next(_n)}.parquet", file_format="parquet",
                 partition=partition, record_count=records, file_size_in_bytes=100,
                 content=FileContent.POSITION_DELETES, spec_id=table.metadata.default_spec_id,
                 referenced_data_file=referenced)
    if bounds_path is not None:  # as Iceberg Java writes a file-scoped v2 position delete file
        f.lower_bounds = {PATH_ID: bounds_path.encode(), 2147483545: (0).to_bytes(8, "little")}
        f.upper_bounds = {PATH_ID: bounds_path.encode(), 2147483545: (9).to_bytes(8, "little")}
    return f


def dv(table, target: DataFile, records: int) -> DataFile:
    return DataFile(file_path=f"{table.location}/data/dv{next(_n)}.puffin", file_format="puffin",
                    partition=target.partition, record_count=records, file_size_in_bytes=200,
                    content=FileContent.POSITION_DELETES, spec_id=target.spec_id,
                    referenced_data_file=target.file_path, content_offset=4, content_size_in_bytes=40)


def eq_deletes(table, partition: tuple = (), records: int = 1, spec_id: int | None = None) -> DataFile:
    return DataFile(file_path=f"{table.location}/data/eq{next(_n)}.parquet", file_format="parquet",
                    partition=partition, record_count=records, file_size_in_bytes=100,
                    content=FileContent.EQUALITY_DELETES, equality_ids=[1],
                    spec_id=table.metadata.default_spec_id if spec_id is None else spec_id)


def make(catalog, partition_by: str | None = None, fv: int = 2, schema: str = "id:long!, region:string, ts:timestamptz",
         props: dict | None = None):
    return create_table(catalog, ("db", f"t{next(_n)}"), schema_text=schema, partition_by=partition_by,
                        format_version=fv, properties=props or {})


def with_files(table, *files):
    return append_files(table, list(files))


def sizes(group) -> list[int]:
    return [t.length for t in group.tasks]


def evolve_spec(table, partition_by: str):
    """Add a new default spec (as ALTER TABLE ... PARTITION FIELD does) and commit."""
    from icectl.expr.partition import partition_spec

    from icectl.table.builder import MetadataBuilder

    md = table.metadata
    spec = partition_spec(partition_by, md.schema, next_field_id=md.last_partition_id + 1)
    return commit(table, MetadataBuilder(md).set_default_spec(spec).changes)


# -- sizes: what is a candidate --------------------------------------------------------------------

def test_size_thresholds_are_java_defaults(catalog):
    t = make(catalog)
    p = plan_compaction(t, OPTS)
    assert (p.target_file_size, p.min_file_size, p.max_file_size) == (1000, 750, 1800)
    p = plan_compaction(t, CompactOptions())
    assert (p.target_file_size, p.min_file_size, p.max_file_size) == (
        512 * 1024 ** 2, int(512 * 1024 ** 2 * 0.75), int(512 * 1024 ** 2 * 1.8))
    t = make(catalog, props={"write.target-file-size-bytes": "4000"})
    assert (plan_compaction(t, CompactOptions()).min_file_size, plan_compaction(t, CompactOptions()).max_file_size) == (3000, 7200)
    # the option wins over the table property
    assert plan_compaction(t, OPTS).target_file_size == 1000


def test_candidates_are_files_outside_min_max(catalog):
    t = make(catalog)
    t = with_files(t, *(data(t, s) for s in (749, 750, 1000, 1800, 1801, 1)))
    p = plan_compaction(t, CompactOptions(target_file_size=T, min_input_files=2))
    assert p.total_files == 6
    assert [sizes(g) for g in p.groups] == [[749, 1801, 1]]  # manifest order kept
    assert p.input_files == 3 and p.input_bytes == 749 + 1801 + 1


def test_min_input_files(catalog):
    t = make(catalog)
    t4 = with_files(t, *(data(t, 100) for _ in range(4)))
    assert plan_compaction(t4, OPTS).groups == []  # 4 files, 400 bytes: not enough of anything
    assert [len(g.tasks) for g in plan_compaction(t4, CompactOptions(target_file_size=T, min_input_files=4)).groups] == [4]
    t5 = with_files(t4, data(t4, 100))
    g = plan_compaction(t5, OPTS).groups
    assert [len(x.tasks) for x in g] == [5] and g[0].expected_outputs == 1
    # enoughInputFiles needs more than one file, even with min-input-files 1
    t1 = with_files(make(catalog), data(t, 100))
    assert plan_compaction(t1, CompactOptions(target_file_size=T, min_input_files=1)).groups == []


def test_enough_content_and_too_much_content(catalog):
    t = make(catalog)
    two_small = with_files(t, data(t, 600), data(t, 401))  # 1001 > target with 2 files
    assert [sizes(g) for g in plan_compaction(two_small, OPTS).groups] == [[600, 401]]
    t = make(catalog)
    exactly = with_files(t, data(t, 600), data(t, 400))  # 1000 is not more than the target
    assert plan_compaction(exactly, OPTS).groups == []
    t = make(catalog)
    one_big = with_files(t, data(t, 1801))  # one file over max-file-size is rewritten alone
    g = plan_compaction(one_big, OPTS).groups
    assert [sizes(x) for x in g] == [[1801]] and g[0].expected_outputs == 2
    t = make(catalog)
    one_small = with_files(t, data(t, 10))
    assert plan_compaction(one_small, OPTS).groups == []


def test_rewrite_all_takes_every_file_and_group(catalog):
    t = make(catalog, "region")
    t = with_files(t, data(t, 1000, ("eu",)), data(t, 1200, ("us",)), data(t, 900, ("us",)), data(t, 1, (None,)))
    assert plan_compaction(t, OPTS).groups == []
    p = plan_compaction(t, CompactOptions(target_file_size=T, rewrite_all=True))
    assert sorted((g.partition_display, sizes(g)) for g in p.groups) == [
        ("region=eu", [1000]), ("region=null", [1]), ("region=us", [1200, 900])]
    assert [g.group_id for g in p.groups] == [1, 2, 3]
    assert {g.partition_display: g.expected_outputs for g in p.groups} == {"region=eu": 1, "region=us": 2, "region=null": 1}


def test_groups_are_per_partition(catalog):
    t = make(catalog, "region")
    t = with_files(t, *(data(t, 100, ("eu",)) for _ in range(5)), *(data(t, 100, ("us",)) for _ in range(4)))
    p = plan_compaction(t, OPTS)
    assert [(g.partition_display, len(g.tasks)) for g in p.groups] == [("region=eu", 5)]


def test_max_file_group_size_splits_in_order(catalog):
    t = make(catalog)
    t = with_files(t, *(data(t, 600) for _ in range(5)))
    p = plan_compaction(t, CompactOptions(target_file_size=T, max_file_group_size=1500))
    # bins [600,600] [600,600] [600]; the last one alone is not worth rewriting
    assert [sizes(g) for g in p.groups] == [[600, 600], [600, 600]]
    p = plan_compaction(t, CompactOptions(target_file_size=T, max_file_group_size=1200))  # exactly full bins
    assert [sizes(g) for g in p.groups] == [[600, 600], [600, 600]]
    p = plan_compaction(t, CompactOptions(target_file_size=T, max_file_group_size=1800))
    assert [sizes(g) for g in p.groups] == [[600, 600, 600], [600, 600]]
    p = plan_compaction(t, CompactOptions(target_file_size=T, max_file_group_size=100, rewrite_all=True))
    assert [sizes(g) for g in p.groups] == [[600]] * 5  # a file larger than the group size gets its own bin


# -- deletes --------------------------------------------------------------------------------------

def test_delete_file_threshold(catalog):
    t = make(catalog, "region")
    d = data(t, 1000, ("eu",))  # in range: a candidate only for its deletes
    t = with_files(t, d, data(t, 1000, ("us",)))
    t = with_files(t, pos_deletes(t, ("eu",)), pos_deletes(t, ("eu",)))
    assert plan_compaction(t, OPTS).groups == []  # default threshold Integer.MAX_VALUE
    p = plan_compaction(t, CompactOptions(target_file_size=T, delete_file_threshold=2))
    assert [(g.partition_display, [x.file.file_path for x in g.tasks], g.delete_files) for g in p.groups] == [
        ("region=eu", [d.file_path], 2)]
    assert plan_compaction(t, CompactOptions(target_file_size=T, delete_file_threshold=3)).groups == []


def test_delete_ratio_with_deletion_vectors(catalog):
    t = make(catalog, fv=3)
    a, b = data(t, 1000, records=100), data(t, 1000, records=100)
    t = with_files(t, a, b)
    t = with_files(t, dv(t, a, 30), dv(t, b, 29))
    p = plan_compaction(t, OPTS)
    assert [[x.file.file_path for x in g.tasks] for g in p.groups] == [[a.file_path]]  # 30 % >= 0.3, 29 % not
    p = plan_compaction(t, CompactOptions(target_file_size=T, delete_ratio_threshold=0.29))
    assert [[x.file.file_path for x in g.tasks] for g in p.groups] == [[a.file_path, b.file_path]]


def test_delete_ratio_counts_only_file_scoped_deletes(catalog):
    def table_with(make_deletes):
        t = make(catalog)
        a = data(t, 1000, records=10)
        t = with_files(t, a)
        return with_files(t, *make_deletes(t, a))

    # a partition-scoped position delete file (several data files): not counted
    assert plan_compaction(table_with(lambda t, a: [pos_deletes(t, records=5)]), OPTS).groups == []
    # an equality delete file: not counted
    assert plan_compaction(table_with(lambda t, a: [eq_deletes(t, records=9)]), OPTS).groups == []
    # referenced_data_file set: counted
    t3 = table_with(lambda t, a: [pos_deletes(t, records=3, referenced=a.file_path)])
    assert [len(g.tasks) for g in plan_compaction(t3, OPTS).groups] == [1]
    # two file-scoped files: their counts add up (2 + 1 of 10)
    t4 = table_with(lambda t, a: [pos_deletes(t, records=2, referenced=a.file_path),
                                  pos_deletes(t, records=1, referenced=a.file_path)])
    assert [len(g.tasks) for g in plan_compaction(t4, OPTS).groups] == [1]
    t5 = table_with(lambda t, a: [pos_deletes(t, records=2, referenced=a.file_path)])
    assert plan_compaction(t5, OPTS).groups == []


def test_delete_ratio_position_deletes_scoped_by_path_bounds(catalog):
    """Iceberg Java (v2) writes a position delete file for one data file without
    referenced_data_file but with equal lower and upper bounds on file_path: ContentFileUtil.
    isFileScoped counts it, so it takes part in the delete ratio."""
    t = make(catalog)
    a, b = data(t, 1000, records=10), data(t, 1000, records=10)
    t = with_files(t, a, b)
    t = with_files(t, pos_deletes(t, records=3, bounds_path=a.file_path))
    p = plan_compaction(t, OPTS)
    assert [[x.file.file_path for x in g.tasks] for g in p.groups] == [[a.file_path]]
    # and it only applies to the file it names
    tasks = {x.file.file_path: x for x in p.groups[0].tasks}
    assert len(tasks[a.file_path].deletes) == 1


def test_deletes_attached_by_sequence_number_rules(catalog):
    t = make(catalog, "region", fv=2)
    a = data(t, 100, ("eu",))
    t = with_files(t, a)                                       # seq 1
    t = with_files(t, eq_deletes(t, ("eu",)))                   # seq 2: applies to a
    b = data(t, 100, ("eu",))
    t = with_files(t, b)                                       # seq 3
    t = with_files(t, pos_deletes(t, ("eu",)))                  # seq 4: applies to a and b
    t = with_files(t, pos_deletes(t, ("us",)), eq_deletes(t, ("us",)))  # other partition: nothing
    p = plan_compaction(t, CompactOptions(target_file_size=T, rewrite_all=True))
    kinds = {x.file.file_path: sorted(d.file.kind for d in x.deletes) for g in p.groups for x in g.tasks}
    assert kinds == {a.file_path: ["equality-deletes", "position-deletes"], b.file_path: ["position-deletes"]}
    assert p.groups[0].delete_files == 2


def test_unpartitioned_equality_deletes_apply_everywhere_and_dvs_shadow_position_deletes(catalog):
    t = make(catalog, "region", fv=3)
    a = data(t, 100, ("eu",))
    t = with_files(t, a)
    t = evolve_spec(t, "")  # an unpartitioned spec: its equality deletes are global
    t = with_files(t, eq_deletes(t, ()))
    t = with_files(t, dv(t, a, 1))
    p = plan_compaction(t, CompactOptions(target_file_size=T, rewrite_all=True))
    kinds = sorted(d.file.kind for g in p.groups for x in g.tasks for d in x.deletes)
    assert kinds == ["deletion-vector", "equality-deletes"]


def test_dv_shadows_partition_position_deletes(catalog):
    t = make(catalog, fv=3)
    a = data(t, 100)
    t = with_files(t, a)
    t = with_files(t, pos_deletes(t))  # a v2-style file before the upgrade, say
    t = with_files(t, dv(t, a, 2))
    p = plan_compaction(t, CompactOptions(target_file_size=T, rewrite_all=True))
    assert [d.file.kind for d in p.groups[0].tasks[0].deletes] == ["deletion-vector"]


# -- partition evolution ----------------------------------------------------------------------------

def test_files_of_older_specs_are_grouped_together(catalog):
    t = make(catalog, "region")
    old = [data(t, 100, ("eu",)), data(t, 100, ("us",)), data(t, 100, (None,))]
    t = with_files(t, *old)
    t = evolve_spec(t, "bucket(4, id)")
    new = [data(t, 100, (0,)), data(t, 100, (0,)), data(t, 100, (3,))]
    t = with_files(t, *new)
    p = plan_compaction(t, CompactOptions(target_file_size=T, rewrite_all=True))
    got = {g.partition_display: sorted(x.file.file_path for x in g.tasks) for g in p.groups}
    assert got == {"(files of older specs)": sorted(f.file_path for f in old),
                   "id_bucket=0": sorted(f.file_path for f in new[:2]), "id_bucket=3": [new[2].file_path]}
    # without rewrite-all the older-spec group (3 files, 300 bytes) is below every threshold
    assert plan_compaction(t, CompactOptions(target_file_size=T, min_input_files=3)).groups[0].partition_display == \
        "(files of older specs)"


# -- expected output files and split size ------------------------------------------------------------

@pytest.mark.parametrize("size, expected", [
    (999, 1),      # less than the target: one file
    (1000, 1),
    (1760, 2),     # remainder 760 > min 750: keep it as its own file
    (1740, 2),     # remainder 740 <= 750, but one file would average 1740 >= 1.1 x target
    (2150, 2),     # remainder 150: two files of 1075 < 1100
    (2250, 3),     # two files of 1125 >= 1100: keep the remainder
    (10100, 10),   # Java's own example: 10.1 "GB" at 1 "GB" -> 10 files of 1.01
    (11000, 11),
])
def test_expected_output_files(size, expected):
    assert expected_output_files(size, target=1000, min_size=750, write_max=1400) == expected


@pytest.mark.parametrize("size, expected", [(2090, 2), (2110, 3)])
def test_expected_output_files_bounded_by_write_max(size, expected):
    # max 1100 -> write max 1050 < 1.1 x target: 2090 / 2 = 1045 fits, 2110 / 2 = 1055 does not
    assert expected_output_files(size, target=1000, min_size=750, write_max=1050) == expected


def _java_expected(size, target, lo, write_max):
    """A transliteration of SizeBasedFileRewritePlanner.expectedOutputFiles, for random checks."""
    if size < target:
        return 1
    with_rem, without = -(-size // target), size // target
    if size % target > lo:
        return with_rem
    if size // without < min(1.1 * target, float(write_max)):
        return without
    return with_rem


def test_expected_output_files_random_against_transliteration():
    import random

    rnd = random.Random(7)
    for _ in range(2000):
        target = rnd.randint(1, 10 ** 9)
        lo, hi = int(target * 0.75), int(target * 1.8)
        write_max = int(target + (hi - target) * 0.5)
        size = rnd.randint(1, 50 * target)
        assert expected_output_files(size, target=target, min_size=lo, write_max=write_max) == \
            _java_expected(size, target, lo, write_max)


def test_group_split_size_and_outputs(catalog):
    mib = 1024 ** 2
    t = make(catalog)
    t = with_files(t, data(t, 100 * mib), data(t, 100 * mib), data(t, 100 * mib))
    p = plan_compaction(t, CompactOptions(target_file_size=128 * mib, rewrite_all=True))
    g = p.groups[0]
    # 300 MiB at 128: remainder 44 <= 96; 2 files would average 150 >= min(140.8, 179.2) -> 3
    assert g.expected_outputs == 3
    assert g.split_size == 128 * mib  # 100 MiB + 5 KiB is below the target
    t = make(catalog)
    t = with_files(t, data(t, 200 * mib), data(t, 70 * mib))
    g = plan_compaction(t, CompactOptions(target_file_size=128 * mib, rewrite_all=True)).groups[0]
    # 270 MiB: remainder 14, 2 files of 135 < 140.8 -> 2; split 135 MiB + 5 KiB
    assert g.expected_outputs == 2 and g.split_size == 135 * mib + 5 * 1024
    write_max = int(128 * mib + (129 * mib - 128 * mib) * 0.5)  # max 129 MiB -> write max 128.5 MiB
    t = make(catalog)
    t = with_files(t, data(t, write_max - 1000), data(t, write_max - 1000))
    g = plan_compaction(t, CompactOptions(target_file_size=128 * mib, max_file_size=129 * mib, rewrite_all=True)).groups[0]
    # 2 files of (write max - 1000) < min(1.1 x target, write max): 2 outputs; the split
    # estimate (write max - 1000 + 5 KiB) is capped at the write max
    assert g.expected_outputs == 2 and g.split_size == write_max
    t = make(catalog)
    t = with_files(t, data(t, 1000 * mib))
    g = plan_compaction(t, CompactOptions(target_file_size=128 * mib)).groups[0]
    assert g.expected_outputs == 8 and g.split_size == 128 * mib  # 125 MiB + 5 KiB: raised to the target


def test_job_plan_splits_group_into_tasks_by_split_size(catalog):
    from icectl.ops.maintain.compact import job_plan
    from icectl.spark.protocol import to_json

    t = make(catalog)
    t = with_files(t, *(data(t, 400) for _ in range(6)))
    p = plan_compaction(t, OPTS)
    g = p.groups[0]
    # 2400: two files would average 1200 >= 1.1 x target -> 3; split min(800 + 5 KiB, 1400)
    assert (g.expected_outputs, g.split_size) == (3, 1400)
    jp = to_json(job_plan(t, p, io_properties={}))  # the plan file's JSON
    assert [len(x["inputs"]) for x in jp["groups"][0]["tasks"]] == [3, 3]
    assert {x["group_id"] for x in jp["groups"][0]["tasks"]} == {1}
    t2 = make(catalog)
    t2 = with_files(t2, *(data(t2, 4000) for _ in range(3)))  # > max: each its own candidate
    p2 = plan_compaction(t2, OPTS)
    jp2 = to_json(job_plan(t2, p2, io_properties={}))
    assert p2.groups[0].split_size == 1400  # write max
    assert [len(x["inputs"]) for x in jp2["groups"][0]["tasks"]] == [1, 1, 1]
    assert [x["task_id"] for x in jp2["groups"][0]["tasks"]] == ["1-0", "1-1", "1-2"]


# -- --where ---------------------------------------------------------------------------------------

def _day(s: str) -> int:
    return (dt.date.fromisoformat(s) - dt.date(1970, 1, 1)).days


@pytest.fixture
def where_table(catalog):
    t = make(catalog, "region, day(ts), bucket(8, id)")
    files = {}
    for region in ("eu", "us"):
        for day in ("2024-03-01", "2024-03-02", "2024-03-03"):
            for b in (0, 5):
                f = data(t, 100, (region, _day(day), b), name=f"{region}-{day}-{b}.parquet")
                files[(region, day, b)] = f
    t = with_files(t, *files.values())
    return t


def _selected(t, where: str) -> set[tuple]:
    p = plan_compaction(t, CompactOptions(target_file_size=T, rewrite_all=True, where=where))
    out = set()
    for g in p.groups:
        for x in g.tasks:
            name = x.file.file_path.rsplit("/", 1)[1][:-len(".parquet")]
            region, rest = name.split("-", 1)
            out.add((region, rest[:10], int(rest[11:])))
    return out


ALL = {(r, d, b) for r in ("eu", "us") for d in ("2024-03-01", "2024-03-02", "2024-03-03") for b in (0, 5)}


def test_where_identity(where_table):
    assert _selected(where_table, "region = 'eu'") == {x for x in ALL if x[0] == "eu"}
    assert _selected(where_table, "region != 'eu'") == {x for x in ALL if x[0] == "us"}
    assert _selected(where_table, "region > 'eu'") == {x for x in ALL if x[0] == "us"}
    assert _selected(where_table, "region <= 'eu'") == {x for x in ALL if x[0] == "eu"}


def test_where_day_projection_is_inclusive(where_table):
    t = where_table
    assert _selected(t, "ts >= '2024-03-02'") == {x for x in ALL if x[1] >= "2024-03-02"}
    assert _selected(t, "ts > '2024-03-02T12:00:00'") == {x for x in ALL if x[1] >= "2024-03-02"}
    assert _selected(t, "ts < '2024-03-02T12:00:00'") == {x for x in ALL if x[1] <= "2024-03-02"}
    assert _selected(t, "ts = '2024-03-02T12:00:00Z'") == {x for x in ALL if x[1] == "2024-03-02"}
    assert _selected(t, "ts != '2024-03-02T12:00:00Z'") == ALL  # a day may hold other times


def test_where_bucket_projection(where_table):
    bucket = parse_transform("bucket[8]")
    ids_in = {b: next(i for i in range(1000) if bucket.apply(primitive("long"), i) == b) for b in (0, 5)}
    assert _selected(where_table, f"id = {ids_in[5]}") == {x for x in ALL if x[2] == 5}
    assert _selected(where_table, f"id = {ids_in[0]}") == {x for x in ALL if x[2] == 0}
    assert _selected(where_table, f"id > {ids_in[0]}") == ALL  # ranges do not project through bucket
    assert _selected(where_table, f"id != {ids_in[0]}") == ALL


def test_where_double_equals(where_table):
    assert _selected(where_table, "region == 'eu'") == _selected(where_table, "region = 'eu'")


def test_where_conjunction(where_table):
    assert _selected(where_table, "region = 'us' AND ts >= '2024-03-03'") == {
        x for x in ALL if x[0] == "us" and x[1] == "2024-03-03"}


def test_where_with_older_spec(catalog):
    """Files of a spec without the column are kept (they may hold matching rows)."""
    t = make(catalog)
    old = data(t, 100)
    t = with_files(t, old)
    t = evolve_spec(t, "region")
    eu, us = data(t, 100, ("eu",)), data(t, 100, ("us",))
    t = with_files(t, eu, us)
    p = plan_compaction(t, CompactOptions(target_file_size=T, rewrite_all=True, where="region = 'eu'"))
    assert sorted(x.file.file_path for g in p.groups for x in g.tasks) == sorted([old.file_path, eu.file_path])


@pytest.mark.parametrize("where, message", [
    ("name = 'x'", "not in the schema"),
    ("id", "cannot parse"),
    ("id == 'x'", "not a long"),
    ("ts >= 'yesterday'", "not a timestamptz"),
    ("region ~ 'x'", "cannot parse"),
])
def test_where_errors(where_table, where, message):
    with pytest.raises(UsageError, match=message):
        plan_compaction(where_table, CompactOptions(target_file_size=T, where=where))


def test_where_on_non_partition_column(catalog):
    t = make(catalog, "region", schema="id:long!, region:string, qty:int")
    with pytest.raises(UsageError, match="partition source"):
        plan_compaction(t, CompactOptions(where="qty = 1"))


# -- options and refs --------------------------------------------------------------------------------

@pytest.mark.parametrize("opts, message", [
    (CompactOptions(target_file_size=1000, min_file_size=1000), "min-file-size"),
    (CompactOptions(target_file_size=1000, max_file_size=1000), "max-file-size"),
    (CompactOptions(target_file_size=1000, strategy="zorder"), "--strategy"),
    (CompactOptions(target_file_size=1000, strategy="sort"), "sort order"),
])
def test_bad_options(catalog, opts, message):
    t = make(catalog)
    with pytest.raises(UsageError, match=message):
        plan_compaction(t, opts)


def test_branches_and_tags(catalog):
    from icectl.spec.metadata import SnapshotRef

    t = make(catalog)
    assert plan_compaction(t, OPTS).starting_snapshot_id is None  # empty table: nothing to do
    t = with_files(t, *(data(t, 100) for _ in range(5)))
    sid = t.metadata.current_snapshot_id
    from icectl.table.updates import SetSnapshotRef

    t = commit(t, [SetSnapshotRef("tg", SnapshotRef(sid, "tag")), SetSnapshotRef("br", SnapshotRef(sid, "branch"))])
    with pytest.raises(UsageError, match="tag"):
        plan_compaction(t, CompactOptions(target_file_size=T, branch="tg"))
    with pytest.raises(NotFoundError):
        plan_compaction(t, CompactOptions(target_file_size=T, branch="nope"))
    t = append_files(t, [data(t, 100)], branch="br")
    p = plan_compaction(t, CompactOptions(target_file_size=T, branch="br"))
    assert p.branch == "br" and p.starting_snapshot_id == t.metadata.refs["br"].snapshot_id
    assert p.input_files == 6
    assert plan_compaction(t, OPTS).input_files == 5


def test_plan_numbers(catalog):
    t = make(catalog, "region")
    t = with_files(t, data(t, 100, ("eu",), records=7), data(t, 200, ("eu",), records=8),
                   data(t, 300, ("eu",), records=9), data(t, 2000, ("us",), records=1))
    p = plan_compaction(t, CompactOptions(target_file_size=T, min_input_files=3))
    assert [(g.group_id, g.partition_display, g.input_bytes, g.input_records, g.expected_outputs) for g in p.groups] == [
        (1, "region=eu", 600, 24, 1), (2, "region=us", 2000, 1, 2)]
    assert (p.total_files, p.input_files, p.input_bytes) == (4, 4, 2600)
    assert p.starting_sequence_number == t.metadata.snapshot_by_id(t.metadata.current_snapshot_id).sequence_number
