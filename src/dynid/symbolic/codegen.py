"""``dynid codegen``: an identified model as source code for a controller (C99, IEC 61131-3 ST, Python).

The torque of a :class:`~dynid.fitted.FittedModel` — rigid body with the identified parameters, the
configured payload, friction and actuator terms (coupled motors of a transmission included), joint
side, SI — is derived symbolically with every number substituted (:func:`dynid.symbolic.derive.symbolic_torque`,
Newton–Euler), reduced to common sub-expressions by ``sympy.cse`` and printed with SymPy's printers:

- ``c``: ``<name>.c`` + ``<name>.h`` with ``void dynid_torque(const double *q, const double *dq,
  const double *ddq, double *tau)`` and ``dynid_rigid_body_torque`` (the same without friction, for a
  runtime that adds friction itself). C99, ``<math.h>`` only, no allocation, no global state.
- ``st``: an IEC 61131-3 ``FUNCTION_BLOCK DYNID_TORQUE`` (inputs ``q, dq, ddq : ARRAY[1..n] OF LREAL``,
  output ``tau``), ``sign`` written as ``IF`` statements (ST has no sign function).
- ``python``: a module with ``torque(q, dq, ddq)`` on numpy arrays ``(n,)`` or ``(N, n)``.

:class:`GeneratedDynamics` compiles the C with the system compiler and serves it to the per-cycle
runtime (:class:`dynid.runtime.FeedForward` ``dynamics=``).
"""

from __future__ import annotations

import ctypes
import hashlib
import keyword
import math
import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import sympy as sp
from sympy.printing.c import C99CodePrinter
from sympy.printing.numpy import NumPyPrinter

from .. import __version__
from ..errors import ConfigError, DynidError, InputDataError
from .derive import substitute, symbolic_torque

__all__ = ["GeneratedCode", "generate_code", "GeneratedDynamics", "LANGUAGES", "torque_expressions", "check_name"]

LANGUAGES = ("c", "st", "python")

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)*")
"""A name every language takes: a letter first, then letters, digits and single underscores (IEC 61131-3 forbids
a leading, trailing or doubled underscore; C reserves a leading one; Python takes all of these)."""
_C_KEYWORDS = frozenset(
    "auto break case char const continue default do double else enum extern float for goto if inline int long "
    "register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while "
    "_Bool _Complex _Imaginary".split())
_ST_KEYWORDS = frozenset(
    "ACTION AND ANY ARRAY AT BOOL BY BYTE CASE CHAR CONFIGURATION CONSTANT DATE DATE_AND_TIME DINT DO DT DWORD ELSE "
    "ELSIF EN ENO EXIT FALSE FOR FROM FUNCTION FUNCTION_BLOCK IF INITIAL_STEP INT INTERVAL LINT LREAL LWORD MOD NOT "
    "OF ON OR PRIORITY PROGRAM READ_ONLY READ_WRITE REAL REPEAT RESOURCE RETAIN RETURN SINGLE SINT STEP STRING STRUCT "
    "TASK THEN TIME TIME_OF_DAY TO TOD TRANSITION TRUE TYPE UDINT UINT ULINT UNTIL USINT VAR VAR_ACCESS VAR_CONFIG "
    "VAR_EXTERNAL VAR_GLOBAL VAR_INPUT VAR_IN_OUT VAR_OUTPUT VAR_TEMP WCHAR WHILE WITH WORD WSTRING XOR".split())
MAX_NAME = 63
"""Longest name: C99's significant initial characters of an internal identifier or macro name."""


def check_name(name: str) -> str:
    """``name`` if it can name the generated files and what is in them: an identifier in C, IEC 61131-3 ST and
    Python (``[A-Za-z][A-Za-z0-9]*`` joined by single underscores, at most 63 characters) and no keyword of
    those languages (ST's case-insensitively); it also keeps the files in the output folder.

    Raises
    ------
    ConfigError
        Naming ``name`` and what it would break.
    """
    what = (f"name {name!r} names the generated files and the C include guard ({name.upper()}_H), the Python module "
            "and the ST source")
    if not _IDENTIFIER.fullmatch(name) or len(name) > MAX_NAME:
        raise ConfigError(f"{what}, so it must be an identifier in C, IEC 61131-3 ST and Python",
                          hint=f"use a letter first, then letters, digits and single underscores, at most {MAX_NAME} "
                               "characters (e.g. dynid_model, robot_2)", options=("name",))
    st = name.upper()
    if keyword.iskeyword(name) or name in _C_KEYWORDS or st in _ST_KEYWORDS or st.startswith("END_"):
        raise ConfigError(f"{what}, and it is a keyword of C, Python or IEC 61131-3 ST",
                          hint="choose another name (e.g. dynid_model)", options=("name",))
    return name


