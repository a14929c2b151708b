"""``dynid`` entry point: builds the argparse tree; each subcommand module stays thin."""

from __future__ import annotations

import os

# The identification's matrices are tall and narrow: multithreaded BLAS adds overhead there and
# collapses when cores are shared (2-3x slower in our measurements). The command line runs BLAS on
# one thread unless the user sets these variables. Must happen before numpy is imported.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import atexit  # noqa: E402
import gc  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
from typing import Sequence  # noqa: E402

from .. import __version__  # noqa: E402
from .._atomic import commits_so_far, committed_since  # noqa: E402
from . import _common  # noqa: E402

# Subcommand modules in help order; each defines add_parser(sub) and run(args) -> int. A module
# that is not part of this build is simply absent.
SUBCOMMAND_MODULES = ("models", "demo", "identify", "predict", "excite", "simulate", "feedforward", "monitor",
                      "units", "report", "derive", "codegen", "batch", "registry")


def _subcommands(only: str | None = None):
    for name in SUBCOMMAND_MODULES:
        if only is not None and name != only:
            continue
        full = f"{__package__}.{name}"
        if importlib.util.find_spec(full) is not None:
            yield importlib.import_module(full)

DESCRIPTION = """\
dynid: robot inverse dynamic models — identify a robot's dynamic parameters from a recorded
motion, validate them, and write softMC-compatible parameter programs (IDNT<group>.PRG).

Exit status: 0 success, 1 identification ran but failed its success criterion (50 % rule),
2 usage or input error, 130 interrupted (Ctrl-C), 141 standard output closed early by its reader
(e.g. piped into head), as for a process ended by SIGPIPE.

Outputs are written all together at the end (staged in a hidden folder beside them, then renamed):
an error or Ctrl-C leaves the output folder as it was, a finished run replaces the earlier run's
outputs there and keeps every other file. No command writes over one of its own inputs.

On a terminal, progress bars and colours are shown (drawn with 'rich' when the extra 'terminal' is
installed); with NO_COLOR set there are no colours, and piped output is plain text. Warnings go to
stderr as one line each, 'dynid: warning: <message>'.
"""

EPILOG = """\
examples:
  dynid demo                                   simulate a robot, identify it, write ./dynid-demo
  dynid models                                 list the models and their parameters
  dynid identify run.csv --model rotary3       identify a vertical crank arm from run.csv
  dynid predict dynid-out/result.json val.csv --out tau.csv
run 'dynid <command> --help' for the options of a command.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # usage errors: exit 2 with one line, as argparse does
        self.print_usage(sys.stderr)
        self.exit(2, f"dynid: {_common.style('error:', 'error', sys.stderr)} {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or (``only``) the parser of one subcommand: running a command imports its
    own module, not the modules of all the others."""
    parser = _Parser(prog="dynid", description=DESCRIPTION, epilog=EPILOG,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"dynid {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="<command>", parser_class=_Parser)
    for mod in _subcommands(only):
        mod.add_parser(sub)
    parser.commands = sub.choices  # name -> parser of each subcommand (their output options are checked)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (also used by the tests in-process).

    A reader that closes standard output early (``dynid models | head -1``) ends the command with
    status 141 (:data:`~dynid.cli._common.EXIT_PIPE`) and no traceback, as the Python documentation
    recommends (the rest of the output goes to the null device). Ctrl-C ends it with status 130 and a line
    saying what it left: nothing changed, or the outputs it had put in place.
    """
    mark = commits_so_far()
    try:
        try:
            return _run(argv)
        finally:
            sys.stdout.flush()  # a closed pipe shows here rather than at the interpreter's exit
    except BrokenPipeError:
        return _common.stdout_closed()
    except KeyboardInterrupt:  # (also while the command's modules are imported)
        _common.close_progress()
        sys.stderr.write(_interrupted(committed_since(mark)))
        return 130


def _run(argv: Sequence[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    first = argv[0] if argv else None
    parser = build_parser(first if first in SUBCOMMAND_MODULES else None)
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return _common.EXIT_USAGE
    command = parser.commands[args.command]
    try:
        with _common.user_warnings():       # 'dynid: warning: ...', never a source path
            _common.check_outputs(args, command)  # before any long work
            _common.check_inputs_kept(args, command)
            return int(args.run(args))
    except (BrokenPipeError, KeyboardInterrupt):
        raise
    except Exception as err:  # every failure ends as one line and exit status 2
        _common.name_output_option(err, args, command)
        return _common.fail(err, debug=getattr(args, "debug", False))
    finally:
        _common.close_progress()


def _interrupted(written: Sequence) -> str:
    """What an interrupt (Ctrl-C) left: nothing changed, or the outputs put in place before it took effect."""
    if not written:
        return "dynid: interrupted; no output files were written (the outputs' folders are as they were)\n"
    folders = ", ".join(dict.fromkeys(str(p.parent) for p in written))
    return (f"dynid: interrupted after the outputs were written ({len(written)} file(s) in {folders}); "
            "what was to follow them did not run\n")


def entry() -> None:
    """The ``dynid`` command (and ``python -m dynid.cli.main``): :func:`main`, then the process ends without
    tearing the interpreter down object by object (about 20 ms after an identification), as mypy's command
    does: standard output and error are flushed and the exit handlers run first. Where a (non-daemon) thread is
    still running (a Dask client's, say) the interpreter exits as usual and waits for it."""
    # a command runs for seconds and makes few reference cycles; the cyclic collector's passes over the young
    # objects of a 50k-sample identification (~60 of them) cost ~7 ms: far fewer with a larger first generation
    gc.set_threshold(50_000, 20, 20)
    code = main()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):           # (a closed stream: the usual exit reports nothing either)
        sys.exit(code)
    others = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
    for t in others:                        # (a worker finishing its last job: a moment)
        t.join(timeout=0.05)
    if any(t.is_alive() for t in others):   # still working: the interpreter's exit waits for it
        sys.exit(code)
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":  # pragma: no cover
    entry()
