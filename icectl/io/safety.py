"""May this path be deleted? One answer for every delete of a table's files.

icectl promises that nothing outside the table location is ever deleted. A :class:`PathGuard`
is made for one table location and answers, for any path, either "yes" or the reason it is
refused; :meth:`icectl.io.FileIO.delete` and :meth:`~icectl.io.FileIO.delete_many` take one and
delete nothing it refuses (``delete_many`` reports a refused path with its reason, never
silently). Files that icectl itself just wrote outside any table's life (its lock files, a
``.tmp`` beside a file it is replacing) go through :meth:`~icectl.io.FileIO.delete_own_file`.

On local disk (``file:`` paths, or any scheme served by fsspec's LocalFileSystem), a path may be
deleted when:

- every symlink among its parent folders resolved (``os.path.realpath`` of the parent), the
  path's real location is inside the real location of the table location (itself resolved, so a
  table location that is a symlink to a real folder, or a warehouse under a symlinked parent,
  still owns its files);
- the path is not itself a symbolic link, unless the guard was made with ``allow_symlinks``; then
  it is unlinked as a link (``unlink`` never follows a link, the target stays);
- the path is not a folder;
- no folder between the table location and the path is a mount point: a different ``st_dev``
  (what ``find -xdev`` checks), or a mount point listed in ``/proc/self/mountinfo`` (which also
  catches a bind mount of a folder of the same file system, whose ``st_dev`` does not differ).

What the guard covers and why the rest cannot reach outside:

- Symbolic links: covered, above: a link to a folder or a file, inside or outside (the link
  itself is refused unless allowed; what lies beyond a linked folder is judged by where it really
  is), and a link loop (its parents cannot be resolved: refused).
- Bind mounts and other mounts inside the location: covered by the mount-point rule.
- Hard links: nothing to check. Unlinking a name inside the location removes that name only;
  the data stays reachable through any other name it has outside, so no file outside is lost.
- Case-insensitive or Unicode-normalising file systems: real paths are compared exactly, as
  text, never case-folded or Unicode-normalised. On such a file system two spellings name the
  same entry, so a path spelled inside the location *is* the entry inside it; a different
  spelling of an inside path is refused (safe), never an outside file accepted. Folding the
  comparison would be unsafe where the file system does not fold (ext4 keeps ``café`` in NFC and
  NFD as two different folders).

On object stores (``s3://`` and the other remote schemes) there are no links or mounts: a path
may be deleted when its normalised form (``s3a://`` and ``s3n://`` are ``s3://``) lies under the
normalised table location, and no segment after the location is ``.`` or ``..`` (a store may
take them literally, another file system may resolve them).
"""
from __future__ import annotations

import os
import stat
from typing import Callable, Iterable

from icectl.io import FileIO, local_path, normalize_location, scheme_of


def _default_os_path(path: str) -> str | None:
    return local_path(path) if scheme_of(path) == "file" else None


