"""Shared pieces of the subcommands: error handling, progress on stderr, tables, JSON output."""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Sequence

from ..errors import DynidError

__all__ = ["Progress", "print_json", "table", "fail", "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "parse_floats"]

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2


class Progress:
    """A one-line progress bar on stderr; silent when stderr is not a terminal or ``quiet``."""

    def __init__(self, title: str, quiet: bool = False, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.enabled = not quiet and hasattr(self.stream, "isatty") and self.stream.isatty()
        self.title = title
        self.t0 = time.perf_counter()

    def __call__(self, stage: str, fraction: float) -> None:
        if not self.enabled:
            return
        width = 28
        done = int(round(width * max(0.0, min(1.0, fraction))))
        bar = "#" * done + "-" * (width - done)
        self.stream.write(f"\r{self.title} [{bar}] {100 * fraction:3.0f}% {stage:<22}")
        if fraction >= 1.0:
            self.stream.write(f"\r{' ' * (len(self.title) + width + 32)}\r")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            self(" ", 1.0)


def add_result_argument(parser) -> None:
    """The positional RESULT.json of the commands that use an identification."""
    parser.add_argument("result", metavar="RESULT.json", help="result.json written by 'dynid identify' (or its folder)")


def print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2)
    sys.stdout.write("\n")


def table(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    """Plain text table with left-aligned columns."""
    cells = [list(map(str, header))] + [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def fail(err: BaseException, debug: bool = False) -> int:
    """Print a dynid error as one line (plus its hint) on stderr and return exit status 2."""
    if debug:
        import traceback

        traceback.print_exception(type(err), err, err.__traceback__, file=sys.stderr)
    if isinstance(err, DynidError):
        sys.stderr.write(f"dynid: error: {err.message}\n")
        if err.hint:
            flags = ", ".join("--" + o.replace("_", "-") for o in err.options)
            sys.stderr.write(f"dynid: hint: {err.hint}" + (f" ({flags})" if flags else "") + "\n")
    else:
        sys.stderr.write(f"dynid: error: {type(err).__name__}: {err}\n")
    return EXIT_USAGE


def parse_floats(text: str, name: str) -> list[float]:
    """``"1,2.5,3"`` -> ``[1.0, 2.5, 3.0]`` (also accepts ``{1,2,3}`` as softMC writes vectors)."""
    from ..errors import ConfigError

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
