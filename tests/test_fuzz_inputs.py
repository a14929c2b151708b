"""Issue 26: a fuzz run over damaged recordings and options. Whatever the input, ``dynid identify`` (and
``predict``) ends with exit status 0, 1 or 2; status 2 comes with one clear message (``dynid: error: ...``, no
traceback, no Python exception's class or internal file path) and leaves no output; statuses 0 and 1 leave the
outputs. The cases are deterministic: cells, time, truncation, binary content, encodings, delimiters, headers,
units, and option values — each the whole file or block-by-block reading (``--streaming always``)."""

from __future__ import annotations

import contextlib
import io
import re
import zlib

import numpy as np
import pytest

from dynid.cli.main import main

N = 3000
INTERNAL = re.compile(r"Traceback|File \"|\.py\b|\b(ValueError|TypeError|KeyError|IndexError|AttributeError|"
                      r"ZeroDivisionError|RuntimeError|OSError|UnicodeDecodeError|UnicodeError|LinAlgError|"
                      r"AssertionError|NameError|StopIteration|OverflowError|FloatingPointError|Exception)\b")


def _rows(n: int = N, f: float = 1.7) -> np.ndarray:
    t = np.arange(n) * 1e-3
    w = 2 * np.pi * f
    q = 1.2 * np.sin(w * t) + 0.3 * np.sin(3.1 * w * t)
    qd = 1.2 * w * np.cos(w * t) + 0.93 * w * np.cos(3.1 * w * t)
    qdd = -1.2 * w * w * np.sin(w * t) - 2.883 * w * w * np.sin(3.1 * w * t)
    tau = 0.5 * qdd - 4.0 * np.sin(q) + 0.3 * qd + 0.2 * np.sign(qd)
    tau += np.random.default_rng(0).normal(size=n) * 0.05
    return np.column_stack([t, q, tau])


def _text(rows: np.ndarray, header: str = "t,q1,tau1", sep: str = ",", meta: str = "") -> str:
    body = "\n".join(sep.join(f"{v:.10g}" for v in r) for r in rows)
    return meta + header.replace(",", sep) + "\n" + body + "\n"


def _cell(text: str, row: int, col: int, value: str) -> str:
    lines = text.split("\n")
    k = next(i for i, ln in enumerate(lines) if ln and not ln.startswith("#")) + 1 + row
    cells = lines[k].split(",")
    cells[col] = value
    lines[k] = ",".join(cells)
    return "\n".join(lines)


