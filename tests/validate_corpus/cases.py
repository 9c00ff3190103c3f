"""The validation corpus: deliberately broken tables, each with one named defect.

Every case starts from a valid table of `tables.build` (format version `fv`), corrupts one thing
(edits the metadata JSON, rewrites a manifest list or a manifest with icectl's writers, deletes or
truncates a file) and names the finding codes `validate` must report: exactly those error codes
(and no other error code), warnings aside. Nothing is checked in: the tables are built in a
temporary folder when the test runs.

    from validate_corpus.cases import CASES, build_case
    base = build_case(CASES["missing-data-file"], tmp_path)
"""
from __future__ import annotations

from . import files_cases, manifest_cases, metadata_cases  # noqa: F401 (importing registers their cases)
from .helpers import CASES, Case, build_case

__all__ = ["CASES", "Case", "build_case"]
