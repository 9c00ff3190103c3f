"""A demo table in a folder that a test can put back as it was, and what a crashed run must leave:
each table either absent or loading, validating clean (``validate --deep --all-snapshots``, exit
0), with every file a retained snapshot reaches present, and its rows (per branch and tag, read
with pyarrow by ``tests/demo_rows.py``) those of before the run or of after a successful run.
"""
from __future__ import annotations

import hashlib
import io
import json
import os
import pathlib
import re
import shutil
import sys
import time
from dataclasses import dataclass, field
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/ for demo_rows
from demo_rows import snapshot_rows  # noqa: E402

from icectl.errors import InvalidMetadataError, NoSuchTableError, NotFoundError  # noqa: E402

State = dict[str, "dict[str, Any] | None"]  # table -> {"ref NAME": rows, "columns": ...}, None when absent


@dataclass
class DemoWorkspace:
    """``demo.events`` (the demo's fixed history) in ``root``, with a pristine copy beside it;
    :meth:`reset` puts the folder back byte for byte, modification times included (remove-orphans
    looks at them). Paths in the metadata are absolute, so the copy comes back to the same place."""

    root: pathlib.Path
    format_version: int = 2
    setup: tuple[tuple[str, ...], ...] = ()  # commands run on the demo before the pristine copy
    kind: str = "sql"  # or "hadoop": the file-system catalog (version-hint.text, rename)
    lost: tuple[str, ...] = ()  # data files removed from storage by the setup step "!lose-data-file"
    orphans: dict[str, str] = field(default_factory=dict)  # "!plant-orphans": every orphan -> its sha256
    broken: tuple[str, ...] = ()  # data files whose entry the setup step "!break-metrics" made lie
    duplicated: tuple[str, ...] = ()  # data files the setup step "!duplicate-data-file" added a second time

    @property
    def uri(self) -> str:
        return f"sqlite:///{self.root}/catalog.db"

    @property
    def warehouse(self) -> str:
        return str(self.root / "wh")

    @property
    def pristine(self) -> pathlib.Path:
        return self.root.with_name(self.root.name + ".pristine")

    def build(self) -> "DemoWorkspace":
        from icectl.ops.demo import build_demo

        self.root.mkdir(parents=True)
        (self.root / "wh").mkdir()
        build_demo(self.catalog(), format_version=self.format_version)
        for argv in self.setup:
            if argv == ("!lose-data-file",):  # what repair is for: a live data file gone from storage
                self.lost = (self._lose_a_data_file(),)
                continue
            if argv == ("!lose-manifest-list",):  # what the manifest-list rebuild is for: main's head's list gone
                self.lost = (self._lose_the_head_manifest_list(),)
                continue
            if argv == ("!plant-orphans",):  # a dozen orphans more, 10 days old, beside the demo's own
                self.orphans = self._plant_orphans(12)
                continue
            if argv == ("!truncate-current-metadata",):  # what restore without --to-* is for
                location = self.catalog().load_metadata_location(("demo", "events"))
                data = pathlib.Path(location).read_bytes()
                pathlib.Path(location).write_bytes(data[: len(data) // 2])
                continue
            if argv == ("!break-metrics",):  # what repair --metrics is for: an entry that lies
                self.broken = (self._break_metrics(),)
                continue
            if argv == ("!duplicate-data-file",):  # what repair --duplicates is for: a retried append
                self.duplicated = (self._duplicate_a_data_file(),)
                continue
            code, _, err = self.run(*argv)
            assert code == 0, f"{argv}: {err}"
        shutil.copytree(self.root, self.pristine)
        return self

    def _lose_the_head_manifest_list(self) -> str:
        from icectl.table.loaded import load_table

        t = load_table(self.catalog(), ("demo", "events"))
        path = t.resolve(t.metadata.current_snapshot.manifest_list)
        os.unlink(path)
        return path

    def _lose_a_data_file(self) -> str:
        from icectl.table.loaded import load_table

        t = load_table(self.catalog(), ("demo", "events"))
        path = sorted(f.file_path for _, f in t.live_files(t.metadata.current_snapshot) if f.content == 0)[0]
        os.unlink(path)
        return path

    def _plant_orphans(self, n: int) -> dict[str, str]:
        from icectl.ops.maintain.remove_orphans import plan_orphans
        from icectl.table.loaded import load_table

        t = load_table(self.catalog(), ("demo", "events"))
        old = time.time() - 10 * 86400
        for i in range(n):
            p = pathlib.Path(t.location) / "data" / f"p={i % 3}" / f"orphan-{i}.parquet"
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(os.urandom(64 + i))
            os.utime(p, (old, old))
        return {f.path: hashlib.sha256(pathlib.Path(f.path).read_bytes()).hexdigest() for f in plan_orphans(t).orphans}

    def _break_metrics(self) -> str:
        """main's head gets a manifest whose entry for a data file of several rows has an ``id``
        upper bound at its minimum (rows hidden), one row fewer and a size one byte off."""
        from dataclasses import replace

        from break_metrics import break_metrics
        from icectl.table.loaded import load_table

        t = load_table(self.catalog(), ("demo", "events"))
        return break_metrics(t, lambda df: df.record_count > 1 and df.lower_bounds.get(1) != df.upper_bounds.get(1),
                             lambda df: replace(df, record_count=df.record_count - 1,
                                                file_size_in_bytes=df.file_size_in_bytes + 1,
                                                upper_bounds={**df.upper_bounds, 1: df.lower_bounds[1]}))

    def _duplicate_a_data_file(self) -> str:
        """main's head gets a snapshot that appends one of its live data files again (a manifest of
        its own, written by icectl's manifest writer), as a retried commit would."""
        from helpers import append_files
        from icectl.table.loaded import load_table

        t = load_table(self.catalog(), ("demo", "events"))
        f = sorted((f for _, f in t.live_files(t.metadata.current_snapshot) if f.content == 0),
                   key=lambda f: f.file_path)[0]
        append_files(t, [f])
        return f.file_path

    def reset(self) -> None:
        shutil.rmtree(self.root)
        shutil.copytree(self.pristine, self.root)

    def untouched(self) -> bool:
        """Every file of the pristine copy is here as it was (size and modification time; the
        catalog database too), and no new ``vN.metadata.json``: the run only added files, which no
        table references, so the tables are exactly as before. A shortcut for :func:`observe`, never a weaker check."""
        if "_listing" not in self.__dict__:
            self.__dict__["_listing"] = _listing(self.pristine)
        pristine, now = self.__dict__["_listing"], _listing(self.root)
        if any(re.search(r"/v\d+(\.gz)?\.metadata\.json$", p) for p in set(now) - set(pristine)):
            return False  # a file-system catalog's next version: that file is the pointer
        return all(now.get(p) == v for p, v in pristine.items())

    def catalog(self) -> Any:
        from icectl.catalog import CatalogConfig, build_catalog

        props = {"type": self.kind, "warehouse": self.warehouse}
        if self.kind == "sql":
            props["uri"] = self.uri
        return build_catalog(CatalogConfig("default", props))

    @property
    def catalog_args(self) -> list[str]:
        return (["--uri", self.uri] if self.kind == "sql" else []) + ["--warehouse", self.warehouse]

    def run(self, *args: str) -> tuple[int, str, str]:
        """``icectl --uri ... --warehouse ... ARGS`` in this process."""
        from icectl.cli.context import Env
        from icectl.cli.main import run

        env = Env(stdout=io.StringIO(), stderr=io.StringIO())
        code = run([*self.catalog_args, *args], env)
        return code, env.stdout.getvalue(), env.stderr.getvalue()

    def files(self) -> set[str]:
        return {os.path.join(d, f) for d, _, fs in os.walk(self.root) for f in fs}


def _listing(root: pathlib.Path) -> dict[str, tuple[int, int]]:
    out = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            st = os.stat(os.path.join(d, f))
            out[os.path.relpath(os.path.join(d, f), root)] = (st.st_size, st.st_mtime_ns)
    return out


def observe(ws: DemoWorkspace, names: list[str]) -> State:
    """Each table's rows per ref, after checking that it is whole (or None: not in the catalog)."""
    from icectl.table.loaded import load_table
    from icectl.table.reachability import reachable_files

    catalog = ws.catalog()
    out: State = {}
    for name in names:
        ident = tuple(name.split("."))
        try:
            t = load_table(catalog, ident)
        except NoSuchTableError:
            out[name] = None
            continue
        except (InvalidMetadataError, NotFoundError):
            # a broken current metadata file (what a restore from it starts from): the pointer, and
            # the file kept as it was
            location = catalog.load_metadata_location(ident)
            assert os.path.exists(location), f"{name}: the broken metadata file {location} was deleted"
            out[name] = {"broken": location, "size": os.path.getsize(location)}
            continue
        code, stdout, stderr = ws.run("-o", "json", "validate", name, "--deep", "--all-snapshots")
        if code == 8 and ws.lost:
            # the file the setup removed: older snapshots still name it after a repair; nothing else
            errors = [f for f in json.loads(stdout)["findings"] if f["severity"] == "error"]
            # (or the manifest list the setup removed: the snapshot it was is still in the history)
            assert all(f["code"] in ("FILE_MISSING", "MANIFEST_LIST_UNREADABLE") and f["file"] in ws.lost
                       for f in errors), errors
        elif code == 8 and ws.broken:
            # the entry the setup made lie: the snapshot it committed still holds it after a repair
            errors = [f for f in json.loads(stdout)["findings"] if f["severity"] == "error"]
            assert all(f["code"] in _METRIC_ERRORS and f["file"] in ws.broken for f in errors), errors
        elif code == 8 and ws.duplicated:
            # the file the setup added again: the snapshot that did it still lists it twice after a repair
            errors = [f for f in json.loads(stdout)["findings"] if f["severity"] == "error"]
            assert all(f["code"] in ("DUPLICATE_LIVE_FILE", "DUPLICATE_FILE_CONFLICT") and f["file"] in ws.duplicated
                       for f in errors), errors
        else:
            assert code == 0, f"{name} does not validate clean (exit {code}): {stdout[-2000:]} {stderr}"
        md = t.metadata
        # a snapshot whose manifest list the setup removed reaches nothing (repair rebuilds it on top)
        reach = reachable_files(t, md, [s for s in md.snapshots if t.resolve(s.manifest_list or "") not in ws.lost])
        missing = sorted(p for p in reach.paths() if not t.io.exists(p) and p not in ws.lost)
        assert not missing, f"{name}: {len(missing)} files a retained snapshot reaches are gone: {missing[:5]}"
        assert t.io.exists(t.metadata_location)
        head: dict[str, Any] = {}
        if ws.broken or ws.duplicated:  # what main's head says of the files: wrong before a repair, true after
            head_code, head_out, _ = ws.run("-o", "json", "validate", name, "--deep")
            head = {"head findings": sorted({f["code"] for f in json.loads(head_out)["findings"]})}
        out[name] = {**head, "format-version": md.format_version, "columns": [f.name for f in md.schema.fields],
                     "properties": dict(md.properties),
                     **{f"ref {ref}": _rows(t, r.snapshot_id) for ref, r in sorted(md.all_refs.items())}}
    return out


_METRIC_ERRORS = {"BOUND_HIDES_ROWS", "RECORD_COUNT_MISMATCH", "FILE_SIZE_MISMATCH", "METRIC_VALUE_COUNT",
                  "METRIC_NULL_COUNT"}


def _rows(t: Any, snapshot_id: int) -> Any:
    """The snapshot's rows, or "unreadable" when a file it needs is gone (a table to repair)."""
    try:
        return snapshot_rows(t, snapshot_id)
    except (FileNotFoundError, NotFoundError):  # a data file or a manifest list gone
        return "unreadable"