def _check_finite(fitted) -> None:
    """Refuse a model with a non-finite parameter, naming it (the configuration's numbers are checked when the
    model is built)."""
    bad = [f"{n} = {v!r}" for n, v in zip(fitted.param_names, fitted.theta.tolist()) if not math.isfinite(v)]
    model = fitted.model.name
    if bad:
        many = len(bad) > 1
        raise InputDataError(
            f"parameter{'s' if many else ''} {', '.join(bad[:6])}{' ...' if len(bad) > 6 else ''} of the identified "
            f"{model!r} model {'are' if many else 'is'} not {'' if many else 'a '}finite number{'s' if many else ''}: "
            "the generated code would return them as torques",
            hint="identify again (or correct the values in the file): a controller needs a number for each")


@dataclass(frozen=True)
class GeneratedCode:
    """Generated source: ``files`` (name -> text), ``operations`` (arithmetic operations after CSE, full
    torque), ``intermediates`` (CSE assignments), ``time_s`` (derivation + printing)."""

    lang: str
    files: dict
    n_joints: int
    operations: int
    intermediates: int
    time_s: float
    notes: list = field(default_factory=list)

    def write(self, out_dir: str | os.PathLike) -> list[Path]:
        """Write every file into ``out_dir`` (created), all together; returns the paths."""
        from .._atomic import commit_files

        files = {Path(out_dir) / name: text.encode() for name, text in self.files.items()}
        commit_files(files)
        return list(files)


def torque_expressions(fitted):
    """``(q, dq, ddq, rigid, friction)``: the identified model's rigid-body (+ payload) torque and its friction
    and actuator torque as SymPy expressions with every number in place (the model torque is their sum).

    Raises
    ------
    ConfigError
        A model without a geometric derivation (:func:`~dynid.symbolic.derive.symbolic_torque`).
    """
    model = fitted.model
    P = model.n_params
    theta = np.asarray(fitted.theta, dtype=float)
    g = sp.Symbol("g", positive=True)
    params = [sp.Float(float(v)) for v in theta[:P]]
    tau, _, _, (q, dq, ddq), _ = symbolic_torque(model, params, g, regressor=False)
    rigid = substitute(tau, {g: sp.Float(model.gravity)})
    fc = fitted.plant.friction_coefficients(theta)
    return q, dq, ddq, rigid, fc.expressions(dq, ddq, sign=sp.sign, exp=sp.exp)


def _signs(exprs: list) -> tuple[list, list]:
    """Every ``sign(x)`` replaced by a symbol ``sgn<k>``; returns the new expressions and ``[(symbol, x)]``."""
    found: dict = {}
    for e in exprs:
        for s in sp.sympify(e).atoms(sp.sign):
            if s not in found:
                found[s] = sp.Symbol(f"sgn{len(found)}")
    mapped = substitute(exprs, found) if found else list(exprs)
    return mapped, [(sym, s.args[0]) for s, sym in found.items()]


def _cse(exprs: list):
    reps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("x"), order="none")
    ops = sum(sp.count_ops(e) for _, e in reps) + sum(sp.count_ops(e) for e in reduced)
    return reps, reduced, int(ops)


class _ArrayPrinter(C99CodePrinter):
    """A C-family printer that prints the joint symbols as array elements (``arrays``: symbol -> text)."""

    def __init__(self, arrays: dict) -> None:
        super().__init__({"math_macros": {}})
        self._arrays = arrays

    def _print_Symbol(self, expr):
        hit = self._arrays.get(expr)
        return hit if hit is not None else super()._print_Symbol(expr)


class _CPrinter(_ArrayPrinter):
    """C99 with the joint arrays indexed from 0 and integer powers as products."""

    def _print_Pow(self, expr):
        b, e = expr.base, expr.exp
        if e.is_Integer and 2 <= int(e) <= 4:
            inner = self.parenthesize(b, 100)
            return "*".join([inner] * int(e))
        return super()._print_Pow(expr)


