"""File access through fsspec, chosen by URL scheme (local, s3/s3a/s3n through s3fs, gs through
gcsfs and abfs/abfss/wasb/wasbs through adlfs (:mod:`icectl.io.cloud`, extras ``icectl[gcs]`` and
``icectl[adls]``), others as fsspec knows them). Storage properties use PyIceberg's names
(``s3.endpoint``, ``s3.access-key-id``, ``s3.secret-access-key``, ``s3.region``,
``s3.path-style-access``, ``gcs.*``, ``adls.*``).

Heavy imports (s3fs, gcsfs, adlfs) happen only when a path with that scheme is first used.
"""
from __future__ import annotations

import builtins
import contextlib
import errno
import os
import posixpath
import re
import stat
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, BinaryIO, Callable, Iterable, Iterator

from icectl.io.cloud import (ADLS_DELETE_BATCH, ADLS_SCHEMES, DEFAULT_DELETE_IN_FLIGHT as CLOUD_DELETE_IN_FLIGHT,
                              GCS_DELETE_BATCH, GCS_SCHEMES, adls_fs_path, adls_host, batch_rm,
                              make_adls_filesystem, make_gcs_filesystem)
from icectl.errors import (AlreadyExistsError, IcectlError, InvalidMetadataError, NotFoundError, RefusedError,
                           StorageError, UnsupportedError)

if TYPE_CHECKING:  # icectl.io.safety imports this module
    from icectl.io.safety import PathGuard

_SCHEME = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*):")
S3_SCHEMES = ("s3", "s3a", "s3n")
SKIPPED_FOR_SAFETY = "skipped for safety"  # how delete_many reports a path its guard refused


def scheme_of(path: str) -> str:
    m = _SCHEME.match(path)
    if not m or len(m.group(1)) == 1:  # a Windows drive letter is not a scheme
        return "file"
    return m.group(1).lower()


def has_scheme(path: str) -> bool:
    m = _SCHEME.match(path)
    return bool(m) and len(m.group(1)) > 1


def check_path(path: str) -> str:
    """``path``, or InvalidMetadataError when no file system can name it: a NUL byte, or text that
    is not Unicode (a lone surrogate decoded from a ``\\ud800`` escape in a metadata file).
    Command-line arguments pass: bytes that are not UTF-8 arrive as ``surrogateescape`` text,
    which encodes back to the same bytes."""
    if "\x00" in path:
        raise InvalidMetadataError(f"invalid file path {path}: it holds a NUL byte")
    try:
        path.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        raise InvalidMetadataError(f"invalid file path {path}: it is not valid Unicode (a lone surrogate)") from None
    return path


def local_path(path: str) -> str:
    """``file:/x``, ``file:///x`` and ``/x`` are the same local path ``/x``."""
    if path.startswith("file://"):
        return path[len("file://"):] or "/"
    if path.startswith("file:"):
        return path[len("file:"):]
    return path


def normalize_location(path: str) -> str:
    """A path with scheme and authority normalised for comparison (s3a:// == s3://, file:/ == /)."""
    s = scheme_of(path)
    if s == "file":
        return "file://" + posixpath.normpath(os.path.abspath(local_path(path)))
    rest = path.split(":", 1)[1]
    if s in S3_SCHEMES:
        s = "s3"
    return f"{s}:{rest}".rstrip("/")


@dataclass(frozen=True)
class FileInfo:
    path: str
    size: int
    modified_ms: int | None = None
    symlink: str | None = None  # a symbolic link (to a file or a folder, never followed): its target


