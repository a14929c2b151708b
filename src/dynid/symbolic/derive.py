"""``dynid derive``: the closed-form model of a robot, by Lagrange or by Newton–Euler.

:func:`derive` turns a model's geometry into SymPy expressions in ``q1..qn``, ``dq1..dqn``,
``ddq1..ddqn``, the gravity ``g`` and the model's parameters ``p1..pP`` (in the order of its
``parameters``):

- torques ``τ``, the mass matrix ``M`` (``D_ij``), the velocity-product coefficients ``D_ijk`` (the
  lecture's form: ``τ_i = Σ_j D_ij q̈_j + Σ_jk D_ijk q̇_j q̇_k + D_i``, ``D_ijk = D_ikj``), the gravity
  terms ``D_i``, the regressor ``Y`` (``τ = Y p + offset``) and the base-parameter combinations;
- ``serial`` models (URDF, DH): the chain's ten standard parameters per link;
- catalogue models (single axes, traverse, SCARA): their physical chain
  (:mod:`dynid.symbolic.catalogue`), written back in the catalogue's parameters;
- ``numeric=True`` substitutes the parameter values (the URDF's inertias, or the configuration's
  ``parameters``), leaving ``q``, ``dq``, ``ddq`` and ``g``.

With Newton–Euler the velocity and mass-matrix terms are read off the torques (``M_ij = ∂τ_i/∂q̈_j``,
``D_ijk`` from ``q̇ = e_j + e_k``); with Lagrange they are the trace form's own (O(n⁴), slower). No
``simplify`` runs on whole matrices: the expressions are the derivations' own trees, and
:meth:`Derivation.to_markdown` prints them through ``sympy.cse``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np
import sympy as sp

from ..errors import ConfigError
from ._chain import SymbolicChain, clean_number
from .catalogue import catalogue_chain

__all__ = ["Derivation", "derive", "symbolic_torque", "trig_reduce", "METHODS"]

METHODS = ("newton-euler", "lagrange")


@dataclass(frozen=True)
class Derivation:
    """A derived closed-form model (module docstring). Expressions are SymPy; ``to_json`` prints them."""

    model: str
    method: str
    joints: tuple[str, ...]
    parameters: tuple[str, ...]
    q: list
    dq: list
    ddq: list
    g: sp.Symbol
    p: list
    tau: list
    mass_matrix: list
    coriolis: list
    gravity: list
    regressor: list
    base_parameters: list
    numeric: bool
    geometry: str = ""
    notes: list = field(default_factory=list)
    time_s: float = 0.0

    @property
    def n_joints(self) -> int:
        return len(self.joints)

    def to_json(self, progress: Callable[[str, float], None] | None = None) -> dict[str, Any]:
        """Strings SymPy parses (``dynid derive --json``), plus the D_ijk, the regressor and what the symbols are.

        ``progress(stage, fraction)`` is called as the expressions are printed (a 6-joint arm's take minutes;
        the fraction counts their tree nodes)."""
        n = self.n_joints
        groups = {"torques": list(self.tau), "mass matrix": list(_flat(self.mass_matrix)),
                  "gravity terms": list(self.gravity), "base parameters": list(self.base_parameters),
                  "velocity products": list(_flat(self.coriolis)), "regressor": list(_flat(self.regressor or []))}
        sizes = _tree_sizes(groups)
        for big in ("velocity products", "regressor"):   # left out above PRINT_LIMIT nodes
            if sum(sizes[big]) > PRINT_LIMIT:
                groups[big] = sizes[big] = None
        text = _print_all(groups, sizes, progress)
        cols = len(self.regressor[0]) if self.regressor else 0
        return {
            "joints": n,
            "parameters": list(self.parameters),
            "tau": text["torques"],
            "mass_matrix": _rows(text["mass matrix"], n),
            "gravity": text["gravity terms"],
            "base_parameters": text["base parameters"],
            "coriolis": None if text["velocity products"] is None else
            [_rows(text["velocity products"][i * n * n:(i + 1) * n * n], n) for i in range(n)],
            "regressor": None if text["regressor"] is None else _rows(text["regressor"], cols),
            "model": self.model, "method": self.method, "numeric": self.numeric,
            "symbols": {"q": [str(x) for x in self.q], "dq": [str(x) for x in self.dq],
                        "ddq": [str(x) for x in self.ddq], "g": "g",
                        "p": {str(sym): name for sym, name in zip(self.p, self.parameters)}},
            "joint_names": list(self.joints), "geometry": self.geometry, "notes": list(self.notes),
            "time_s": self.time_s,
        }

    def to_markdown(self, progress: Callable[[str, float], None] | None = None) -> str:
        """The derivation for people: symbols, then each quantity as LaTeX, long ones through common
        sub-expressions (``sympy.cse``); ``progress(stage, fraction)`` is called per section."""
        step = progress or (lambda stage, fraction: None)
        lines = [f"# {self.model}: closed-form dynamic model ({self.method})", ""]
        if self.geometry:
            lines += [f"Geometry: {self.geometry}.", ""]
        lines += ["Symbols: joint positions $q_i$, velocities $\\dot q_i$ (`dq`), accelerations $\\ddot q_i$ (`ddq`), "
                  "gravity $g$; parameters:", ""]
        lines += [f"- $p_{{{k + 1}}}$ = `{name}`" for k, name in enumerate(self.parameters)]
        if self.numeric:
            lines += ["", "Parameter values substituted (`--numeric`)."]
        lines += ["", "$\\tau_i = \\sum_j D_{ij} \\ddot q_j + \\sum_{j,k} D_{ijk} \\dot q_j \\dot q_k + D_i$", ""]
        step("the mass matrix", 0.0)
        lines += _block("Mass matrix $D_{ij}$", {f"D_{{{i + 1}{j + 1}}}": e for i, row in enumerate(self.mass_matrix)
                                                for j, e in enumerate(row) if j >= i})
        step("the velocity products", 0.2)
        lines += _block("Velocity products $D_{ijk}$ (non-zero, $j \\le k$)",
                        {f"D_{{{i + 1}{j + 1}{k + 1}}}": e for i, mat in enumerate(self.coriolis)
                         for j, row in enumerate(mat) for k, e in enumerate(row) if k >= j and e != 0})
        step("the gravity terms", 0.4)
        lines += _block("Gravity $D_i$", {f"D_{{{i + 1}}}": e for i, e in enumerate(self.gravity)})
        step("the torques", 0.5)
        lines += _block("Torques", {f"\\tau_{{{i + 1}}}": e for i, e in enumerate(self.tau)})
        step("the regressor", 0.7)
        lines += _block("Regressor $Y_{ik}$ (non-zero), $\\tau = Y p$",
                        {f"Y_{{{i + 1},{k + 1}}}": e for i, row in enumerate(self.regressor) for k, e in enumerate(row)
                         if e != 0})
        step("the base parameters", 0.95)
        lines += ["## Base parameters", ""] + [f"- $\\beta_{{{k + 1}}} = {sp.latex(e)}$"
                                                for k, e in enumerate(self.base_parameters)]
        if self.notes:
            lines += ["", "## Notes", ""] + [f"- {n}" for n in self.notes]
        lines += ["", f"Derived in {self.time_s:.2f} s."]
        return "\n".join(lines) + "\n"


def tree_size(exprs) -> int:
    """Nodes of the expressions printed as trees (shared branches counted each time, as a printer does);
    computed over the distinct sub-trees, so it costs little even where printing would cost minutes."""
    return sum(_tree_sizes({"": list(exprs)})[""])


def _tree_sizes(groups: dict) -> dict:
    """:func:`tree_size` of each expression of each group (``{name: list}``), one memo for them all."""
    memo: dict = {}

    def size(e) -> int:
        hit = memo.get(e)
        if hit is None:
            hit = memo[e] = 1 + sum(size(a) for a in e.args)
        return hit

    return {name: [size(sp.sympify(e)) for e in exprs] for name, exprs in groups.items()}


def _print_all(groups: dict, sizes: dict, progress: Callable[[str, float], None] | None) -> dict:
    """``str`` of every expression of every group (None stays None), reporting the printed share of the nodes."""
    total = max(sum(sum(v) for v in sizes.values() if v is not None), 1)
    done = 0
    out: dict = {}
    for name, exprs in groups.items():
        if exprs is None:
            out[name] = None
            continue
        out[name] = []
        for e, k in zip(exprs, sizes[name]):
            if progress is not None:
                progress(f"printing the {name}", done / total)
            out[name].append(str(e))
            done += k
    if progress is not None:
        progress("printed", 1.0)
    return out


def _rows(items: list, width: int) -> list:
    return [items[k:k + width] for k in range(0, len(items), width)] if width else []


PRINT_LIMIT = 400_000
"""Tree nodes above which the D_ijk and the regressor are left out of ``to_json`` (a 6-joint arm's run to
tens of MB of text; ``to_markdown`` prints them through common sub-expressions instead)."""


def _block(title: str, named: dict) -> list[str]:
    """A Markdown section: small entries as equations, large ones through shared sub-expressions."""
    out = [f"## {title}", ""]
    if not named:
        return out + ["(none)", ""]
    exprs = list(named.values())
    if tree_size(exprs) <= 400:
        return out + [f"$$ {k} = {sp.latex(e)} $$" for k, e in named.items()] + [""]
    reps, reduced = sp.cse(exprs, symbols=sp.numbered_symbols("x"))
    out += ["with"] + [f"$$ {sp.latex(s)} = {sp.latex(e)} $$" for s, e in reps]
    return out + [f"$$ {k} = {sp.latex(e)} $$" for k, e in zip(named, reduced)] + [""]


# ------------------------------------------------------------------------------------------ the torque

def _serial_chain(model, params: list, g: sp.Symbol) -> SymbolicChain:
    from ..models._urdf import chain_elements

    els, C, offset, _ = chain_elements(model.chain)
    nb = len(els)
    body = [list(params[10 * b:10 * b + 10]) for b in range(nb)]
    if model._payload_pi is not None:   # the payload is known: its parameters ride on the last link
        body[-1] = [x + sp.Float(v) for x, v in zip(body[-1], model._payload_pi)]
    direction = np.asarray(model._gravity_vec, dtype=float) / model.gravity
    return SymbolicChain([e.kind for e in els], [e.pre for e in els], [e.post for e in els], [e.axis for e in els],
                         body, [g * clean_number(x) for x in direction], C, offset)


def symbolic_torque(model, params: list, g: sp.Symbol, method: str = "newton-euler", *, regressor: bool = True):
    """``(τ, Y, terms, symbols, geometry)`` of ``model`` with parameters ``params`` (SymPy, in the model's order).

    ``Y`` is the regressor in the model's parameters (``τ = Y p + offset``; None for a serial chain when not
    ``regressor``); ``terms`` the Lagrange terms
    of a ``serial`` chain (``method="lagrange"``) or None; ``symbols`` is ``(q, dq, ddq)``.

    Raises
    ------
    ConfigError
        A model dynid has no geometric derivation for.
    """
    if method not in METHODS:
        raise ConfigError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    if model.name == "serial":
        if getattr(model, "counterbalances", ()):
            raise ConfigError("dynid derive has no symbolic form of the serial model's counterbalance cylinders",
                              hint="remove 'counterbalance' from the configuration to derive the rigid-body model")
        chain = _serial_chain(model, params, g)
        Y = chain.regressor() if regressor else None
        geometry = f"serial chain '{model.chain.get('robot', 'robot')}', {chain.n_bodies} moving links"
        terms = chain.lagrange() if method == "lagrange" else None
        tau = terms.tau if terms is not None else chain.newton_euler()
        return tau, Y, terms, (chain.q, chain.dq, chain.ddq), geometry
    cat = catalogue_chain(model, g)
    if cat is None:
        from .catalogue import CATALOGUE_CHAINS

        raise ConfigError(f"dynid derive has no geometric derivation of model {model.name!r}",
                          hint="it derives 'serial' (URDF or DH) and the catalogue models "
                               + ", ".join(CATALOGUE_CHAINS) + " from their geometry")
    Y, offset = _catalogue_regressor(cat, model, g, method)
    tau = [off + sp.Add(*[y * pk for y, pk in zip(row, params)]) for off, row in zip(offset, Y)]
    ch = cat.chain
    return tau, Y, None, (ch.q, ch.dq, ch.ddq), cat.geometry


def _monomials(expr: sp.Expr, gens: list) -> dict:
    """``{monomial: coefficient}`` of ``expr`` as a polynomial in ``gens`` (coefficients: anything else)."""
    expr = sp.expand(expr)
    if not gens:
        return {sp.Integer(1): expr}
    poly = sp.Poly(expr, *gens)
    return {sp.Mul(*[gk**e for gk, e in zip(gens, mon)]): c for mon, c in poly.terms()}


def _catalogue_regressor(cat, model, g, method: str):
    """The catalogue's regressor ``(n × P)`` and offset ``(n,)`` from its physical chain: the torques as
    polynomials in the physical symbols (and ``g``), matched monomial by monomial with the catalogue
    parameters' definitions; what no physical symbol multiplies (the known payload) is the offset."""
    tau = cat.chain.lagrange().tau if method == "lagrange" else cat.chain.newton_euler()
    gens = list(cat.physical) + [g]
    names = list(cat.definitions)
    defs = [_monomials(cat.definitions[nm], gens) for nm in names]
    covered = set().union(*[d.keys() for d in defs])
    rows, offset = [], []
    for i, t in enumerate(tau):
        c = _monomials(t, gens)
        offset.append(sp.expand(sum((v * k for k, v in c.items() if not k.free_symbols & set(cat.physical)),
                                    sp.Integer(0))))
        c = {k: v for k, v in c.items() if k.free_symbols & set(cat.physical)}
        for mono in list(c):                             # g·X where only X is a parameter (linear3: M (x'' + g))
            if mono not in covered and mono.has(g):
                base = sp.expand(mono / g)
                if base in covered:
                    c[base] = c.get(base, 0) + g * c.pop(mono)
        monos = sorted(set(c) | covered, key=sp.default_sort_key)
        A = sp.Matrix([[d.get(m, 0) for d in defs] for m in monos])
        b = sp.Matrix([c.get(m, 0) for m in monos])
        y = _solve_split(A, b, g)
        if y is None:
            raise ConfigError(f"model {model.name}: the catalogue's parameters do not describe its physical chain "
                              f"(joint {i + 1})")   # pragma: no cover - a defect of the catalogue tables
        rows.append([sp.expand(v) for v in y] + [sp.Integer(0)] * (model.n_params - len(names)))
    return rows, offset