class _STPrinter(_ArrayPrinter):
    """IEC 61131-3 Structured Text expressions: LREAL literals, SIN/COS/EXP/SQRT, 1-based arrays."""

    _functions = {"sin": "SIN", "cos": "COS", "exp": "EXP", "sqrt": "SQRT", "Abs": "ABS", "tan": "TAN",
                  "atan": "ATAN", "log": "LN", "asin": "ASIN", "acos": "ACOS"}

    def _print_Function(self, expr):
        name = self._functions.get(type(expr).__name__)
        if name is None:
            raise ConfigError(f"no Structured Text function for {type(expr).__name__}")
        return f"{name}({', '.join(self._print(a) for a in expr.args)})"

    _print_sin = _print_cos = _print_exp = _print_tan = _print_Function

    def _print_Pow(self, expr):
        b, e = expr.base, expr.exp
        if e.is_Integer and 1 <= abs(int(e)) <= 4:
            inner = "*".join([self.parenthesize(b, 100)] * abs(int(e)))
            return inner if int(e) > 0 else f"1.0/({inner})"
        if e == sp.Rational(1, 2):
            return f"SQRT({self._print(b)})"
        return f"EXPT({self._print(b)}, {self._print(e)})"

    def _print_Integer(self, expr):
        return f"{int(expr)}.0"

    def _print_Rational(self, expr):
        return f"({expr.p}.0/{expr.q}.0)"

    def _print_Float(self, expr):
        return st_real(float(expr))


def st_real(x: float) -> str:
    """An LREAL literal (IEC 61131-3 needs the decimal point: ``1.0E-05``, ``2.0``)."""
    text = repr(float(x))
    mant, _, exp = text.partition("e")
    if "." not in mant:
        mant += ".0"
    return mant + ("E" + exp if exp else "")


def _header_comment(fitted, ops: int, reps: int) -> list[str]:
    model = fitted.model
    return [f"generated by dynid {__version__} from an identified '{model.name}' model ({model.n_joints} joints)",
            "tau = rigid body (identified parameters, payload) + friction/actuator terms; joint side, SI",
            "inputs q [rad, m], dq [rad/s, m/s], ddq [rad/s^2, m/s^2]; outputs tau [N m, N]",
            f"friction model: {fitted.plant.friction.spec}; {reps} common sub-expressions, {ops} operations"]


def generate_code(fitted, lang: str, *, name: str = "dynid_model",
                  progress: Callable[[str, float], None] | None = None) -> GeneratedCode:
    """Source code of ``fitted``'s torque in ``lang`` (module docstring); ``progress(stage, fraction)`` is
    called as it goes (the symbolic torque, then the common sub-expressions and the printing).

    Raises
    ------
    ConfigError
        An unknown language, a ``name`` that is no identifier (:func:`check_name`), or a model without a geometric
        derivation.
    InputDataError
        A parameter is NaN or infinite.
    """
    if lang not in LANGUAGES:
        raise ConfigError(f"language must be one of {', '.join(LANGUAGES)}, got {lang!r}", options=("lang",))
    check_name(name)
    _check_finite(fitted)
    t0 = time.perf_counter()
    step = progress or (lambda stage, fraction: None)
    step("the symbolic torque", 0.0)
    q, dq, ddq, rigid, friction = torque_expressions(fitted)
    step(f"common sub-expressions and {lang} source", 0.4)
    tau = [r + f for r, f in zip(rigid, friction)]
    n = len(tau)
    notes = []
    if lang == "c":
        files, ops, nrep = _c_files(fitted, q, dq, ddq, tau, name, rigid)
    elif lang == "st":
        files, ops, nrep = _st_files(fitted, q, dq, ddq, tau, name)
    else:
        files, ops, nrep = _py_files(fitted, q, dq, ddq, tau, name)
    step("generated", 1.0)
    return GeneratedCode(lang, files, n, ops, nrep, time.perf_counter() - t0, notes)


# ------------------------------------------------------------------------------------------ C

def _c_body(q, dq, ddq, tau, out: str, indent: str = "    "):
    arrays = {s: f"{a}[{i}]" for a, syms in (("q", q), ("dq", dq), ("ddq", ddq)) for i, s in enumerate(syms)}
    pr = _CPrinter(arrays)
    reps, reduced, ops = _cse(tau)
    lines = [f"{indent}const double {pr._print(s)} = {pr.doprint(e)};" for s, e in reps]
    lines += [f"{indent}{out}[{i}] = {pr.doprint(e)};" for i, e in enumerate(reduced)]
    return lines, ops, len(reps)


