"""Safe output writes: every new file is staged in a hidden folder beside its final name, then all are put in
place together.

An interrupted or failed run never leaves a half-written file under a final name, and never a mix of an earlier
run's files with a new run's: :class:`Staging` writes each output into ``<folder>/.dynid-<random>.tmp/new/``
(same file system as the folder, so the final step is renames), and :meth:`Staging.commit` puts them in place
with the earlier run's outputs it was told to :meth:`~Staging.remove` — SIGINT held back for those few renames,
and every step undone if one fails. Files of the folder that are not named are never touched. An ``OSError``
(a full disk, a read-only folder) ends as :class:`~dynid.errors.OutputError` naming the output it was writing.
:func:`commit_files` writes a whole set of outputs in one call.
"""

from __future__ import annotations

import contextlib
import errno
import io
import mmap
import os
import shutil
import signal
import threading
import weakref
from collections import deque
from pathlib import Path
from typing import Iterator, Mapping, Sequence

from .errors import OutputError

__all__ = ["atomic_write_text", "atomic_write_bytes", "put", "commit_files", "Staging", "create_temporary",
           "output_error", "interrupts_deferred", "commits_so_far", "committed_since"]


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    commit_files({Path(path): data})


def atomic_write_text(path: str | os.PathLike, text: str, newline: str = "\n") -> None:
    commit_files({Path(path): text.replace("\n", newline).encode("utf-8")})


def put(path: str | os.PathLike, data, staging: "Staging | None" = None) -> None:
    """``data`` (bytes-like) written to ``path`` atomically — or staged in ``staging``, for its owner to commit with
    the other outputs."""
    if staging is None:
        commit_files({Path(path): data})
    else:
        staging.write(path, data)


def commit_files(files: Mapping[Path, bytes], *, remove: Sequence[str | os.PathLike] = ()) -> None:
    """Stage every file, then put them all in place (and delete ``remove``, where they exist); on error nothing
    changes."""
    with Staging() as staging:
        for path, data in files.items():
            staging.write(path, data)
        staging.remove(*remove)
        staging.commit()


PREALLOCATE = 1 << 22
"""Files of at least this many bytes get their blocks allocated before they are written (:func:`_preallocate`)."""

STAGE_PREFIX = ".dynid-"
STAGE_SUFFIX = ".tmp"
"""A staging folder is ``<folder>/.dynid-[<tag>-]<random>.tmp`` (new files in ``new/``, replaced ones in ``old/``)."""


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


# ------------------------------------------------------------------------------------------ errors, interrupts

_FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC), errno.EFBIG)
_DENIED = (errno.EACCES, errno.EPERM, errno.EROFS)


def output_error(path: str | os.PathLike, err: OSError) -> OutputError:
    """``err``, met while writing the output ``path``, as one :class:`OutputError` naming it."""
    if isinstance(err, OutputError):
        return err
    reason = err.strerror or str(err) or type(err).__name__
    if err.errno in _FULL:
        hint = "free space on the disk that holds it (or raise the quota), or write the outputs to another folder"
    elif err.errno in _DENIED:
        hint = "make that folder writable, or write the outputs to another folder"
    else:
        hint = "check that disk, or write the outputs to another folder"
    return OutputError(f"{path}: {reason}", hint=hint, path=path, errno=err.errno)


