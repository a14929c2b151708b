"""Shared pieces of the subcommands: error handling, terminal styling and progress on stderr, output
checks, tables, JSON output."""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
import threading
import time
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence, TextIO

from .._atomic import create_temporary
from .._json import dumps, jsonable
from ..errors import ConfigError, DynidError, OutputError

__all__ = ["Progress", "print_json", "table", "wrap", "fail", "warn", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE",
           "EXIT_PIPE", "parse_floats", "style", "colour_enabled", "note", "show_warning", "user_warnings",
           "check_output", "check_outputs", "output_options",
           "check_inputs_kept", "command_inputs", "command_outputs", "name_output_option",
           "HelpFormatter", "RawDescriptionHelpFormatter", "stdout_closed", "close_progress", "add_units_option"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_PIPE = 141
"""stdout closed by its reader (``dynid models | head -1``): 128 + SIGPIPE, what a shell reports for a
process the closed pipe ended, whatever the command had reached."""

WIDTH = 100
"""Text output (tables, listings) is wrapped to this many columns."""

# ------------------------------------------------------------------------------------------ terminal

_ANSI = {"success": "1;32", "failure": "1;31", "error": "31", "warning": "33", "info": "36"}


def colour_enabled(stream: TextIO | None = None) -> bool:
    """True when ``stream`` (default stdout) is a terminal, ``NO_COLOR`` is unset or empty and
    ``TERM`` is not ``dumb`` (https://no-color.org)."""
    stream = sys.stdout if stream is None else stream
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no isatty, or closed
        return False


def style(text: str, kind: str, stream: TextIO | None = None) -> str:
    """``text`` coloured for ``kind`` when it goes to a colour terminal, else unchanged.

    Parameters
    ----------
    text : str
        What to colour, e.g. ``"SUCCEEDED"`` or ``"[warning]"``.
    kind : str
        ``"success"`` (bold green), ``"failure"`` (bold red), or a diagnostic severity: ``"error"``
        (red), ``"warning"`` (yellow), ``"info"`` (cyan). Any other kind leaves ``text`` unchanged.
    stream : file, optional
        Where ``text`` will be written (default ``sys.stdout``): colour only if it is a terminal and
        ``NO_COLOR`` is not set, so piped output never holds escape codes.

    Returns
    -------
    str
    """
    code = _ANSI.get(kind)
    if code is None or not colour_enabled(stream):
        return text
    return f"\033[{code}m{text}\033[0m"


def _rich_available() -> bool:
    try:
        import rich.progress  # noqa: F401 - the optional extra 'terminal'
    except ImportError:
        return False
    return True


_ACTIVE: list["Progress"] = []


class Progress:
    """A progress bar on stderr while long work runs; silent when stderr is not a terminal or ``quiet``.

    Call it with ``(stage, fraction)`` (the library's progress callback); the bar appears at the first
    call and keeps its elapsed time running between calls. Drawn with ``rich`` when it is installed
    (extra ``terminal``), else as plain text. ``part(lo, hi)`` maps a sub-task's 0..1 onto lo..hi;
    the shown fraction never goes backwards. Use it as a context manager, or call :meth:`close`.
    """

    def __init__(self, title: str, quiet: bool = False, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        try:
            tty = self.stream.isatty()
        except (AttributeError, ValueError):
            tty = False
        self.enabled = not quiet and tty and os.environ.get("TERM") != "dumb"
        self.title = title
        self.fraction = 0.0
        self._bar: _RichBar | _TextBar | None = None

    def __call__(self, stage: str, fraction: float) -> None:
        if not self.enabled:
            return
        self.fraction = max(self.fraction, min(1.0, max(0.0, float(fraction))))
        if self._bar is None:
            backend = _RichBar if _rich_available() else _TextBar
            self._bar = backend(self.title, self.stream, stage, self.fraction)
            _ACTIVE.append(self)
        else:
            self._bar.update(stage, self.fraction)

    def log(self, text: str) -> None:
        """One line on stderr, above the bar when one is shown (the bar is redrawn below it)."""
        if self._bar is not None:
            self._bar.log(text)
            return
        self.stream.write(text + "\n")
        self.stream.flush()

    def part(self, lo: float, hi: float) -> Callable[[str, float], None]:
        """The callback of a sub-task that covers ``lo``..``hi`` of this bar."""
        return lambda stage, fraction: self(stage, lo + (hi - lo) * fraction)

    def close(self) -> None:
        """Remove the bar (the terminal line is left clean)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None
            if self in _ACTIVE:
                _ACTIVE.remove(self)

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def close_progress() -> None:
    """Close every progress bar still shown (before an error message is printed)."""
    for p in list(_ACTIVE):
        p.close()


class _RichBar:
    """The bar drawn by ``rich`` (spinner, bar, percentage, stage, elapsed time; removed when done)."""

    def __init__(self, title: str, stream: TextIO, stage: str, fraction: float) -> None:
        from rich.console import Console
        from rich.progress import (BarColumn, Progress as RichProgress, SpinnerColumn, TaskProgressColumn, TextColumn,
                                   TimeElapsedColumn)

        self._progress = RichProgress(SpinnerColumn(), TextColumn("[bold]{task.fields[title]}"), BarColumn(),
                                      TaskProgressColumn(), TimeElapsedColumn(), TextColumn("{task.description}"),
                                      console=Console(file=stream), transient=True, redirect_stdout=False,
                                      redirect_stderr=False)
        self._task = self._progress.add_task(stage, total=1.0, completed=fraction, title=title)
        self._progress.start()

    def update(self, stage: str, fraction: float) -> None:
        self._progress.update(self._task, completed=fraction, description=stage)

    def log(self, text: str) -> None:
        self._progress.console.print(text, markup=False, highlight=False, soft_wrap=True)

    def close(self) -> None:
        self._progress.stop()


class _TextBar:
    """The plain-text bar: ``title [####----]  40% stage  1.2 s``, redrawn twice a second."""

    WIDTH = 24

    def __init__(self, title: str, stream: TextIO, stage: str, fraction: float) -> None:
        self.title, self.stream = title, stream
        self.stage, self.fraction, self.t0 = stage, fraction, time.perf_counter()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._length = 0
        self._draw()
        self._ticker = threading.Thread(target=self._tick, name="dynid-progress", daemon=True)
        self._ticker.start()

    def _tick(self) -> None:
        while not self._stop.wait(0.5):
            self._draw()

    def _draw(self) -> None:
        with self._lock:
            if self._stop.is_set():
                return
            done = int(round(self.WIDTH * self.fraction))
            line = (f"{self.title} [{'#' * done}{'-' * (self.WIDTH - done)}] {100 * self.fraction:3.0f}% "
                    f"{self.stage[:30]:<30} {time.perf_counter() - self.t0:5.1f} s")
            self._write("\r" + line.ljust(self._length))
            self._length = len(line)

    def _write(self, text: str) -> None:
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # the terminal went away: stop drawing
            self._stop.set()

    def update(self, stage: str, fraction: float) -> None:
        self.stage, self.fraction = stage, fraction
        self._draw()

    def log(self, text: str) -> None:
        with self._lock:  # clear the bar's line, write, then redraw the bar below
            self._write("\r" + " " * self._length + "\r" + text + "\n")
            self._length = 0
        self._draw()

    def close(self) -> None:
        self._stop.set()
        self._ticker.join()
        with self._lock:
            if self._length:
                self._write("\r" + " " * self._length + "\r")
                self._length = 0


# ------------------------------------------------------------------------------------------ help

class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """argparse's defaults formatter without the noise: no ``(default: None)`` for options that have
    no default value, no ``(default: False)`` for flags, nothing added when the help already says
    what the default is."""

    def _get_help_string(self, action: argparse.Action) -> str:
        help = action.help or ""
        if action.default is None or isinstance(action.default, bool) or "(default" in help:
            return help
        return super()._get_help_string(action)


class RawDescriptionHelpFormatter(argparse.RawDescriptionHelpFormatter, HelpFormatter):
    """:class:`HelpFormatter` that keeps the description and epilog as written."""


# ------------------------------------------------------------------------------------------ outputs

OUTPUT_DESTS = ("out", "report", "figures", "plot", "mcbasic")
"""Options (by argparse ``dest``) that name something a command writes; a ``metavar`` ending in ``DIR``
marks a folder, anything else a file."""


def check_output(path: str | os.PathLike, *, kind: str = "dir", option: str = "--out") -> Path:
    """Fail early when ``path`` cannot be written, before any long work starts.

    Nothing is created: the folder (``kind="dir"``) or the file's folder (``kind="file"``) must be a
    writable folder, or be creatable in its nearest existing parent (tested with a temporary file
    that is never visible).

    Parameters
    ----------
    path : str or Path
        The output as the user gave it.
    kind : {"dir", "file"}
    option : str
        The flag that named it, for the message.

    Returns
    -------
    Path

    Raises
    ------
    ConfigError
        ``cannot write to PATH: <reason>; choose another OPTION`` (exit status 2).
    """
    p = Path(path)

    def cannot(reason: str) -> ConfigError:
        return ConfigError(f"cannot write to {path}: {reason}; choose another {option}")

    if p.is_dir() and kind == "file":
        raise cannot("it is a folder, give a file name")
    if p.exists() and not p.is_dir() and kind == "dir":
        raise cannot("it is a file, not a folder")
    folder = p if kind == "dir" else p.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise cannot(f"{folder} is a file, not a folder")
    try:
        fd, probe = create_temporary(folder / ".dynid-write-check")
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise cannot(f"{folder} is not writable ({(err.strerror or str(err)).lower()})") from None
    return p


def output_options(parser: argparse.ArgumentParser) -> list[tuple[str, str, str]]:
    """``(dest, flag, kind)`` of the options of ``parser`` that name outputs (see :data:`OUTPUT_DESTS`)."""
    found = []
    for action in parser._actions:
        if action.option_strings and action.dest in OUTPUT_DESTS and action.metavar:
            kind = "dir" if str(action.metavar).upper().endswith("DIR") else "file"
            found.append((action.dest, action.option_strings[-1], kind))
    return found


def check_outputs(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """:func:`check_output` for every output option of the command that is set (or has a default)."""
    for dest, flag, kind in output_options(parser):
        value = getattr(args, dest, None)
        if isinstance(value, (str, os.PathLike)):
            check_output(value, kind=kind, option=flag)


# ------------------------------------------------------------------------------------------ inputs kept

RESULT_FOLDER_FILES = ("result.json", "IDNT*.PRG", "IDNT*.REC")
"""What a command reads of a folder given for an input (a result folder)."""


def command_inputs(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[tuple[str, str, Path]]:
    """``(label, as given, file)`` of every input file of the command: its positional arguments (a result folder
    gives :data:`RESULT_FOLDER_FILES` in it; a command's ``inputs_of(args)`` default gives its own, e.g. the
    recordings a batch's folders and globs name) and the options that name a file (metavar ``FILE``, ``.json``,
    ``PRG``), outputs excepted."""
    found: list[tuple[str, str, Path]] = []
    custom = getattr(args, "inputs_of", None)
    if custom is not None:
        found += custom(args)
    for action in parser._actions:
        if action.dest in OUTPUT_DESTS or isinstance(action, argparse._SubParsersAction) or action.dest == "help":
            continue
        meta = str(action.metavar or action.dest)
        if action.option_strings:
            if not any(m in meta.upper() for m in ("FILE", ".JSON", "PRG")):
                continue
            label = action.option_strings[-1]
        elif custom is not None:
            continue
        else:
            label = meta
        values = getattr(args, action.dest, None)
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, (str, os.PathLike)):
                path = Path(value)
                inside = [f for pattern in RESULT_FOLDER_FILES for f in sorted(path.glob(pattern))] \
                    if path.is_dir() else [path]
                found += [(label, os.fspath(value), f) for f in inside]
    return found


def command_outputs(args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[tuple[str, str, Path]]:
    """``(flag, as given, file)`` of every file the command writes, replaces or removes: its file options, and
    what a command's ``outputs_of(args)`` default lists (the files it writes into its output folders)."""
    found = [(flag, os.fspath(getattr(args, dest)), Path(getattr(args, dest)))
             for dest, flag, kind in output_options(parser)
             if kind == "file" and isinstance(getattr(args, dest, None), (str, os.PathLike))]
    custom = getattr(args, "outputs_of", None)
    return found + (list(custom(args)) if custom is not None else [])


def check_inputs_kept(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Fail before any work when the command would write over one of its own inputs: the same path, also
    through symbolic links, or the same file (a hard link); an output folder holding an input under a name the
    command writes there.

    Raises
    ------
    ConfigError
        ``--out X would write over the input REC Y`` (exit status 2).
    """
    inputs = command_inputs(args, parser)
    if not inputs:
        return
    for flag, given, out in command_outputs(args, parser):
        for label, source, path in inputs:
            if _same_file(out, path):
                what = given if out == Path(given) else f"{given} ({os.path.relpath(out, given)} in it)"
                if Path(source) != path:                      # a file of an input folder
                    same = f" ({path})"
                else:
                    same = "" if os.path.abspath(out) == os.path.abspath(path) else " (the same file)"
                raise ConfigError(f"{flag} {what} would write over the input {label} {source}{same}",
                                  hint=f"a command never overwrites its own inputs: choose another {flag}, or move the "
                                       "input elsewhere")


def _same_file(a: Path, b: Path) -> bool:
    """Whether ``a`` and ``b`` name one file: the same inode (hard links, symbolic links, another spelling), or
    the same real path where one does not exist yet."""
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


def name_output_option(err: BaseException, args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """An :class:`~dynid.errors.OutputError` gets the output option its path falls under (its hint then names it)."""
    path = getattr(err, "path", None)
    if not isinstance(err, OutputError) or path is None or err.options:
        return
    target = Path(os.path.abspath(path))
    for dest, _, _ in output_options(parser):
        value = getattr(args, dest, None)
        if isinstance(value, (str, os.PathLike)):
            given = Path(os.path.abspath(value))
            if target == given or given in target.parents:
                err.options = (dest,)
                return


# ------------------------------------------------------------------------------------------ output

def add_result_argument(parser) -> None:
    """The positional RESULT.json of the commands that use an identification."""
    parser.add_argument("result", metavar="RESULT.json", help="result.json written by 'dynid identify' (or its folder)")


def add_units_option(parser, what: str) -> None:
    """``--units si|softmc`` for the position units of the recording ``what``, by default its ``# units:`` line."""
    parser.add_argument("--units", choices=("si", "softmc"), default=None,
                        help=f"position units of {what}: si (rad, m) or softmc (deg, mm); default: the file's "
                             "'# units:' line, else si (a --units the line contradicts is an error)")


def print_json(data: Any) -> None:
    sys.stdout.write(dumps(jsonable(data)) + "\n")


def table(rows: Sequence[Sequence[Any]], header: Sequence[str], width: int | None = None) -> str:
    """Plain text table with left-aligned columns.

    With ``width``, the last column is wrapped so that no line is longer than ``width`` (its
    continuation lines start under that column).
    """
    cells = [list(map(str, header))] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    if width is not None:
        start = sum(w + 2 for w in widths[:-1])
        widths[-1] = min(widths[-1], max(20, width - start))
    lines = []
    for r in cells:
        last = [r[-1]] if width is None else (textwrap.wrap(r[-1], widths[-1], break_on_hyphens=False) or [""])
        lines.append("  ".join(c.ljust(w) for c, w in zip(r[:-1] + [last[0]], widths)).rstrip())
        lines += [" " * sum(w + 2 for w in widths[:-1]) + cont for cont in last[1:]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def wrap(text: str, width: int = WIDTH, indent: str = "  ") -> str:
    """``text`` wrapped to ``width`` columns with a hanging ``indent`` on the continuation lines."""
    return textwrap.fill(text, width, subsequent_indent=indent, break_on_hyphens=False, break_long_words=True)


def fail(err: BaseException, debug: bool = False) -> int:
    """Print a dynid error as one line (plus its hint) on stderr and return exit status 2."""
    close_progress()
    if debug:
        import traceback

        traceback.print_exception(type(err), err, err.__traceback__, file=sys.stderr)
    prefix = "dynid: " + style("error:", "error", sys.stderr)
    if isinstance(err, DynidError):
        sys.stderr.write(f"{prefix} {err.message}\n")
        if err.hint:
            flags = ", ".join("--" + o.replace("_", "-") for o in err.options)
            sys.stderr.write(f"dynid: hint: {err.hint}" + (f" ({flags})" if flags else "") + "\n")
    elif isinstance(err, OSError) and err.filename is not None:  # e.g. a file system that filled up
        sys.stderr.write(f"{prefix} {err.filename}: {err.strerror or err}\n")
    else:
        sys.stderr.write(f"{prefix} {type(err).__name__}: {err}\n")
    return EXIT_USAGE


def warn(message: str) -> None:
    """``dynid: warning: message`` on stderr (the word coloured on a terminal; above the progress bar when one
    is shown)."""
    if _ACTIVE:
        _ACTIVE[-1].log(f"dynid: warning: {message}")
        return
    sys.stderr.write(f"dynid: {style('warning:', 'warning', sys.stderr)} {message}\n")


def show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """:func:`warnings.showwarning` of the command line: a warning (the library's, numpy's, any thread's) as
    ``dynid: warning: <message>`` on one line — no source path, no line number, no category."""
    warn(" ".join(str(message).split()))


@contextmanager
def user_warnings() -> Iterator[None]:
    """Show warnings with :func:`show_warning` while the block runs (every thread: the hook is the module's)."""
    saved = warnings.showwarning
    warnings.showwarning = show_warning
    try:
        yield
    finally:
        warnings.showwarning = saved


def note(message: str) -> None:
    """``dynid: note: message`` on stderr (what a reader of the output should know; not a problem)."""
    sys.stderr.write(f"dynid: {style('note:', 'info', sys.stderr)} {message}\n")


def stdout_closed() -> int:
    """stdout's reader went away (``dynid models | head -1``): send the rest of the output to the
    null device (so the interpreter's last flush cannot fail again) and return :data:`EXIT_PIPE`."""
    close_progress()
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout without a file descriptor (captured in-process)
        pass
    return EXIT_PIPE


def parse_floats(text: str, name: str) -> list[float]:
    """``"1,2.5,3"`` -> ``[1.0, 2.5, 3.0]`` (also accepts ``{1,2,3}`` as softMC writes vectors)."""
    s = text.strip().strip("{}[]()")
    try:
        return [float(x) for x in s.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"{name} must be comma-separated numbers, got {text!r}") from None


def fmt(v: float, digits: int = 5) -> str:
    if v is None:
        return "-"
    try:
        return f"{v:.{digits}g}"
    except (TypeError, ValueError):
        return str(v)