def _c_files(fitted, q, dq, ddq, tau, name, rigid):
    body, ops, nrep = _c_body(q, dq, ddq, tau, "tau")
    rbody, _, _ = _c_body(q, dq, ddq, rigid, "tau")
    n = len(tau)
    head = _header_comment(fitted, ops, nrep)
    guard = f"{name.upper()}_H"
    h = ["/* " + line + " */" for line in head] + [
        f"#ifndef {guard}", f"#define {guard}", "", f"#define DYNID_N_JOINTS {n}", "",
        "/* tau[0..n-1] = model torque for q, dq, ddq (arrays of DYNID_N_JOINTS values); no allocation, no state */",
        "void dynid_torque(const double *q, const double *dq, const double *ddq, double *tau);",
        "/* the same without friction and actuator terms (rigid body + payload) */",
        "void dynid_rigid_body_torque(const double *q, const double *dq, const double *ddq, double *tau);",
        "", f"#endif /* {guard} */", ""]
    c = ["/* " + line + " */" for line in head] + [
        "#include <math.h>", f'#include "{name}.h"', "",
        "void dynid_torque(const double *q, const double *dq, const double *ddq, double *tau)", "{",
        "    (void)q; (void)dq; (void)ddq;", *body, "}", "",
        "void dynid_rigid_body_torque(const double *q, const double *dq, const double *ddq, double *tau)", "{",
        "    (void)q; (void)dq; (void)ddq;", *rbody, "}", ""]
    return {f"{name}.c": "\n".join(c), f"{name}.h": "\n".join(h)}, ops, nrep


# ------------------------------------------------------------------------------------------ ST

def _st_files(fitted, q, dq, ddq, tau, name):
    n = len(tau)
    tau, signs = _signs(tau)
    arrays = {s: f"{a}[{i + 1}]" for a, syms in (("q", q), ("dq", dq), ("ddq", ddq)) for i, s in enumerate(syms)}
    pr = _STPrinter(arrays)
    reps, reduced, ops = _cse(tau)
    head = _header_comment(fitted, ops, len(reps))
    lines = ["(* " + line + " *)" for line in head] + [
        "FUNCTION_BLOCK DYNID_TORQUE", "VAR_INPUT", f"    q : ARRAY[1..{n}] OF LREAL;",
        f"    dq : ARRAY[1..{n}] OF LREAL;", f"    ddq : ARRAY[1..{n}] OF LREAL;", "END_VAR", "VAR_OUTPUT",
        f"    tau : ARRAY[1..{n}] OF LREAL;", "END_VAR", "VAR"]
    lines += [f"    {s} : LREAL;" for s, _ in signs] + [f"    {s} : LREAL;" for s, _ in reps] + ["END_VAR"]
    for s, arg in signs:   # sign(x): 1, -1 or 0
        a = pr.doprint(arg)
        lines += [f"IF {a} > 0.0 THEN", f"    {s} := 1.0;", f"ELSIF {a} < 0.0 THEN", f"    {s} := -1.0;", "ELSE",
                  f"    {s} := 0.0;", "END_IF;"]
    lines += [f"{s} := {pr.doprint(e)};" for s, e in reps]
    lines += [f"tau[{i + 1}] := {pr.doprint(e)};" for i, e in enumerate(reduced)]
    lines += ["END_FUNCTION_BLOCK", ""]
    return {f"{name}.st": "\n".join(lines)}, ops, len(reps)


# ------------------------------------------------------------------------------------------ Python

def _py_files(fitted, q, dq, ddq, tau, name):
    n = len(tau)
    arrays = {s: f"{a}[..., {i}]" for a, syms in (("q", q), ("dq", dq), ("ddq", ddq)) for i, s in enumerate(syms)}

    class _Printer(NumPyPrinter):
        def _print_Symbol(self, expr):
            hit = arrays.get(expr)
            return hit if hit is not None else super()._print_Symbol(expr)

    pr = _Printer({"fully_qualified_modules": True})
    reps, reduced, ops = _cse(tau)
    head = _header_comment(fitted, ops, len(reps))
    lines = ['"""' + head[0] + ".", "", *head[1:], "", "torque(q, dq, ddq): arrays (n,) or (N, n), n = "
             f"{n}; returns tau of the same shape.", '"""', "", "import numpy", "", f"N_JOINTS = {n}", "", "",
             "def torque(q, dq, ddq):",
             '    """Model torque [N m or N] for positions, velocities, accelerations (SI, joint side)."""',
             "    q = numpy.asarray(q, dtype=float)", "    dq = numpy.asarray(dq, dtype=float)",
             "    ddq = numpy.asarray(ddq, dtype=float)",
             "    tau = numpy.empty(numpy.broadcast_shapes(q.shape, dq.shape, ddq.shape))"]
    lines += [f"    {s} = {pr.doprint(e)}" for s, e in reps]
    lines += [f"    tau[..., {i}] = {pr.doprint(e)}" for i, e in enumerate(reduced)]
    lines += ["    return tau", ""]
    return {f"{name}.py": "\n".join(lines)}, ops, len(reps)


