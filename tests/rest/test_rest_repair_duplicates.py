"""issue 25 item 4 over the real REST server (Iceberg Java's own handlers): a v2 table Spark wrote
through the server (two appends, a position delete) gets its first data file added again in a
manifest of its own, committed through the server as a retried append would leave it. Spark then
counts that file's rows twice; ``validate`` reports the duplicate and names the fix; ``repair
--yes`` (the default set) keeps the entry with the lowest data sequence number through the
server's commit endpoint; Spark counts the rows written minus the one deleted, and ``validate
--deep`` is clean."""
from __future__ import annotations

import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from helpers import append_files  # noqa: E402

from icectl.formats.manifest import FileContent  # noqa: E402
from icectl.table.loaded import load_table  # noqa: E402


def _json(rest_env, *args: str, expect: int = 0):
    code, out, err = rest_env.cli("-o", "json", *args)
    assert code == expect, (args, code, err)
    return json.loads(out)


def test_a_data_file_live_twice_is_left_once_through_the_rest_commit(rest_env, spark_rest):
    t = rest_env.table("dups")
    spark_rest.sql(f"CREATE NAMESPACE IF NOT EXISTS rc.{rest_env.namespace}")
    spark_rest.sql(f"CREATE TABLE rc.{t} (id bigint, name string) USING iceberg TBLPROPERTIES "
                   "('format-version'='2', 'write.delete.mode'='merge-on-read')")
    for lo in (1, 6):
        spark_rest.sql(f"INSERT INTO rc.{t} SELECT /*+ COALESCE(1) */ * FROM VALUES "
                       + ", ".join(f"({i}, 'n{i}')" for i in range(lo, lo + 5)))
    spark_rest.sql(f"DELETE FROM rc.{t} WHERE id = 2")
    count = f"SELECT count(*) FROM rc.{t}"
    assert spark_rest.sql(count)[0][0] == 9

    table = load_table(rest_env.catalog(), tuple(t.split(".")))
    data = [e for e in table.live_entries(table.metadata.current_snapshot) if e.data_file.content == FileContent.DATA]
    first = next(e.data_file for e in data if e.sequence_number == 1)  # ids 1..5, the deleted row among them
    append_files(table, [first])
    assert spark_rest.sql(count)[0][0] == 14  # Java reads it twice; the delete misses the second entry

    found = _json(rest_env, "validate", t, expect=8)["findings"]
    dup = [f for f in found if f["code"] == "DUPLICATE_LIVE_FILE"]
    assert len(dup) == 1 and dup[0]["fix"] == f"icectl repair {t} --duplicates --dry-run"

    done = _json(rest_env, "repair", t, "--yes")
    assert done["applied"] and done["duplicates_snapshot_id"] is not None
    assert spark_rest.sql(count)[0][0] == 9
    assert sorted(r[0] for r in spark_rest.sql(f"SELECT id FROM rc.{t}")) == [1] + list(range(3, 11))
    code, out, err = rest_env.cli("validate", t, "--deep")
    assert code == 0, out + err
