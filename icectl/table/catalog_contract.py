"""What the table layer needs from a catalog, and nothing more: load a table's state, commit
requirements and updates, replace the metadata (a restore), the FileIO for a table's files and
the default location of a new table. :class:`icectl.catalog.base.Catalog` satisfies it; the
table layer never imports the catalog package (the catalog applies commits with this package's
builder, so the dependency points one way), as iceberg-go's ``table.CatalogIO``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from icectl.io import FileIO
from icectl.spec.metadata import TableMetadata
from icectl.spec.view import ViewMetadata
from icectl.table.identifier import Identifier

if TYPE_CHECKING:  # annotations only: a read-only command loads no update or requirement type
    from icectl.table.requirements import TableRequirement
    from icectl.table.updates import TableUpdate

__all__ = ["CatalogContract", "TableState", "ViewState"]


@dataclass(frozen=True)
class TableState:
    """A table as its catalog gives it: the current metadata file and its content."""

    metadata_location: str
    metadata: TableMetadata
    # Storage properties the catalog hands out for this table (REST: vended credentials).
    config: dict[str, str] = field(default_factory=dict)
    # Old metadata files the commit deleted (write.metadata.delete-after-commit.enabled).
    deleted_metadata_files: tuple[str, ...] = ()


@dataclass(frozen=True)
class ViewState:
    """A view as its catalog gives it: the current view metadata file and its content (what
    :meth:`icectl.catalog.base.Catalog.load_view` and ``register_view`` return; the table layer
    itself needs no view)."""

    metadata_location: str
    metadata: ViewMetadata
    # Properties the catalog hands out for this view (REST: LoadViewResult's config).
    config: dict[str, str] = field(default_factory=dict)


class CatalogContract(Protocol):
    """The catalog of a :class:`~icectl.table.loaded.Table` and a
    :class:`~icectl.table.transaction.Transaction` (see :class:`icectl.catalog.base.Catalog` for
    what each method promises)."""

    io: FileIO

    def load(self, ident: Identifier) -> TableState: ...

    def commit(self, ident: Identifier, requirements: list[TableRequirement], updates: list[TableUpdate], *,
               now_ms: int | None = None, base_location: str | None = None) -> TableState: ...

    def replace_metadata(self, ident: Identifier, base_location: str, metadata: TableMetadata) -> TableState: ...

    def io_for(self, ident: Identifier) -> FileIO: ...

    def default_table_location(self, ident: Identifier) -> str: ...