def _cases() -> list[tuple[str, bytes | str, list[str]]]:
    good = _text(_rows())
    rows = _rows()
    cases: list[tuple[str, bytes | str, list[str]]] = []
    add = lambda name, content, opts=(): cases.append((name, content, list(opts)))  # noqa: E731
    # cells
    for i, v in enumerate(["nan", "NaN", "inf", "-inf", "abc", "", " ", "1,5", "0x10", "1e999", "--1", "1e", "∞",
                           "1.0.0", "+", "TRUE", "'3'", '"3"', "1_000", "١"]):
        for col, row in ((1, 5), (2, 2500)):
            add(f"cell {v!r} col {col} row {row}", _cell(good, row, col, v))
    # time
    t_cases = {
        "repeated time": lambda r: np.vstack([r[:100], r[99:100], r[100:]]),
        "time going back": lambda r: np.vstack([r[:1500], r[1400:1500], r[1500:]]),
        "reversed time": lambda r: r[::-1],
        "constant time": lambda r: np.column_stack([np.zeros(len(r)), r[:, 1:]]),
        "milliseconds": lambda r: np.column_stack([r[:, 0] * 1000, r[:, 1:]]),
        "microseconds": lambda r: np.column_stack([r[:, 0] * 1e6, r[:, 1:]]),
        "time in minutes": lambda r: np.column_stack([r[:, 0] / 60, r[:, 1:]]),
        "huge time gap": lambda r: np.column_stack([np.where(np.arange(len(r)) > 1500, r[:, 0] + 3600, r[:, 0]),
                                                    r[:, 1:]]),
        "jittery time": lambda r: np.column_stack([r[:, 0] + np.random.default_rng(1).uniform(0, 4e-4, len(r)),
                                                   r[:, 1:]]),
        "negative time": lambda r: np.column_stack([r[:, 0] - 100, r[:, 1:]]),
        "slow sampling": lambda r: np.column_stack([r[:, 0] * 80, r[:, 1:]]),
        "few samples": lambda r: r[:30],
        "sixty samples": lambda r: r[:60],
        "joint never moves": lambda r: np.column_stack([r[:, :1], np.full(len(r), 0.3), r[:, 2:]]),
        "torque all zero": lambda r: np.column_stack([r[:, :2], np.zeros(len(r))]),
        "torque constant": lambda r: np.column_stack([r[:, :2], np.full(len(r), 5.0)]),
        "degrees as rad": lambda r: np.column_stack([r[:, :1], np.degrees(r[:, 1]) * 10, r[:, 2:]]),
        "torque in mN m": lambda r: np.column_stack([r[:, :2], r[:, 2] * 1000]),
        "one moving sample": lambda r: np.column_stack([r[:, :1], np.r_[np.zeros(len(r) - 1), 1e-9], r[:, 2:]]),
        "position noise only": lambda r: np.column_stack([r[:, :1], np.random.default_rng(2).normal(size=len(r)) * 1e-6,
                                                          r[:, 2:]]),
    }
    for name, fn in t_cases.items():
        add(name, _text(fn(rows)))
    # truncation
    for name, content in {"empty file": "", "only blank lines": "\n\n\n", "only header": "t,q1,tau1\n",
                          "header no newline": "t,q1,tau1", "cut mid-row": good[: len(good) // 2 + 7],
                          "cut mid-number": good[: len(good) // 3] + "1.23e",
                          "only comments": "# robot: x\n# units: si\n", "header and one row": "t,q1,tau1\n0,1,2\n",
                          "missing last newline": good.rstrip("\n")}.items():
        add(name, content)
    # binary and encodings
    rng = np.random.default_rng(5)
    add("random bytes", bytes(rng.integers(0, 256, 5000, dtype=np.uint8)))
    add("nul in the body", good[:2000] + "\x00" + good[2000:])
    add("zlib compressed", zlib.compress(good.encode()))
    add("utf-16", good.encode("utf-16"))
    add("utf-16 le no bom", good.encode("utf-16-le"))
    add("latin-1 header", ("# robot: Stäubli\n" + good).encode("latin-1"))
    add("utf-8 bom", "\ufeff" + good)
    add("crlf", good.replace("\n", "\r\n"))
    add("cr only", good.replace("\n", "\r"))
    add("png bytes", b"\x89PNG\r\n\x1a\n" + bytes(200))
    add("an npz renamed", b"PK\x03\x04" + bytes(300))
    add("mcap magic, garbage", b"\x89MCAP0\r\n" + bytes(300))
    # delimiters
    for name, sep in {"semicolon": ";", "tab": "\t", "space": " ", "pipe": "|"}.items():
        add(f"{name} separated", _text(rows, sep=sep))
    add("semicolon with decimal comma", _text(rows, sep=";").replace(".", ","))
    add("trailing comma", good.replace("\n", ",\n"))
    add("quoted cells", "\n".join(",".join(f'"{c}"' for c in ln.split(",")) for ln in good.split("\n")))
    # headers
    for name, header in {"no t": "time,q1,tau1", "no q": "t,pos1,tau1", "no tau": "t,q1,torque1",
                         "duplicate column": "t,q1,q1", "q2 without q1": "t,q2,tau2", "upper case": "T,Q1,TAU1",
                         "spaces in names": " t , q1 , tau1 ", "numbers as header": "0,1,2", "empty names": ",,",
                         "tau0": "t,q0,tau0", "q1 twice with tau": "t,q1,tau1,q1", "extra column": "t,q1,tau1,x",
                         "dq column": "t,q1,dq1", "unicode names": "t,q₁,tau1"}.items():
        extra = "," + ",".join("1" for _ in range(header.count(",") - 2)) if header.count(",") > 2 else ""
        body = "\n".join(",".join(f"{v:.10g}" for v in r) + extra for r in rows)
        add(f"header {name}", header + "\n" + body + "\n")
    add("header twice", good + good)
    add("two joints in a one-joint model", _text(np.column_stack([rows[:, 0], rows[:, 1], rows[:, 1], rows[:, 2],
                                                                  rows[:, 2]]), header="t,q1,q2,tau1,tau2"))
    # units metadata
    for units in ("furlongs", "deg", "rad", "si", "softmc", "SI", "", "mm"):
        add(f"units line {units!r}", _text(rows, meta=f"# units: {units}\n"))
    add("units softmc on rad data", good, ["--units", "softmc"])
    add("units bogus option", good, ["--units", "imperial"])
    # options
    for opts in (["--cutoff", "-1"], ["--cutoff", "0"], ["--cutoff", "1e9"], ["--cutoff", "nan"], ["--cutoff", "abc"],
                 ["--cutoff", "0.01"], ["--cutoff", "499"], ["--threshold", "abc"], ["--threshold", "-1"],
                 ["--threshold", "1e9"], ["--threshold", "0,0"], ["--group", "-1"], ["--decimate", "0"],
                 ["--decimate", "-3"], ["--decimate", "100000"], ["--allowed", "-5"], ["--allowed", "abc"],
                 ["--trim", "-1"], ["--trim", "100000"], ["--torque-delay", "1e9"], ["--torque-delay", "nan"],
                 ["--estimator", "magic"], ["--model", "nosuch"], ["--config", "/nonexistent.json"],
                 ["--urdf", "/nonexistent.urdf"], ["--friction", "viscous+sticky"], ["--weighting", "x"],
                 ["--upper-fraction", "-1"], ["--upper-threshold", "abc"], ["--prior-weight", "-1"],
                 ["--threads", "0"], ["--regularize", "-1"], ["--topic", "/x"], ["--element", ""],
                 ["--payload-of", "/nonexistent/result.json"], ["--estimator", "irls"], ["--align"],
                 ["--friction", "auto"], ["--estimator", "ols"], ["--cutoff", "default"]):
        add("option " + " ".join(opts), good, opts)
    return cases


CASES = _cases()


def test_the_fuzz_run_has_enough_cases():
    assert len(CASES) >= 150


def _run(argv: list[str]) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            code = main(argv)
        except SystemExit as exc:               # argparse's usage errors
            code = exc.code
    return int(code), err.getvalue()


@pytest.mark.slow
@pytest.mark.parametrize("streaming", ["never", "always"])
def test_damaged_recordings_and_options_end_clearly(tmp_path, streaming):
    failures = []
    for k, (name, content, opts) in enumerate(CASES):
        path = tmp_path / f"case{k}.csv"
        path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
        out = tmp_path / f"out{k}"
        model = [] if "--model" in opts else ["--model", "rotary3"]
        code, err = _run(["identify", str(path), *model, "--out", str(out), "--no-report", "--quiet",
                          "--streaming", streaming, *opts])
        problem = None
        if code not in (0, 1, 2):
            problem = f"exit {code}"
        elif code == 2:
            lines = [ln for ln in err.splitlines() if ln.strip() and not ln.startswith("dynid: warning:")]
            if not lines or not (lines[0].startswith("dynid: error:") or lines[0].startswith("usage:")):
                problem = "no 'dynid: error:' line"
            elif INTERNAL.search(err):
                problem = "internal exception text"
            elif out.exists():
                problem = "an output folder was left"
        elif not (out / "result.json").exists():
            problem = f"exit {code} without result.json"
        if code != 2 and INTERNAL.search(err):
            problem = "internal exception text in a warning"
        if problem:
            failures.append(f"{name} {opts}: {problem}: {err.strip()[-300:]!r}")
    assert not failures, f"{len(failures)} of {len(CASES)} cases:\n" + "\n".join(failures)