def _solve_split(A: sp.Matrix, b: sp.Matrix, g: sp.Symbol):
    """``A y = b``; where a parameter and its ``g``-multiple share a monomial (SCARA's M3 and g·M3), the
    terms of ``b`` proportional to ``g`` go to the parameter whose definition carries ``g``."""
    try:
        sol, free = A.gauss_jordan_solve(b)
    except ValueError:
        return None
    if free.shape[0] == 0:
        return sol
    # the null space is spanned by pairs (p, g p): put each b's g-part on the g-parameter
    y = sol.subs({f: 0 for f in free})
    n = A.shape[1]
    for k in range(n):
        col = A[:, k]
        if not any(x.has(g) for x in col):
            continue
        for j in range(n):
            if j != k and sp.simplify(col - g * A[:, j]) == sp.zeros(*col.shape):
                total = sp.expand(y[j] + g * y[k])
                gpart = sp.expand(total.coeff(g, 1))
                y[k] = gpart
                y[j] = sp.expand(total - g * gpart)
    return y


# ------------------------------------------------------------------------------------------ derive

def derive(model, *, method: str = "newton-euler", numeric: bool = False,
           progress: Callable[[str, float], None] | None = None) -> Derivation:
    """Derive the closed-form model of ``model`` (module docstring).

    Parameters
    ----------
    model : DynamicModel
        ``serial`` (URDF/DH) or a catalogue model with a physical chain.
    method : {"newton-euler", "lagrange"}
    numeric : bool
        Substitute the parameter values: a URDF's (or DH ``links``) inertias, else the configuration's
        ``parameters``.
    progress : callable(stage, fraction), optional
        Called as the derivation goes (the torques, the terms read off them, the base parameters).

    Raises
    ------
    ConfigError
        A model without a geometric derivation; ``numeric`` without values for every parameter.
    """
    t0 = time.perf_counter()
    step = progress or (lambda stage, fraction: None)
    n, P = model.n_joints, model.n_params
    g = sp.Symbol("g", positive=True)
    p = [sp.Symbol(f"p{k + 1}", real=True) for k in range(P)]
    step(f"torques ({method})", 0.0)
    tau, Y, terms, (q, dq, ddq), geometry = symbolic_torque(model, p, g, method)
    step("torques derived", 0.4)
    notes = []
    values = None
    if numeric:
        values = _parameter_values(model)
        sub = dict(zip(p, [_number(v) for v in values]))
        tau = substitute(tau, sub)
        if terms is not None:
            n = len(tau)
            flat = substitute([e for r in terms.D for e in r] + [e for m in terms.C for r in m for e in r] + list(terms.G),
                              sub)
            D = [flat[i * n:(i + 1) * n] for i in range(n)]
            C = [[flat[n * n + (i * n + j) * n: n * n + (i * n + j + 1) * n] for j in range(n)] for i in range(n)]
            terms = type(terms)(D, C, flat[n * n + n**3:], tau)
    elif model.name != "serial":
        notes.append(f"catalogue parameters: p_k = {', '.join(model.param_names)}")
    if terms is not None:
        M, C, G = terms.D, terms.C, terms.G
    else:
        M, C, G = _read_off(tau, q, dq, ddq, g, lambda stage, f: step(stage, 0.4 + 0.4 * f))
    step("base parameters", 0.8)
    every = [e for e in _flat([M, C, G, tau, Y])]
    if tree_size(every) <= TIDY_TOTAL:   # a small model: simplified entries read like a textbook's
        M, C, G, tau, Y = _tidy(M), _tidy(C), _tidy(G), _tidy(tau), _tidy(Y)
    base = _base_expressions(model, p)
    if method == "lagrange":
        notes.append("mass matrix, D_ijk and gravity are the trace form's own terms")
    else:
        notes.append("mass matrix, D_ijk and gravity read off the Newton-Euler torques")
    step("derived", 1.0)
    return Derivation(model.name, method, tuple(j.name for j in model.joints), model.param_names, q, dq, ddq, g, p,
                      tau, M, C, G, Y, base, numeric, geometry, notes, time.perf_counter() - t0)


