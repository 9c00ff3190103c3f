"""One exception root for icectl; every error carries its exit code and an optional hint.

The CLI maps these to one-line messages on stderr and the exit codes documented in docs/exit-codes.md.
The engine, catalogs and IO raise them; nothing below the CLI prints.
"""
from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    ERROR = 1  # unexpected internal error
    USAGE = 2  # bad option or argument (typer/click also use 2)
    NOT_FOUND = 3  # table, namespace, snapshot, ref or file does not exist
    INVALID_METADATA = 4  # malformed or truncated metadata, unsupported format version
    CONFLICT = 5  # commit conflict / already exists / concurrent change
    REFUSED = 6  # refused for safety (no terminal and no --yes, gc disabled, ...)
    UNSUPPORTED = 7  # a valid request the target cannot do (e.g. v4 in a file-system catalog)
    VALIDATION_FAILED = 8  # validate found errors
    EXTERNAL = 9  # an external program (spark-submit, java) failed
    STORAGE = 10  # a file or server could not be read, written or reached (permission, disk, network)
    NOT_AUTHORIZED = 11  # the catalog server refused the credentials (HTTP 401/403)
    COMMIT_STATE_UNKNOWN = 12  # a commit was sent but its outcome is unknown: check the table
    HEALTH_WARNING = 13  # health: maintenance recommended (the worst finding is a warning)
    HEALTH_CRITICAL = 14  # health: maintenance overdue (a critical finding), or a table could not be measured
    MAINTENANCE_FAILED = 15  # maintain: a step failed on at least one table (the other tables were maintained)
    PARTIAL_FAILURE = 16  # list --all: some tables could not be read (each is listed with its error, the rest in full)
    EMPTY_SELECTION = 17  # health/maintain --all: the catalog has no tables (without --allow-empty)
    NOT_ALL_MAINTAINED = 18  # maintain: some tables were skipped (locked by another run, time budget spent)
    INCOMPLETE_REBUILD = 19  # repair: a rebuilt manifest list is not proven complete; refused without --accept-loss
    QUARANTINE_LEFT = 21  # restore-quarantine: some files stay in quarantine (path exists again, or missing), each listed


def install_hint(extra: str) -> str:
    """How to install icectl's ``extra``: from the package index, and from a checkout (the way the
    README installs)."""
    return f"pip install 'icectl[{extra}]' (from a checkout: pip install '.[{extra}]')"