@contextlib.contextmanager
def interrupts_deferred() -> Iterator[None]:
    """SIGINT (Ctrl-C) held back while the block runs, then delivered as usual (in the main thread; elsewhere,
    where no signal arrives, nothing is changed)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous in (signal.SIG_IGN, None):
        yield
        return
    caught: list = []
    signal.signal(signal.SIGINT, lambda signum, frame: caught.append(frame))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if caught:
            if callable(previous):
                previous(signal.SIGINT, caught[0])          # (Python's: raises KeyboardInterrupt)
            else:
                os.kill(os.getpid(), signal.SIGINT)


_COMMITTED: deque = deque(maxlen=1000)
_COUNT = [0]


def commits_so_far() -> int:
    """How many outputs this process has put in place (a mark for :func:`committed_since`)."""
    return _COUNT[0]


def committed_since(mark: int) -> list[Path]:
    """The outputs put in place since :func:`commits_so_far` returned ``mark`` (the last thousand at most)."""
    return list(_COMMITTED)[-min(_COUNT[0] - mark, len(_COMMITTED)):] if _COUNT[0] > mark else []


# ------------------------------------------------------------------------------------------ staging

class Staging:
    """A set of output files written under temporary names one by one, then put in place together.

    >>> with Staging() as staging:          # doctest: +SKIP
    ...     staging.write(out / "a.txt", b"a")
    ...     with staging.open(out / "b.bin") as fh:     # written progressively
    ...         fh.write(b"b")
    ...     staging.remove(out / "old.txt")             # an earlier run's output this run does not write
    ...     staging.commit()                            # all in place; leaving the block without commit removes them

    The new files of a folder are staged in one hidden folder inside it, under their final names (:meth:`staged`:
    a reader such as the report can read the new run before it is committed).
    :meth:`write`, :meth:`mapped` and :meth:`open` may be called from several threads. :meth:`commit` puts the
    files in place in the order given (else in the order written), then removes what :meth:`remove` named; SIGINT
    waits until it is done, and an error undoes every step (the replaced files come back). What is not committed
    is removed by :meth:`discard` — also when the staging is collected or the process exits without it — with the
    folders it created (when empty). An ``OSError`` is raised as :class:`~dynid.errors.OutputError` naming the
    output.

    Parameters
    ----------
    tag : str
        Put into the staging folders' names (``.dynid-<tag>-<random>.tmp``), so that a caller can find what a
        killed process left behind.
    """

    def __init__(self, tag: str = "") -> None:
        self._tag = f"{tag}-" if tag else ""
        self._stages: dict[Path, Path] = {}        # output folder -> its staging folder
        self._temps: dict[Path, Path] = {}         # output (absolute) -> its staged file
        self._removals: list[Path] = []
        self._open: list[io.BufferedWriter] = []
        self._made: list[Path] = []                # folders created for the outputs, outermost first
        self._lock = threading.Lock()
        mask = os.umask(0)  # staged files are created 0600; outputs get the usual mode (0666 & ~umask)
        os.umask(mask)
        self._mode = 0o666 & ~mask
        self._finalizer = weakref.finalize(self, _remove, self._stages, self._temps, self._made, self._open,
                                           self._lock)

    # -------------------------------------------------------------------------------------- writing
    def write(self, path: str | os.PathLike, data) -> None:
        """Stage ``data`` (bytes-like) as the new content of ``path`` (its folder is created)."""
        fd, tmp, final = self._staged_file(path)
        try:
            with os.fdopen(fd, "wb") as fh:
                size = memoryview(data).nbytes
                if size >= PREALLOCATE:
                    _preallocate(fh.fileno(), size)
                fh.write(data)
            os.chmod(tmp, self._mode)
        except OSError as err:
            raise output_error(final, err) from None

    def mapped(self, path: str | os.PathLike, size: int) -> mmap.mmap | None:
        """A staged file for ``path`` of ``size`` bytes, its blocks allocated, mapped for writing (to be filled
        in place — by a formatter, say — and closed by the caller before :meth:`commit`). None where the file system
        cannot preallocate: a mapped file without allocated blocks would end the process (SIGBUS), not raise, when
        the disk fills up; :meth:`write` the content instead there."""
        fd, tmp, final = self._staged_file(path)
        try:
            try:
                if _preallocate(fd, size):
                    os.chmod(tmp, self._mode)
                    return mmap.mmap(fd, size)
            finally:
                os.close(fd)
        except OSError as err:
            raise output_error(final, err) from None
        with self._lock:
            del self._temps[final]
        os.unlink(tmp)
        return None

    def open(self, path: str | os.PathLike) -> "_StagedFile":
        """A binary file object staged for ``path``, to be written progressively (a long REC written block by
        block, say); close it before :meth:`commit` (which closes one still open). Its write errors name ``path``."""
        fd, tmp, final = self._staged_file(path)
        try:
            os.chmod(tmp, self._mode)
            fh = os.fdopen(fd, "wb")
        except OSError as err:
            os.close(fd)
            raise output_error(final, err) from None
        with self._lock:
            self._open.append(fh)
        return _StagedFile(fh, final)

    def remove(self, *paths: str | os.PathLike) -> None:
        """Delete ``paths`` (outputs of an earlier run that this one does not write) at :meth:`commit`, where they
        exist and are not written by this staging."""
        with self._lock:
            self._removals.extend(_absolute(p) for p in paths)

    # -------------------------------------------------------------------------------------- reading
    def holds(self, path: str | os.PathLike) -> bool:
        """Whether ``path`` is staged and not yet committed."""
        with self._lock:
            return _absolute(path) in self._temps

    def staged(self, path: str | os.PathLike) -> Path:
        """Where the staged content of ``path`` is (KeyError: not staged)."""
        with self._lock:
            return self._temps[_absolute(path)]

    # -------------------------------------------------------------------------------------- internals
    def _stage_of(self, folder: Path) -> Path:
        """The staging folder of ``folder`` (it and the folders above it created, and remembered, where missing)."""
        with interrupts_deferred(), self._lock:     # (made and registered as one step: nothing unregistered left)
            stage = self._stages.get(folder)
            if stage is not None:
                return stage
            try:
                if not folder.is_dir():
                    missing = [d for d in (folder, *folder.parents) if not d.exists()]
                    folder.mkdir(parents=True, exist_ok=True)
                    self._made.extend(reversed(missing))
                stage = _new_stage(folder, self._tag)
            except OSError as err:
                raise output_error(err.filename or folder, err) from None
            self._stages[folder] = stage
            return stage

    def _staged_file(self, path: str | os.PathLike) -> tuple[int, Path, Path]:
        """``(fd, staged file, output)``: a new staged file for ``path``, registered (an earlier one replaced)."""
        final = _absolute(path)
        tmp = self._stage_of(final.parent) / "new" / final.name
        try:
            if tmp.exists():
                tmp.unlink()
            fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o600)
        except OSError as err:
            raise output_error(final, err) from None
        with self._lock:
            self._temps[final] = tmp
        return fd, tmp, final

    # -------------------------------------------------------------------------------------- commit
    def commit(self, order: Sequence[str | os.PathLike] | None = None) -> None:
        """Put every staged file in place (``order``: these paths first, in this order), then remove what
        :meth:`remove` named; SIGINT is held back until done. On an error every step is undone (the replaced and
        removed files come back) and :class:`~dynid.errors.OutputError` names the output."""
        with interrupts_deferred(), self._lock:
            _close_all(self._open)
            first = [p for p in (_absolute(p) for p in order or ()) if p in self._temps]
            moves = [*dict.fromkeys(first), *(p for p in self._temps if p not in first)]
            gone = [p for p in dict.fromkeys(self._removals)
                    if p not in self._temps and os.path.lexists(p) and not _is_folder(p)]
            done: list[tuple[Path, Path | None]] = []
            try:
                for final in moves:
                    backup = _set_aside(final, self._stages[final.parent], keep=True)
                    os.replace(self._temps[final], final)
                    done.append((final, backup))
                for final in gone:
                    done.append((final, _set_aside(final, self._stage_of_locked(final.parent), keep=False)))
            except OSError as err:
                error = output_error(final, err)
                if not _undo(done):          # the staging folders hold what could not be put back: kept
                    kept = ", ".join(str(s / "old") for s in self._stages.values())
                    error = OutputError(f"{error.message}; the earlier files that could not be restored are in "
                                        f"{kept}", hint=error.hint, path=final, errno=err.errno)
                    self._stages.clear()
                raise error from None
            _COMMITTED.extend(moves)
            _COUNT[0] += len(moves)
            self._temps.clear()
            self._removals.clear()
            self._made.clear()               # (they hold the outputs now)
            for stage in self._stages.values():
                shutil.rmtree(stage, ignore_errors=True)
            self._stages.clear()

    def _stage_of_locked(self, folder: Path) -> Path:
        """:meth:`_stage_of` for a removal at commit (the lock held; the folder exists)."""
        stage = self._stages.get(folder)
        if stage is None:
            stage = self._stages[folder] = _new_stage(folder, self._tag)
        return stage

    def discard(self) -> None:
        """Remove the staged files not committed (and the folders made for them, where empty)."""
        with interrupts_deferred():
            _remove(self._stages, self._temps, self._made, self._open, self._lock)
            with self._lock:
                self._removals.clear()

    def __enter__(self) -> "Staging":
        return self

    def __exit__(self, *exc) -> None:
        self.discard()


class _StagedFile(io.RawIOBase):
    """A staged file open for writing (:meth:`Staging.open`): its ``OSError`` name the output it becomes."""

    def __init__(self, fh: io.BufferedWriter, final: Path) -> None:
        super().__init__()
        self._fh, self.name = fh, str(final)

    def writable(self) -> bool:
        return True

    def write(self, data) -> int:
        try:
            return self._fh.write(data)
        except OSError as err:
            raise output_error(self.name, err) from None

    def flush(self) -> None:
        if not self._fh.closed:
            try:
                self._fh.flush()
            except OSError as err:
                raise output_error(self.name, err) from None

    def fileno(self) -> int:
        return self._fh.fileno()

    def tell(self) -> int:
        return self._fh.tell()

    def close(self) -> None:
        if not self.closed:
            try:
                self._fh.close()
            except OSError as err:
                raise output_error(self.name, err) from None
            finally:
                super().close()


def _absolute(path: str | os.PathLike) -> Path:
    return Path(os.path.abspath(path))


def _new_stage(folder: Path, tag: str) -> Path:
    """A new staging folder in ``folder`` with its ``new/`` (mode 0700)."""
    for _ in range(100):
        stage = folder / f"{STAGE_PREFIX}{tag}{os.urandom(6).hex()}{STAGE_SUFFIX}"
        try:
            os.mkdir(stage, 0o700)
        except FileExistsError:
            continue
        os.mkdir(stage / "new", 0o700)
        return stage
    raise FileExistsError(errno.EEXIST, "no free staging folder name", str(folder))


def _set_aside(final: Path, stage: Path, *, keep: bool) -> Path | None:
    """The output ``final`` kept in ``stage/old/`` before it is replaced (``keep``: a hard link, so the name never
    disappears; where links fail, or to remove it, moved there). None where it does not exist."""
    if not os.path.lexists(final):
        return None
    if _is_folder(final):                   # (never moved aside, nor replaced: a folder is not an output)
        raise IsADirectoryError(errno.EISDIR, "a folder has that name", str(final))
    old = stage / "old"
    if not old.is_dir():
        os.mkdir(old, 0o700)
    backup = old / final.name
    if keep:
        try:
            os.link(final, backup, follow_symlinks=False)
            return backup
        except OSError:
            pass
    os.replace(final, backup)
    return backup


def _is_folder(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _undo(done: list[tuple[Path, Path | None]]) -> bool:
    """Undo a commit's steps, last first: a replaced or removed output back from its backup, a new one removed.
    True when every step was undone (else the staging folders, which hold the backups, are kept)."""
    ok = True
    for final, backup in reversed(done):
        try:
            if backup is not None:
                os.replace(backup, final)
            else:
                os.unlink(final)
        except OSError:
            ok = False
    return ok


def _close_all(handles: list) -> None:
    for fh in handles:
        try:
            fh.close()
        except OSError:
            pass
    handles.clear()


def _remove(stages: dict[Path, Path], temps: dict[Path, Path], made: list[Path], handles: list,
            lock: threading.Lock | None) -> None:
    """:meth:`Staging.discard` (also its finalizer: it must not hold the staging itself)."""
    with lock if lock is not None else contextlib.nullcontext():
        _close_all(handles)
        for stage in stages.values():
            shutil.rmtree(stage, ignore_errors=True)
        stages.clear()
        temps.clear()
        for folder in reversed(made):        # innermost first; a folder something else wrote into stays
            try:
                os.rmdir(folder)
            except OSError:
                pass
        made.clear()