def _number(v: float) -> sp.Expr:
    fr = Fraction(v).limit_denominator(10**6)
    return sp.Rational(fr.numerator, fr.denominator) if abs(float(fr) - v) <= 1e-15 * max(1.0, abs(v)) else sp.Float(v)


def _parameter_values(model) -> np.ndarray:
    prior = model.prior_parameters() if model.name == "serial" else None
    if prior is not None:
        return np.asarray(prior, dtype=float)
    known = model.config.parameters
    missing = [nm for nm, par in zip(model.param_names, model.parameters) if nm not in known and par.role != "constant"]
    if missing:
        raise ConfigError(f"numeric derivation needs a value for every parameter of model {model.name!r}; "
                          f"missing: {', '.join(missing)}",
                          hint="give them under 'parameters' in the configuration (or use a URDF with inertias)",
                          options=("config",))
    return np.array([float(known.get(nm, 0.0)) for nm in model.param_names])


TIDY_LIMIT = 600
TIDY_TOTAL = 8_000
"""A derivation whose outputs print as at most ``TIDY_TOTAL`` tree nodes has its entries of at most
``TIDY_LIMIT`` nodes simplified for reading (``sympy.simplify``); larger ones are left as derived
(simplifying large matrices is what makes symbolic tools stall)."""


