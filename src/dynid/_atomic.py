"""Atomic file writes: a temporary file in the target folder, then ``os.replace``.

An interrupted or failed run never leaves a half-written file under the final name.
:func:`commit_files` writes a whole set of outputs: all temporaries first, then all renames;
:class:`Staging` is the same in steps (files written as they become ready, from any thread, then renamed
together).
"""

from __future__ import annotations

import errno
import mmap
import os
import threading
import weakref
from pathlib import Path
from typing import Mapping, Sequence

__all__ = ["atomic_write_text", "atomic_write_bytes", "commit_files", "Staging", "create_temporary"]


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    commit_files({Path(path): data})


def atomic_write_text(path: str | os.PathLike, text: str, newline: str = "\n") -> None:
    commit_files({Path(path): text.replace("\n", newline).encode("utf-8")})


def commit_files(files: Mapping[Path, bytes]) -> None:
    """Write every file to a temporary name, then rename them all; on error remove the temporaries."""
    with Staging() as staging:
        for path, data in files.items():
            staging.write(path, data)
        staging.commit()


PREALLOCATE = 1 << 22
"""Files of at least this many bytes get their blocks allocated before they are written (:func:`_preallocate`)."""


def _preallocate(fd: int, size: int) -> bool:
    """Allocate ``size`` bytes of the file ``fd`` at once (False: the file system cannot). A full disk then fails
    here, before the write, and on ext4 the file is one contiguous range: replacing it later (the next run's
    rename) frees it in ~3 ms, where a 40 MB file allocated block by block on writeback took ~25 ms to free
    (measured with the ``discard`` mount option, on the rename that replaced it)."""
    if not hasattr(os, "posix_fallocate"):     # (macOS, Windows)
        return False
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as err:
        if err.errno not in (errno.EOPNOTSUPP, errno.ENOSYS, errno.EINVAL):
            raise
        return False
    return True


def create_temporary(path: Path) -> tuple[int, str]:
    """A new file ``.<name>.<random>.tmp`` beside ``path``, opened for reading and writing (mode 0600, as
    :func:`tempfile.mkstemp` creates it; that module's import costs more than this)."""
    for _ in range(100):
        tmp = str(path.parent / f".{path.name}.{os.urandom(6).hex()}.tmp")
        try:
            return os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


class Staging:
    """A set of output files written to temporary names one by one, then renamed together.

    >>> with Staging() as staging:          # doctest: +SKIP
    ...     staging.write(out / "a.txt", b"a")
    ...     staging.write(out / "b.txt", b"b")
    ...     staging.commit()                # both renamed; leaving the block without commit removes them

    :meth:`write` may be called from several threads (a large file written on one while the others are
    rendered). Files are renamed in the order given to :meth:`commit`, else in the order written. What is not
    committed is removed by :meth:`discard` — also when the staging is collected or the process exits without
    it — with the folders :meth:`write` created for it (when empty).
    """

    def __init__(self) -> None:
        self._temps: dict[Path, str] = {}
        self._made: list[Path] = []          # folders created for the temporaries, outermost first
        self._lock = threading.Lock()
        mask = os.umask(0)  # temporaries are created 0600; outputs get the usual mode (0666 & ~umask)
        os.umask(mask)
        self._mode = 0o666 & ~mask
        self._finalizer = weakref.finalize(self, _remove, self._temps, self._made, self._lock)

    def write(self, path: str | os.PathLike, data) -> None:
        """Write ``data`` (bytes-like) to a temporary file beside ``path`` (creating its folder)."""
        fd, tmp = self._temporary(Path(path))
        with os.fdopen(fd, "wb") as fh:
            size = memoryview(data).nbytes
            if size >= PREALLOCATE:
                _preallocate(fh.fileno(), size)
            fh.write(data)
        os.chmod(tmp, self._mode)

    def mapped(self, path: str | os.PathLike, size: int) -> mmap.mmap | None:
        """A temporary file beside ``path`` of ``size`` bytes, its blocks allocated, mapped for writing (to be filled
        in place — by a formatter, say — and closed by the caller before :meth:`commit`). None where the file system
        cannot preallocate: a mapped file without allocated blocks would end the process (SIGBUS), not raise, when
        the disk fills up; :meth:`write` the content instead there."""
        path = Path(path)
        fd, tmp = self._temporary(path)
        try:
            if _preallocate(fd, size):
                os.chmod(tmp, self._mode)
                return mmap.mmap(fd, size)
        finally:
            os.close(fd)
        with self._lock:
            del self._temps[path]
        os.unlink(tmp)
        return None

    def holds(self, path: str | os.PathLike) -> bool:
        """Whether ``path`` is written and not yet committed."""
        with self._lock:
            return Path(path) in self._temps

    def _temporary(self, path: Path) -> tuple[int, str]:
        """A new temporary file for ``path`` (its folder created, and remembered, where missing), registered."""
        if not path.parent.is_dir():
            missing = [d for d in (path.parent, *path.parent.parents) if not d.exists()]
            path.parent.mkdir(parents=True, exist_ok=True)
            with self._lock:
                self._made.extend(reversed(missing))
        fd, tmp = create_temporary(path)
        with self._lock:
            self._temps[path] = tmp
        return fd, tmp

    def commit(self, order: Sequence[str | os.PathLike] | None = None) -> None:
        """Rename every written file to its name (``order``: these paths first, in this order)."""
        with self._lock:
            first = [Path(p) for p in (order or ()) if Path(p) in self._temps]
            for path in [*first, *(p for p in self._temps if p not in first)]:
                os.replace(self._temps[path], path)
                del self._temps[path]
            self._made.clear()               # (they hold the outputs now)

    def discard(self) -> None:
        """Remove the temporaries not renamed (and the folders made for them, where empty)."""
        _remove(self._temps, self._made, self._lock)

    def __enter__(self) -> "Staging":
        return self

    def __exit__(self, *exc) -> None:
        self.discard()


def _remove(temps: dict[Path, str], made: list[Path], lock: threading.Lock) -> None:
    """:meth:`Staging.discard` (also its finalizer: it must not hold the staging itself)."""
    with lock:
        for tmp in temps.values():
            try:
                os.unlink(tmp)
            except OSError:
                pass
        temps.clear()
        for folder in reversed(made):        # innermost first; a folder something else wrote into stays
            try:
                os.rmdir(folder)
            except OSError:
                pass
        made.clear()