@dataclass
class FileIO:
    """Reads, writes, lists and deletes files by path, whatever the storage."""

    properties: dict[str, str] = field(default_factory=dict)
    _filesystems: dict[str, Any] = field(default_factory=dict, repr=False)

    # -- file systems -------------------------------------------------------------------------
    def filesystem(self, path: str) -> Any:
        check_path(path)
        scheme = scheme_of(path)
        key = _fs_key(path)
        fs = self._filesystems.get(key)
        if fs is None:
            fs = self._make_fs(key, path)
            self._filesystems[key] = fs
        return fs

    def _make_fs(self, scheme: str, path: str = "") -> Any:
        import fsspec

        if scheme == "gs":
            return make_gcs_filesystem(self.properties)
        if scheme.startswith("adls:"):  # one file system for each storage account
            return make_adls_filesystem(self.properties, adls_host(path))
        if scheme == "file":
            return fsspec.filesystem("file", auto_mkdir=True)
        if scheme == "s3":
            from icectl.io.s3 import make_filesystem

            return make_filesystem(self.properties)
        try:
            return fsspec.filesystem(scheme)
        except (ImportError, ValueError, OSError) as e:  # OSError: hdfs:// without libhdfs and a JVM
            raise UnsupportedError(f"no file system for the URI scheme {scheme!r}: {e}",
                                   hint="fsspec reads it only with its package installed (gcsfs for gs://, "
                                        "adlfs for abfs://); a path in a table's metadata may also be corrupt") from None

    def _remote(self, path: str, *, writing: bool) -> Any:
        return remote_errors(path, writing=writing, endpoint=self.properties.get("s3.endpoint"))

    def _fs_path(self, path: str) -> str:
        s = scheme_of(path)
        if s == "file":
            return local_path(path)
        if s in S3_SCHEMES or s in GCS_SCHEMES:
            return path.split("://", 1)[1]
        if s in ADLS_SCHEMES:
            return adls_fs_path(path)
        return path

    # -- operations ---------------------------------------------------------------------------
    # Local paths go to the operating system directly: fsspec's local file system costs tens of
    # microseconds a call, which adds up over the hundreds of thousands of files expire, orphan
    # removal and validate --deep touch.
    def open(self, path: str, mode: str = "rb") -> BinaryIO:
        """``path`` opened for streaming (``"rb"`` or ``"wb"``), e.g. for pyarrow's Parquet reader
        and writer; the caller closes it. Writing creates missing parent directories and replaces
        an existing file. A failure to open is an icectl error, as in :meth:`read`."""
        if mode not in ("rb", "wb"):
            raise ValueError(f"FileIO.open mode must be 'rb' or 'wb', not {mode!r}")
        try:
            if scheme_of(check_path(path)) == "file":
                p = local_path(path)
                if mode == "wb":
                    os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
                return builtins.open(p, mode)
            fs = self.filesystem(path)
            with self._remote(path, writing=mode == "wb"):
                return fs.open(self._fs_path(path), mode)
        except OSError as e:
            raise _storage_error(path, e, writing=mode == "wb") from None

    def read(self, path: str) -> bytes:
        if scheme_of(path) in S3_SCHEMES:
            # One GET: open() would first ask for the object's size and ETag (a HEAD), and so would
            # cat_file with max_concurrency > 1 (to split a large object into ranged GETs).
            fs = self.filesystem(path)
            try:
                with self._remote(path, writing=False):
                    return fs.cat_file(self._fs_path(path), max_concurrency=1)
            except OSError as e:
                raise _storage_error(path, e, writing=False) from None
        with self.open(path, "rb") as f:
            try:
                with self._remote(path, writing=False):
                    return f.read()
            except OSError as e:
                raise _storage_error(path, e, writing=False) from None

    def read_range(self, path: str, offset: int, length: int) -> bytes:
        with self.open(path, "rb") as f:
            f.seek(offset)
            return f.read(length)

    def write(self, path: str, data: bytes, *, overwrite: bool = False) -> None:
        if scheme_of(check_path(path)) == "file":
            p = local_path(path)
            if not overwrite and os.path.lexists(p):
                raise AlreadyExistsError(f"refusing to overwrite existing file: {path}")
            # Write beside, then rename: a reader never sees a half-written metadata file.
            tmp = f"{p}.{uuid.uuid4().hex}.tmp"
            try:
                os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
                with builtins.open(tmp, "wb") as f:
                    f.write(data)
                os.replace(tmp, p)
            except OSError as e:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
                raise _storage_error(path, e, writing=True) from None
            return
        fs = self.filesystem(path)
        p = self._fs_path(path)
        with self._remote(path, writing=True):
            if not overwrite and fs.exists(p):
                raise AlreadyExistsError(f"refusing to overwrite existing file: {path}")
            with fs.open(p, "wb") as f:
                f.write(data)

    def create_exclusive(self, path: str, data: bytes) -> bool:
        """Create ``path`` with ``data`` unless it exists; return whether this call created it.

        Atomic against other processes and hosts: a link (which refuses an existing name) on a local or
        mounted disk,
        a conditional PUT (``If-None-Match: *``) on S3 through s3fs's exclusive mode ``xb``."""
        if scheme_of(path) == "file":
            # Written beside, then linked: the file appears with its whole content, or not at all
            # (an O_EXCL create would show other processes an empty file for a moment).
            p = local_path(path)
            tmp = f"{p}.{uuid.uuid4().hex}.tmp"
            try:
                os.makedirs(os.path.dirname(p) or ".", exist_ok=True)
                with builtins.open(tmp, "wb") as f:
                    f.write(data)
                os.link(tmp, p)
            except FileExistsError:
                return False
            except OSError as e:
                raise _storage_error(path, e, writing=True) from None
            finally:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
            return True
        fs = self.filesystem(path)
        try:
            with fs.open(self._fs_path(path), "xb") as f:
                f.write(data)
        except FileExistsError:
            return False
        return True

    def exists(self, path: str) -> bool:
        if scheme_of(check_path(path)) == "file":
            return os.path.exists(local_path(path))
        fs = self.filesystem(path)
        with self._remote(path, writing=False):
            return bool(fs.exists(self._fs_path(path)))

    def size(self, path: str) -> int:
        try:
            if scheme_of(check_path(path)) == "file":
                return os.stat(local_path(path)).st_size
            fs = self.filesystem(path)
            with self._remote(path, writing=False):
                return int(fs.size(self._fs_path(path)))
        except (FileNotFoundError, NotADirectoryError):
            raise NotFoundError(f"file not found: {path}") from None

    def local_file(self, path: str) -> str | None:
        """The operating-system path of ``path`` when it is on local disk (a ``file:`` path, or
        another scheme that fsspec serves from its local file system), else None."""
        s = scheme_of(path)
        if s == "file":
            return local_path(path)
        if s in S3_SCHEMES or s in GCS_SCHEMES or s in ADLS_SCHEMES or not _served_from_local_disk(s):
            return None  # without making its file system: hdfs:// would start loading a JVM
        try:
            fs = self.filesystem(path)
        except IcectlError:
            return None
        protocols = fs.protocol if isinstance(fs.protocol, tuple) else (fs.protocol,)
        return fs._strip_protocol(path) if "file" in protocols else None

    def is_dir(self, path: str) -> bool:
        fs = self.filesystem(path)
        with self._remote(path, writing=False):
            return bool(fs.isdir(self._fs_path(path)))

    def subdirectories(self, path: str) -> list[str]:
        """The names of the folders directly inside ``path``, sorted; none when ``path`` is not a
        folder (on an object store: the prefixes one level below it)."""
        try:
            if scheme_of(check_path(path)) == "file":
                with os.scandir(local_path(path)) as it:
                    return sorted(e.name for e in it if e.is_dir())
            fs = self.filesystem(path)
            with self._remote(path, writing=False):
                entries = fs.ls(self._fs_path(path), detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(e["name"].rstrip("/").rsplit("/", 1)[-1] for e in entries if e.get("type") == "directory")

    def makedirs(self, path: str) -> None:
        """Create the folder ``path`` and its parents (nothing if it exists)."""
        fs = self.filesystem(path)
        with self._remote(path, writing=True):
            fs.makedirs(self._fs_path(path), exist_ok=True)

    def rmdir(self, path: str) -> None:
        """Remove the empty folder ``path``."""
        fs = self.filesystem(path)
        with self._remote(path, writing=True):
            fs.rmdir(self._fs_path(path))

    def delete(self, path: str, *, guard: PathGuard) -> None:
        """Delete the file ``path`` of a table; RefusedError (nothing deleted) when ``guard``
        (:class:`icectl.io.safety.PathGuard`, made for the table location) refuses it."""
        why = guard.refusal(path)
        if why is not None:
            raise RefusedError(f"not deleting {path}: {why}")
        self._unlink(path)

    def delete_own_file(self, path: str) -> None:
        """Delete a file icectl wrote for itself and that no table owns (a lock file, a temporary
        file beside one it replaced): not through a table's :class:`~icectl.io.safety.PathGuard`,
        but never through a symbolic link either (the link is what goes)."""
        self._unlink(path)

    def _unlink(self, path: str) -> None:
        try:
            if scheme_of(check_path(path)) == "file":
                os.unlink(local_path(path))
            else:
                fs = self.filesystem(path)
                local = self.local_file(path)
                if local is not None and os.path.islink(local):
                    os.unlink(local)  # fsspec's rm takes a link to a folder for the folder and refuses
                else:
                    with self._remote(path, writing=True):
                        fs.rm(self._fs_path(path))
        except FileNotFoundError:
            raise NotFoundError(f"file not found: {path}") from None
        if scheme_of(path) == "file":
            # Hadoop's local file system writes a ".<name>.crc" checksum beside each file it
            # writes and deletes it with the file; do the same, or it is left hidden forever.
            p = local_path(path)
            crc = os.path.join(os.path.dirname(p), f".{os.path.basename(p)}.crc")
            try:
                if not os.path.islink(crc):
                    os.unlink(crc)
            except OSError:
                pass

    def delete_many(self, paths: Iterable[str], *, guard: PathGuard,
                    progress: Callable[[int], None] | None = None) -> dict[str, str]:
        """Delete every path in ``paths`` that ``guard`` (:class:`icectl.io.safety.PathGuard`, made
        for the table location) allows; return ``{path: why}`` for each one that was not deleted,
        a refused one as ``"skipped for safety: <reason>"``. A file that cannot be deleted is
        reported, never raised.

        Local files are unlinked one after another (a missing one is reported "already gone"); S3
        objects go in ``DeleteObjects`` batches of up to 1,000 keys, several in flight
        (``icectl.io.s3``; S3 reports a missing key as deleted); GCS and ADLS files in ``fs.rm``
        calls of many paths (:func:`icectl.io.cloud.batch_rm`); other schemes one request a file
        from a thread pool. ``progress`` is called with the number of files done."""
        by_fs: dict[str, list[str]] = {}
        for p in paths:
            by_fs.setdefault(_fs_key(p), []).append(p)
        failed: dict[str, str] = {}
        for kind, group in by_fs.items():
            if kind == "file":
                failed.update(self._delete_local(group, guard, progress))
            elif kind == "gs" or kind.startswith("adls:"):
                group, refused = guard.split(group)  # asked here: the paths go in batches
                failed.update({p: f"{SKIPPED_FOR_SAFETY}: {why}" for p, why in refused.items()})
                if refused and progress is not None:
                    progress(len(refused))
                if not group:
                    continue
                from icectl.io.s3 import int_property

                store, default_batch, rm_kwargs = (("gcs", GCS_DELETE_BATCH, {}) if kind == "gs"
                                                   else ("adls", ADLS_DELETE_BATCH, {"expand_path": False}))
                fs = self.filesystem(group[0])
                names: dict[str, str] = {}
                for p in group:
                    names.setdefault(self._fs_path(p), p)
                batch = int_property(self.properties, f"{store}.delete.batch-size", default_batch, hi=default_batch)
                in_flight = int_property(self.properties, f"{store}.delete.in-flight", CLOUD_DELETE_IN_FLIGHT, hi=64)
                for name, why in batch_rm(fs, list(names), batch_size=batch, in_flight=in_flight,
                                          progress=progress, **rm_kwargs).items():
                    failed[names.get(name, name)] = why
            elif kind == "s3":
                group, refused = guard.split(group)  # asked here: the keys go in batches
                failed.update({p: f"{SKIPPED_FOR_SAFETY}: {why}" for p, why in refused.items()})
                if refused and progress is not None:
                    progress(len(refused))
                if not group:
                    continue
                from icectl.io.s3 import DEFAULT_DELETE_BATCH, DEFAULT_DELETE_IN_FLIGHT, int_property, bulk_delete

                fs = self.filesystem(group[0])
                names: dict[str, str] = {}
                for p in group:
                    names.setdefault(self._fs_path(p), p)
                batch = int_property(self.properties, "s3.delete.batch-size", DEFAULT_DELETE_BATCH, hi=1000)
                in_flight = int_property(self.properties, "s3.delete.in-flight", DEFAULT_DELETE_IN_FLIGHT, hi=64)
                for key, why in bulk_delete(fs, list(names), batch_size=batch, in_flight=in_flight,
                                            progress=progress).items():
                    failed[names.get(key, key)] = why
            else:
                failed.update(self._delete_each(group, guard, progress))
        return failed

    def _delete_local(self, paths: list[str], guard: PathGuard,
                      progress: Callable[[int], None] | None) -> dict[str, str]:
        failed: dict[str, str] = {}
        for p in paths:
            try:
                self.delete(p, guard=guard)
            except RefusedError:
                failed[p] = f"{SKIPPED_FOR_SAFETY}: {guard.refusal(p)}"
            except NotFoundError:
                failed[p] = "already gone"
            except (IcectlError, OSError) as e:
                failed[p] = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
            if progress is not None:
                progress(1)
        return failed

    def _delete_each(self, paths: list[str], guard: PathGuard,
                     progress: Callable[[int], None] | None) -> dict[str, str]:
        from concurrent.futures import ThreadPoolExecutor

        def one(p: str) -> str | None:
            try:
                self.delete(p, guard=guard)
                return None
            except RefusedError:
                return f"{SKIPPED_FOR_SAFETY}: {guard.refusal(p)}"
            except NotFoundError:
                return "already gone"
            except (IcectlError, OSError) as e:
                return str(e)

        failed: dict[str, str] = {}
        with ThreadPoolExecutor(max_workers=8) as pool:
            for p, why in zip(paths, pool.map(one, paths)):
                if why is not None:
                    failed[p] = why
                if progress is not None:
                    progress(1)
        return failed

    def rename_no_replace(self, src: str, dst: str) -> bool:
        """Atomically rename ``src`` to ``dst`` unless ``dst`` exists; return whether it moved.

        On local disk this is ``link`` + ``unlink`` (atomic and refuses an existing target), the
        same guarantee HadoopCatalog gets from HDFS rename. Object stores have no atomic rename:
        the file-system catalog there is only as safe as its writers are few.
        """
        check_path(dst)
        if scheme_of(check_path(src)) == "file":
            s, d = local_path(src), local_path(dst)
            try:
                os.link(s, d)
            except FileExistsError:
                return False
            os.unlink(s)
            return True
        fs = self.filesystem(src)
        with self._remote(src, writing=True):
            if fs.exists(self._fs_path(dst)):
                return False
            fs.mv(self._fs_path(src), self._fs_path(dst))
        return True

    def copy(self, src: str, dst: str, *, guard: PathGuard) -> None:
        """Copy the file ``src`` to ``dst``, both of the table whose ``guard`` is given (a path
        it refuses is not read or written: RefusedError); never replaces an existing ``dst``
        (AlreadyExistsError). On an object store a server-side copy (the bytes never pass
        through here); on local disk the bytes are copied and fsynced before the copy counts."""
        for p in (src, dst):
            why = guard.refusal(p)
            if why is not None:
                raise RefusedError(f"not copying {src} to {dst}: {p}: {why}")
        if scheme_of(check_path(src)) == "file" and scheme_of(check_path(dst)) == "file":
            s, d = local_path(src), local_path(dst)
            tmp = f"{d}.{uuid.uuid4().hex}.tmp"
            try:
                os.makedirs(os.path.dirname(d) or ".", exist_ok=True)
                with builtins.open(s, "rb") as fi, builtins.open(tmp, "wb") as fo:
                    while chunk := fi.read(1 << 20):
                        fo.write(chunk)
                    fo.flush()
                    os.fsync(fo.fileno())
                os.link(tmp, d)
            except FileExistsError:
                raise AlreadyExistsError(f"refusing to overwrite existing file: {dst}") from None
            except FileNotFoundError:
                raise NotFoundError(f"file not found: {src}") from None
            except OSError as e:
                raise _storage_error(dst, e, writing=True) from None
            finally:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
            return
        fs = self.filesystem(src)
        with self._remote(dst, writing=True):
            if fs.exists(self._fs_path(dst)):
                raise AlreadyExistsError(f"refusing to overwrite existing file: {dst}")
            try:
                fs.copy(self._fs_path(src), self._fs_path(dst))
            except FileNotFoundError:
                raise NotFoundError(f"file not found: {src}") from None

    def move(self, src: str, dst: str, *, guard: PathGuard) -> None:
        """Move the local file ``src`` to ``dst`` within the table whose ``guard`` is given:
        atomic (``link`` then ``unlink``: after a crash the file is at ``src``, or at both names),
        never replacing ``dst`` (AlreadyExistsError), refused across devices (a rename cannot be
        atomic there). Object stores have no rename: :meth:`move_many` copies and deletes."""
        for p in (src, dst):
            why = guard.refusal(p)
            if why is not None:
                raise RefusedError(f"not moving {src} to {dst}: {p}: {why}")
        s, d = self.local_file(src), self.local_file(dst)
        if s is None or d is None:
            raise UnsupportedError(f"cannot move {src} to {dst}: not both on local disk")
        try:
            os.makedirs(os.path.dirname(d) or ".", exist_ok=True)
            os.link(s, d)
        except FileExistsError:
            raise AlreadyExistsError(f"refusing to overwrite existing file: {dst}") from None
        except FileNotFoundError:
            raise NotFoundError(f"file not found: {src}") from None
        except OSError as e:
            if e.errno == errno.EXDEV:
                raise RefusedError(f"not moving {src} to {dst}: they are on different devices") from None
            raise _storage_error(dst, e, writing=True) from None
        self.delete(src, guard=guard)

    def move_many(self, pairs: list[tuple[str, str]], *, guard: PathGuard) -> dict[str, str]:
        """Move each ``(src, dst)`` as :meth:`move` (local disk) or by :meth:`copy` of each and
        then one :meth:`delete_many` of the sources that were copied (object stores: batched as
        every delete is); return ``{src: why}`` for each one not moved (it stays at ``src``, or,
        when only its delete failed, is at both names)."""
        failed: dict[str, str] = {}
        copied: list[str] = []
        for src, dst in pairs:
            try:
                if self.local_file(src) is not None and self.local_file(dst) is not None:
                    self.move(src, dst, guard=guard)
                else:
                    self.copy(src, dst, guard=guard)
                    copied.append(src)
            except (IcectlError, OSError) as e:
                failed[src] = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        if copied:
            failed.update(self.delete_many(copied, guard=guard))
        return failed

    def list_files(self, prefix: str) -> Iterator[FileInfo]:
        """Every file under ``prefix`` (recursively), with size and modification time; local
        folders are walked as the files are consumed (a table of millions of files is never
        held in memory), object stores listed by fsspec.

        A symbolic link below ``prefix`` (to a file or to a folder) is listed as itself, with
        ``symlink`` set to its target, and never followed: a link to a folder elsewhere does not
        bring that folder's files into the listing (``prefix`` itself may be a link)."""
        if scheme_of(prefix) == "file":
            yield from _walk_local(prefix)
            return
        fs = self.filesystem(prefix)
        root = self._fs_path(prefix)
        scheme = scheme_of(prefix)
        if scheme in S3_SCHEMES or scheme in GCS_SCHEMES or scheme in ADLS_SCHEMES:
            from icectl.io.s3 import list_objects  # prefix-parallel listing of any async fsspec store

            with self._remote(prefix, writing=False):
                found: Iterable[tuple[str, dict[str, Any]]] = list_objects(fs, root)
        else:
            try:
                found = fs.find(root, detail=True).items()
            except FileNotFoundError:
                return
        for p, info in found:
            if info.get("islink"):  # fsspec's local file system: a link, which it does not follow
                yield FileInfo(self._qualify(scheme, prefix, p), int(info.get("size") or 0), _mtime_ms(info),
                               symlink=str(info.get("destination") or "?"))
                continue
            if info.get("type") == "directory":
                continue
            yield FileInfo(self._qualify(scheme, prefix, p), int(info.get("size") or 0), _mtime_ms(info))

    def list_paths(self, prefix: str, *, batch: int = 10_000) -> Iterator[tuple[list[str], list[FileInfo] | None]]:
        """:meth:`list_files`, in its order, as batches of paths: for a local folder the paths
        alone (a folder's files at a time; nothing asked of the file system per file: ask
        :func:`local_file_info` for the few that need it) with None, for an object store up to
        ``batch`` paths with the FileInfos its listing gave."""
        if scheme_of(prefix) == "file":
            for paths in _walk_local_paths(prefix):
                yield paths, None
            return
        infos: list[FileInfo] = []
        for f in self.list_files(prefix):
            infos.append(f)
            if len(infos) >= batch:
                yield [i.path for i in infos], infos
                infos = []
        if infos:
            yield [i.path for i in infos], infos

    def _qualify(self, scheme: str, prefix: str, fs_path: str) -> str:
        if scheme == "file":
            return fs_path if not prefix.startswith("file:") else "file:" + fs_path
        if scheme in ADLS_SCHEMES:  # container/path back under the location's container@account host
            root = self._fs_path(prefix).rstrip("/")
            if fs_path == root or fs_path.startswith(root + "/"):
                return prefix.rstrip("/") + fs_path[len(root):]
        original = prefix.split("://", 1)[0]
        return f"{original}://{fs_path}"


@contextlib.contextmanager
def remote_errors(path: str, *, writing: bool, endpoint: str | None = None) -> Iterator[None]:
    """Errors of an object store's client (botocore, aiohttp ...) as icectl errors naming the file;
    an OSError passes on (the callers map it with :func:`_storage_error`), as does an icectl error.
    An endpoint that cannot be reached is said so, with the endpoint."""
    try:
        yield
    except IcectlError:
        raise
    except Exception as e:
        if type(e).__name__ in _CLOUD_UNREACHABLE or type(e).__name__.startswith("ClientConnector"):  # gcsfs's aiohttp, adlfs's azure-core
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise StorageError(f"cannot reach the object store {'writing' if writing else 'reading'} {path} ({first})",
                               hint="check gcs.service.host, or the ADLS account, adls.account-host or "
                                    "adls.connection-string, and that the object store is up") from None
        if isinstance(e, OSError):
            raise
        unreachable = _unreachable_endpoint(e)
        if unreachable is not None:
            raise StorageError(f"cannot reach the S3 endpoint {endpoint or unreachable} ({type(e).__name__} "
                               f"{'writing' if writing else 'reading'} {path})",
                               hint="check s3.endpoint (and s3.region) and that the object store is up") from None
        first = str(e).splitlines()[0] if str(e) else ""
        raise StorageError(f"cannot {'write' if writing else 'read'} {path}: {type(e).__name__}: {first}") from None


# Connection failures of gcsfs (aiohttp) and adlfs (azure-core) that their retries gave up on.
_CLOUD_UNREACHABLE = frozenset({"ClientConnectorError", "ServerDisconnectedError", "ServerTimeoutError",
                                "ConnectionTimeoutError", "ServiceRequestError"})


def _unreachable_endpoint(e: BaseException) -> str | None:
    """The endpoint of a connection error from botocore (or what it wraps), else None."""
    seen = 0
    while e is not None and seen < 5:
        if type(e).__name__ in ("EndpointConnectionError", "ConnectTimeoutError", "ConnectionClosedError"):
            url = str(getattr(e, "kwargs", {}).get("endpoint_url") or "")
            return url.split("/", 3)[:3] and "/".join(url.split("/", 3)[:3]) or "(unknown endpoint)"
        e = e.__cause__ or e.__context__  # type: ignore[assignment]
        seen += 1
    return None


def _storage_error(path: str, e: OSError, *, writing: bool) -> IcectlError:
    """The icectl error for an ``OSError`` reading or writing ``path``."""
    if writing:
        what = "a parent is not a directory" if isinstance(e, (NotADirectoryError, FileExistsError)) \
            else (e.strerror or str(e))
        return StorageError(f"cannot write {path}: {what}")
    if isinstance(e, FileNotFoundError):
        return NotFoundError(f"file not found: {path}")
    if isinstance(e, IsADirectoryError):
        return NotFoundError(f"is a directory, not a file: {path}")
    if isinstance(e, NotADirectoryError):
        return NotFoundError(f"file not found (a parent is not a directory): {path}")
    if isinstance(e, PermissionError):
        return StorageError(f"permission denied: {path}")
    return StorageError(f"cannot read {path}: {e.strerror or e}")


def _folder_entries(d: str) -> list[tuple[bool, Any]]:
    """(is a folder, entry) of a local folder's entries in the order of their full paths ("b/..."
    after "b.txt", as fsspec's ``find`` sorts them); a link is never a folder here (never
    followed: a linked folder would bring files from outside into a listing, and remove-orphans
    would delete them). Empty when the folder is gone."""
    try:
        with os.scandir(d) as it:
            entries = []
            for e in it:
                try:
                    is_dir = e.is_dir(follow_symlinks=False)
                except OSError:
                    continue
                entries.append((e.name + "/" if is_dir else e.name, is_dir, e))
    except (FileNotFoundError, NotADirectoryError):
        return []
    entries.sort(key=lambda x: x[0])
    return [(is_dir, e) for _, is_dir, e in entries]


def _local_root(prefix: str) -> str:
    return posixpath.normpath(os.path.abspath(local_path(prefix)))


def local_file_info(path: str) -> FileInfo | None:
    """A listed local file's size, time and link target (``lstat``: a link is never followed);
    None when it is gone. ``path`` as :meth:`FileIO.list_paths` gave it (``file:`` kept)."""
    try:
        st = os.lstat(local_path(path))
        target = os.readlink(local_path(path)) if stat.S_ISLNK(st.st_mode) else None
    except FileNotFoundError:
        return None
    return FileInfo(path, st.st_size, int(st.st_mtime * 1000), symlink=target)


def _walk_local_paths(prefix: str) -> Iterator[list[str]]:
    """:func:`_walk_local`'s paths, in its order, a folder's files at a time, without asking
    the file system anything per file (no ``stat``)."""
    root = _local_root(prefix)
    qualify = "file:" if prefix.startswith("file:") else ""
    if os.path.isfile(root):
        yield [qualify + root]
        return

    def walk(d: str) -> Iterator[list[str]]:
        files: list[str] = []
        for is_dir, e in _folder_entries(d):
            if is_dir:
                if files:
                    yield files
                    files = []
                yield from walk(e.path)
            else:
                files.append(qualify + e.path)
        if files:
            yield files

    yield from walk(root)


def _walk_local(prefix: str) -> Iterator[FileInfo]:
    """The files under a local folder in the order of their full paths (as fsspec's ``find``
    sorts them), walked as they are consumed; paths as fsspec's local file system gives them
    (absolute, normalised), ``file:`` kept. A symbolic link below the folder is yielded as itself
    (``symlink`` set, its own size and time) and never followed, as fsspec's ``find`` does not
    follow one either; ``prefix`` itself may be a link to the folder."""
    root = _local_root(prefix)
    qualify = "file:" if prefix.startswith("file:") else ""
    if os.path.isfile(root):
        st = os.stat(root)
        yield FileInfo(qualify + root, st.st_size, int(st.st_mtime * 1000))
        return

    def walk(d: str) -> Iterator[FileInfo]:
        for is_dir, e in _folder_entries(d):
            if is_dir:
                yield from walk(e.path)
                continue
            try:
                st = e.stat(follow_symlinks=False)
                target = os.readlink(e.path) if e.is_symlink() else None
            except FileNotFoundError:  # removed while listing
                continue
            yield FileInfo(qualify + e.path, st.st_size, int(st.st_mtime * 1000), symlink=target)

    yield from walk(root)


def _fs_key(path: str) -> str:
    """Which file system serves ``path``: its scheme, one for the S3 and GCS schemes, and one
    for each Azure storage account (``adls:<host>``)."""
    s = scheme_of(path)
    if s in S3_SCHEMES:
        return "s3"
    if s in GCS_SCHEMES:
        return "gs"
    if s in ADLS_SCHEMES:
        return "adls:" + adls_host(path)
    return s


def _served_from_local_disk(scheme: str) -> bool:
    """Whether fsspec serves ``scheme`` from its local file system (``local://``), known from its
    registered class alone."""
    import fsspec
    from fsspec.implementations.local import LocalFileSystem

    try:
        return issubclass(fsspec.get_filesystem_class(scheme), LocalFileSystem)
    except (ImportError, ValueError):
        return False


def _mtime_ms(info: dict[str, Any]) -> int | None:
    m = info.get("mtime") or info.get("LastModified") or info.get("last_modified")
    if m is None:
        return None
    if hasattr(m, "timestamp"):
        return int(m.timestamp() * 1000)
    return int(float(m) * 1000)


def join(location: str, *parts: str) -> str:
    out = location.rstrip("/")
    for p in parts:
        out = out + "/" + p.strip("/")
    return out


# -- v4 relative paths -------------------------------------------------------------------------

def resolve_path(location: str | None, path: str, format_version: int) -> str:
    """The absolute path of a stored path (v4 walk-through: "Relative paths").

    A path with a URI scheme (or an absolute local path) is used as is. In v4, any other path is
    relative to the table location; one that would escape the location is an error.
    """
    if format_version < 4 or has_scheme(path) or path.startswith("/"):
        return path
    if not location:
        raise InvalidMetadataError(f"relative path {path!r} but the table has no location")
    norm = posixpath.normpath(path)
    if norm == ".." or norm.startswith("../") or norm == "." or posixpath.isabs(norm):
        raise InvalidMetadataError(f"relative path {path!r} escapes the table location {location}")
    return location.rstrip("/") + "/" + norm


def relativize_path(location: str | None, path: str, format_version: int) -> str:
    """How a v4 writer stores a path: relative when under the table location, else absolute."""
    if format_version < 4 or not location:
        return path
    base = location.rstrip("/") + "/"
    if path.startswith(base):
        rel = path[len(base):]
        # A relative path whose first segment looks like a scheme (part:1/x) would read back as
        # absolute: store such paths absolute.
        return path if has_scheme(rel) else rel
    return path