def _mount_points() -> list[str]:
    """The mount points of this process (Linux' ``/proc/self/mountinfo``; none elsewhere)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        parts = line.split(" ")
        if len(parts) > 4:
            # Octal escapes for space, tab, newline and backslash (proc_pid_mountinfo(5)).
            out.append(parts[4].encode("latin-1", "surrogateescape").decode("unicode_escape", "surrogateescape")
                       if "\\" in parts[4] else parts[4])
    return out


class PathGuard:
    """Decides which paths may be deleted for the table at ``location`` (see the module text).

    ``os_path`` maps a path to its operating-system path when it is on local disk (else None);
    :meth:`icectl.io.FileIO.guard` passes its own, which knows the file systems it uses."""

    def __init__(self, location: str | None, *, allow_symlinks: bool = False,
                 os_path: Callable[[str], str | None] | None = None):
        self.location = location  # None: a table without a location, which owns no file to delete
        self.allow_symlinks = allow_symlinks
        self._os_path = os_path or _default_os_path
        root = self._os_path(location) if location else None
        self.local = root is not None  # on local disk: links and mounts are checked
        self._parents: dict[str, str | None] = {}  # a parent folder as written -> why refused (None: fine)
        self._root_refusal: str | None = None  # a location no path can be checked against
        if root is not None:
            try:
                self._root = os.path.realpath(os.path.abspath(root))
                self._root_dev: int | None = os.stat(self._root).st_dev
            except OSError:
                self._root_dev = None
            except ValueError as e:  # a NUL or a lone surrogate: no operating-system path
                self._root, self._root_dev = root, None
                self._root_refusal = f"the table location {location!r} is not a valid local path ({e})"
            self._mounts = [m for m in _mount_points() if m.startswith(self._root.rstrip("/") + "/")]
        else:
            self._remote_root = normalize_location(location) + "/" if location else None

    def refusal(self, path: str) -> str | None:
        """Why ``path`` may not be deleted, or None when it may."""
        if not self.local:
            return self._remote_refusal(path)
        if self._root_refusal is not None:
            return self._root_refusal
        p = self._os_path(path)
        if p is None:
            return f"not on the local disk of the table location {self.location}"
        p = os.path.abspath(p)
        parent, name = os.path.split(p)
        if name in ("", ".", ".."):
            return "not a file name"
        why = self._parents.get(parent, "?")
        if why == "?":
            why = self._parent_refusal(parent)
            self._parents[parent] = why
        if why is not None:
            return why
        try:
            st = os.lstat(p)
        except FileNotFoundError:
            return None  # nothing to delete; the delete reports it gone
        except OSError as e:
            return f"cannot inspect it: {e.strerror or e}"
        except ValueError as e:  # a NUL or a lone surrogate in the name
            return f"not a valid local path ({e})"
        if stat.S_ISLNK(st.st_mode):
            if self.allow_symlinks:
                return None
            try:
                target = os.readlink(p)
            except OSError:
                target = "?"
            return f"a symbolic link (to {target}); only the link would be removed, and only with --remove-symlinks"
        if stat.S_ISDIR(st.st_mode):
            return "a folder, not a file"
        return None

    def _parent_refusal(self, parent: str) -> str | None:
        try:
            real = os.path.realpath(parent, strict=True)
        except FileNotFoundError:  # a folder not made yet (a target being written): resolve what exists
            real = os.path.realpath(parent)
        except OSError as e:  # a link loop (ELOOP), or a folder that cannot be read
            return f"its parent folders cannot be resolved: {e.strerror or e}"
        except ValueError as e:  # a NUL or a lone surrogate in the name
            return f"not a valid local path ({e})"
        root = self._root
        if not (real == root or real.startswith(root.rstrip("/") + "/")):
            return f"its real location {real} is outside the table location {root}"
        for m in self._mounts:
            if real == m or real.startswith(m + "/"):
                return f"under the mount point {m} inside the table location"
        if self._root_dev is not None:
            d = real
            while d != root and len(d) > len(root):
                try:
                    dev = os.stat(d).st_dev
                except OSError:
                    break  # a folder that does not exist holds nothing to delete
                if dev != self._root_dev:
                    return f"{d} is on another device than the table location"
                d = os.path.dirname(d)
        return None

    def _remote_refusal(self, path: str) -> str | None:
        root = self._remote_root
        if root is None:
            return "the table has no location"
        norm = normalize_location(path)
        if not norm.startswith(root):
            return f"outside the table location {self.location}"
        if any(seg in (".", "..") for seg in norm[len(root):].split("/")):
            return "a '.' or '..' segment after the table location"
        return None

    def split(self, paths: Iterable[str]) -> tuple[list[str], dict[str, str]]:
        """The paths that may be deleted, and ``{path: why}`` for those refused."""
        ok: list[str] = []
        refused: dict[str, str] = {}
        for p in paths:
            why = self.refusal(p)
            if why is None:
                ok.append(p)
            else:
                refused[p] = why
        return ok, refused


def table_guard(io: FileIO, location: str | None, *, allow_symlinks: bool = False) -> PathGuard:
    """The guard for deleting files of the table at ``location`` through ``io``."""
    return PathGuard(location, allow_symlinks=allow_symlinks, os_path=io.local_file)


__all__ = ["PathGuard", "table_guard"]