def _flat(x):
    if isinstance(x, list):
        for e in x:
            yield from _flat(e)
    else:
        yield x


def _tidy(x):
    """``x`` (an expression or nested lists of them) with its small entries simplified."""
    if isinstance(x, list):
        return [_tidy(e) for e in x]
    if x == 0 or tree_size([x]) > TIDY_LIMIT:
        return x
    return sp.simplify(x)


def trig_reduce(expr: sp.Expr, q: list) -> sp.Expr:
    """``expr`` as a polynomial in ``sin q_i``, ``cos q_i`` (and everything else), reduced modulo
    ``sin² q_i + cos² q_i = 1``: a canonical form, zero exactly when ``expr`` is identically zero.
    Seconds where ``simplify``/``trigsimp`` of the same difference take minutes."""
    S = [sp.Dummy(f"s{i}") for i in range(len(q))]
    C = [sp.Dummy(f"c{i}") for i in range(len(q))]
    rep = {}
    for i, qi in enumerate(q):
        rep[sp.sin(qi)], rep[sp.cos(qi)] = S[i], C[i]
    e = sp.expand(sp.expand_trig(expr)).xreplace(rep)
    if e == 0:
        return sp.Integer(0)
    _, r = sp.reduced(e, [S[i] ** 2 + C[i] ** 2 - 1 for i in range(len(q))], *S, *C)
    back = {S[i]: sp.sin(qi) for i, qi in enumerate(q)} | {C[i]: sp.cos(qi) for i, qi in enumerate(q)}
    return sp.expand(r).xreplace(back)


