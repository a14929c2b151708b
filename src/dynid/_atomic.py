"""Atomic file writes: a temporary file in the target folder, then ``os.replace``.

An interrupted or failed run never leaves a half-written file under the final name.
:func:`commit_files` writes a whole set of outputs: all temporaries first, then all renames.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Mapping

__all__ = ["atomic_write_text", "atomic_write_bytes", "commit_files"]


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    commit_files({Path(path): data})


def atomic_write_text(path: str | os.PathLike, text: str, newline: str = "\n") -> None:
    commit_files({Path(path): text.replace("\n", newline).encode("utf-8")})


def commit_files(files: Mapping[Path, bytes]) -> None:
    """Write every file to a temporary name, then rename them all; on error remove the temporaries."""
    temps: list[tuple[str, Path]] = []
    mask = os.umask(0)  # mkstemp creates 0600 files; outputs get the usual mode (0666 & ~umask)
    os.umask(mask)
    try:
        for path, data in files.items():
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            temps.append((tmp, path))
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.chmod(tmp, 0o666 & ~mask)
        for tmp, path in temps:
            os.replace(tmp, path)
        temps.clear()
    finally:
        for tmp, _ in temps:
            try:
                os.unlink(tmp)
            except OSError:
                pass
