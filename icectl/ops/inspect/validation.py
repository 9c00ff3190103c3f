"""``icectl validate``: the checks of :mod:`icectl.validate`, run on a table of a catalog."""
from __future__ import annotations

from icectl.catalog.base import Catalog, Identifier
from icectl.validate.codes import fix_command
from icectl.validate.findings import Checked, ValidateOptions, ValidationReport
from icectl.validate.run import validate_table

__all__ = ["Checked", "ValidationReport", "check_table", "fix_command"]


def check_table(catalog: Catalog, identifier: Identifier, *, deep: bool = False, all_snapshots: bool = False,
                check_bounds: bool = True) -> ValidationReport:
    """Validate the table (any catalog, a path catalog included): the report of every finding."""
    return validate_table(catalog, identifier, ValidateOptions(deep=deep, all_snapshots=all_snapshots,
                                                               check_bounds=check_bounds))