# ------------------------------------------------------------------------------------------ runtime

def _compiler() -> str | None:
    for cc in (os.environ.get("CC"), "cc", "gcc", "clang"):
        if cc and shutil.which(cc):
            return cc
    return None


class GeneratedDynamics:
    """The generated C of an identified model, compiled with the system compiler and called through ctypes:
    a :class:`~dynid.runtime._compiled.RigidBodyDynamics` for :class:`dynid.runtime.FeedForward`
    (``dynamics=GeneratedDynamics.from_fitted(model)``; the feed-forward adds friction itself).

    Raises
    ------
    DynidError
        No C compiler (``cc``, ``gcc``, ``clang`` or ``$CC``), or compilation failed.
    """

    kind = "generated C (dynid codegen)"

    def __init__(self, code: GeneratedCode, n_joints: int) -> None:
        cc = _compiler()
        if cc is None:
            raise DynidError("compiling the generated C needs a C compiler (cc, gcc or clang), and none was found",
                             hint="install one (e.g. apt-get install gcc) or set CC")
        source = code.files
        digest = hashlib.sha256("".join(source[k] for k in sorted(source)).encode()).hexdigest()[:16]
        root = Path(tempfile.gettempdir()) / f"dynid-codegen-{digest}"
        lib = root / "libdynid_model.so"
        if not lib.is_file():
            root.mkdir(parents=True, exist_ok=True)
            code.write(root)
            c_file = next(root / k for k in source if k.endswith(".c"))
            tmp = root / f"lib-{os.getpid()}.so"
            proc = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-std=c99", str(c_file), "-o", str(tmp), "-lm"],
                                  capture_output=True, text=True)
            if proc.returncode != 0:
                raise DynidError(f"compiling the generated C failed: {proc.stderr.strip()[:500]}")
            os.replace(tmp, lib)
        self._lib = ctypes.CDLL(str(lib))
        for fn in (self._lib.dynid_torque, self._lib.dynid_rigid_body_torque):
            fn.argtypes = [ctypes.c_void_p] * 4       # raw addresses: the cheapest call ctypes makes
            fn.restype = None
        self._rigid = self._lib.dynid_rigid_body_torque
        self._full = self._lib.dynid_torque
        self.n_joints = int(n_joints)
        self.library = lib

    @classmethod
    def from_fitted(cls, fitted) -> "GeneratedDynamics":
        return cls(generate_code(fitted, "c"), fitted.model.n_joints)

    def new_workspace(self):
        n = self.n_joints
        ws = {k: np.zeros(n) for k in ("zero", "e", "g0", "col", "q", "qd", "qdd", "out")}
        ws["addr"] = tuple(ws[k].ctypes.data for k in ("q", "qd", "qdd", "out"))
        return ws

    def _call(self, fn, ws, q, qd, qdd, out) -> None:
        np.copyto(ws["q"], q)                  # contiguous float64 buffers made once: no allocation per call
        np.copyto(ws["qd"], qd)
        np.copyto(ws["qdd"], qdd)
        fn(*ws["addr"])
        np.copyto(out, ws["out"])

    def torque_into(self, ws, q, qd, qdd, out) -> None:
        self._call(self._rigid, ws, q, qd, qdd, out)

    def full_torque_into(self, ws, q, qd, qdd, out) -> None:
        """Rigid body + friction (the whole ``dynid_torque``)."""
        self._call(self._full, ws, q, qd, qdd, out)

    def mass_bias_into(self, ws, q, qd, M, h) -> None:
        self._call(self._rigid, ws, q, qd, ws["zero"], h)
        g0, col, e = ws["g0"], ws["col"], ws["e"]
        self._call(self._rigid, ws, q, ws["zero"], ws["zero"], g0)
        for j in range(self.n_joints):   # columns from unit accelerations (n small calls)
            e.fill(0.0)
            e[j] = 1.0
            self._call(self._rigid, ws, q, ws["zero"], e, col)
            np.subtract(col, g0, out=M[:, j])
