"""Exceptions raised by dynid.

Every error dynid raises on purpose derives from :class:`DynidError`. The concrete classes also
derive from the matching built-in exception, so callers can catch ``ValueError`` as usual.
A message says what is wrong, where (file, column, row, parameter), what was received, and the
``hint`` says what to do. The command line prints both on one line each and exits with status 2.
"""

from __future__ import annotations

import os

__all__ = [
    "DynidError",
    "ShapeError",
    "ConfigError",
    "FileFormatError",
    "InputDataError",
    "IdentifiabilityError",
    "MissingExtraError",
    "OutputError",
]


class DynidError(Exception):
    """Base of all dynid errors.

    Parameters
    ----------
    message : str
        What is wrong, where, and what was received.
    hint : str, optional
        What the user should do about it, in the library's terms.
    options : sequence of str, optional
        The settings the hint refers to, by their Python names (``cutoff``, ``units``, ``urdf``, ...:
        the keywords of :class:`dynid.Identifier` and the configuration); the command line names
        its flags for them (``--cutoff``), the library never does.
    """

    def __init__(self, message: str, *, hint: str | None = None, options: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.options = tuple(options)

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message}; {self.hint}"
        return self.message


class ShapeError(DynidError, ValueError):
    """An array has the wrong shape or length."""


class ConfigError(DynidError, ValueError):
    """A configuration value or option combination is invalid."""


class FileFormatError(DynidError, ValueError):
    """A file cannot be read: missing, empty, not the expected format or columns."""


class InputDataError(DynidError, ValueError):
    """A recording was read but its content is unusable (NaN, time order, no motion, ...)."""


class IdentifiabilityError(DynidError):
    """The data cannot identify what was asked (rank-deficient, too few moving samples)."""


class MissingExtraError(DynidError, ImportError):
    """A feature needs an optional dependency that is not installed."""

    def __init__(self, feature: str, extra: str, module: str) -> None:
        super().__init__(
            f"{feature} needs the optional package '{module}', which is not installed",
            hint=f"install it with: pip install 'dynid[{extra}]'",
        )
        self.extra = extra


class OutputError(DynidError, OSError):
    """An output could not be written (a full disk, a read-only folder, ...); ``path`` names it and ``errno``
    is the operating system's error number. Nothing of the outputs was changed."""

    def __init__(self, message: str, *, hint: str | None = None, options: tuple[str, ...] = (),
                 path: str | os.PathLike | None = None, errno: int | None = None) -> None:
        super().__init__(message, hint=hint, options=options)
        self.path = None if path is None else os.fspath(path)
        self.filename = self.path
        self.errno = errno