class IcectlError(Exception):
    """Root of every error icectl raises on purpose."""

    exit_code: ExitCode = ExitCode.ERROR
    # True for a result that is not an error (see Outcome); a refusal is one when the user declined
    outcome: bool = False

    def __init__(self, message: str, *, hint: str | None = None, outcome: bool | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        if outcome is not None:
            self.outcome = outcome


class UsageError(IcectlError):
    """A bad option, argument or expression given by the user."""

    exit_code = ExitCode.USAGE


class NotFoundError(IcectlError):
    """A table, namespace, snapshot, ref or file that does not exist."""

    exit_code = ExitCode.NOT_FOUND


class NoSuchTableError(NotFoundError):
    """The catalog has no such table."""


class NoSuchViewError(NotFoundError):
    """The catalog has no such view."""


class NoSnapshotsError(NotFoundError):
    """The table has no snapshot yet, so a command that needs one has nothing to work on."""

    def __init__(self, message: str = "the table has no snapshots yet", *, hint: str | None = None):
        super().__init__(message, hint=hint or "a writer (Spark, Trino, ...) adds the first snapshot; "
                         "icectl demo builds a table with a history to try icectl on")


class NoSuchNamespaceError(NotFoundError):
    """The catalog has no such namespace."""


class InvalidMetadataError(IcectlError):
    """A metadata file (JSON, Avro, Puffin) that is malformed, truncated or breaks the spec."""

    exit_code = ExitCode.INVALID_METADATA


class UnsupportedFormatVersionError(InvalidMetadataError):
    """A format version this icectl cannot read."""


class CommitConflictError(IcectlError):
    """The table changed under a commit (compare-and-set failed) or already exists."""

    exit_code = ExitCode.CONFLICT


class ConflictingChangeError(CommitConflictError):
    """A concurrent commit made this change invalid: re-reading and retrying cannot help."""


class CommitStateUnknownError(IcectlError):
    """A commit was sent but its outcome is unknown (a timeout, a server error): nothing that it
    would unreference may be deleted, and the table must be checked before trying again."""

    exit_code = ExitCode.COMMIT_STATE_UNKNOWN


class AlreadyExistsError(CommitConflictError):
    """A table or namespace that already exists."""


class Outcome(IcectlError):
    """A result that is not an error: the command did what was asked, and its documented exit code
    says what it found (a table needs maintenance) or that nothing was done (the user declined).
    The CLI prints its message as ``icectl: MESSAGE``, never as an error."""

    outcome = True


class RefusedError(IcectlError):
    """An operation refused for safety."""

    exit_code = ExitCode.REFUSED


class UnsupportedError(IcectlError):
    """A valid request that this catalog or format version cannot do."""

    exit_code = ExitCode.UNSUPPORTED


class ExternalCommandError(IcectlError):
    """An external program (spark-submit, java) failed."""

    exit_code = ExitCode.EXTERNAL


class StorageError(IcectlError):
    """A file or server that could not be read, written or reached: permission denied, a full
    disk, a path under a file, a refused connection."""

    exit_code = ExitCode.STORAGE


class NotAuthorizedError(IcectlError):
    """The catalog server refused the request's credentials (HTTP 401 or 403)."""

    exit_code = ExitCode.NOT_AUTHORIZED


class NamespaceNotEmptyError(CommitConflictError):
    """A namespace that still holds tables (or namespaces) cannot be dropped."""


class ValidationFailedError(IcectlError):
    """``validate`` found errors (the report itself went to stdout)."""

    exit_code = ExitCode.VALIDATION_FAILED


class HealthWarningError(Outcome):
    """``health``: a table needs maintenance (the report itself went to stdout)."""

    exit_code = ExitCode.HEALTH_WARNING


class HealthCriticalError(Outcome):
    """``health``: a table's maintenance is overdue, or a table could not be measured."""

    exit_code = ExitCode.HEALTH_CRITICAL


class MaintenanceFailedError(IcectlError):
    """``maintain``: a step failed on at least one table; the others were still maintained."""

    exit_code = ExitCode.MAINTENANCE_FAILED


class MigrationIncompleteError(IcectlError):
    """``migrate``: a table was left behind (a conflict, a change during the run, an error); the
    report itself went to stdout. The exit code is the one of what stopped it: 5 for a conflict or a
    change, or the error's own."""

    def __init__(self, message: str, *, exit_code: ExitCode, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.exit_code = exit_code
class PartialFailureError(IcectlError):
    """A listing over many tables finished, but some could not be read (the listing, on stdout,
    names each with its error)."""

    exit_code = ExitCode.PARTIAL_FAILURE


class EmptySelectionError(IcectlError):
    """``--all`` found no table: a wrong catalog (name, URI, warehouse) looks the same as an empty one."""

    exit_code = ExitCode.EMPTY_SELECTION


class NotAllMaintainedError(IcectlError):
    """maintain skipped some tables (another run held their lock, or the time budget was spent)."""

    exit_code = ExitCode.NOT_ALL_MAINTAINED


class IncompleteRebuildError(IcectlError):
    """``repair`` rebuilt a lost manifest list that the snapshot summary does not prove complete
    (the plan says which totals differ); nothing is committed without ``--accept-loss``."""

    exit_code = ExitCode.INCOMPLETE_REBUILD


class QuarantineLeftError(IcectlError):
    """``remove-orphans --restore-quarantine`` put back what it could; the files listed (on
    stdout) stay in quarantine: their original path exists again, or the file is missing."""

    exit_code = ExitCode.QUARANTINE_LEFT