def substitute(exprs: list, mapping: dict) -> list:
    """``xreplace`` over a list of expressions sharing sub-trees, each distinct sub-tree rebuilt once
    (SymPy's own walks every path of a tree with shared branches: minutes instead of seconds for a
    6-joint arm)."""
    memo: dict = {}

    def walk(e):
        hit = memo.get(e)
        if hit is not None:
            return hit
        if e in mapping:
            out = sp.sympify(mapping[e])
        elif not e.args:
            out = e
        else:
            args = [walk(a) for a in e.args]
            out = e if all(a is b for a, b in zip(args, e.args)) else e.func(*args)
        memo[e] = out
        return out

    return [walk(sp.sympify(e)) for e in exprs]


def _read_off(tau, q, dq, ddq, g, progress: Callable[[str, float], None]):
    """Mass matrix, ``D_ijk`` and gravity terms from the torques by substitution (affine in q̈, quadratic in
    q̇): differences against the torque at rest, so parameters that carry ``g`` themselves (a catalogue's
    ``g*M3``) stay in the gravity terms. ``progress`` counts the substitutions."""
    n = len(tau)
    za = {x: 0 for x in ddq}
    rest = substitute(tau, {**{x: 0 for x in dq}, **za})
    planned, done = 2 * n + n * (n - 1) // 2, [0]

    def at(vel: dict, acc: dict) -> list:
        progress("reading off the mass matrix and velocity terms", done[0] / planned)
        done[0] += 1
        return [e - r for e, r in zip(substitute(tau, {**{x: vel.get(k, 0) for k, x in enumerate(dq)},
                                                       **{x: acc.get(k, 0) for k, x in enumerate(ddq)}}), rest)]

    M = list(map(list, zip(*[at({}, {j: 1}) for j in range(n)])))
    single = [at({j: 1}, {}) for j in range(n)]
    C = [[[sp.Integer(0)] * n for _ in range(n)] for _ in range(n)]
    for j in range(n):
        for i in range(n):
            C[i][j][j] = single[j][i]
        for k in range(j + 1, n):
            both = at({j: 1, k: 1}, {})
            for i in range(n):
                C[i][j][k] = C[i][k][j] = (both[i] - single[j][i] - single[k][i]) / 2
    return M, C, rest


def _base_expressions(model, p: list) -> list:
    """The model's structural base parameters as combinations of ``p1..pP`` (friction left out)."""
    from ..identification.base_params import find_base_parameters, preference_order

    rng = np.random.default_rng(0)
    qs, qds, qdds = model.sample_states(rng, 300)
    W = model.regressor(qs, qds, qdds).reshape(-1, model.n_params)
    roles = [par.role for par in model.parameters]
    base = find_base_parameters(W, model.param_names, preference_order(roles, model.param_names, model.prefer_dependent),
                                model.structural_rtol)
    out = []
    for b, i in enumerate(base.independent):
        e = p[i]
        for d, j in enumerate(base.dependent):
            c = float(base.K[b, d])
            if abs(c) > 1e-9:
                e = e + _number(c) * p[j]
        out.append(e)
    return out
