"""Base parameters: which parameter combinations a model can identify at all (spec/identification.md §9).

The regressor is evaluated on random states, and its columns are taken in a preference order
(model parameters before friction, payload coefficients last). A column is *independent* when it
is not a linear combination of the columns already kept (relative tolerance); the others are
*dependent*, with ``W_dep = W_ind @ K``. Then every torque is reproduced by the base parameters

    beta = theta[independent] + K @ theta[dependent]

and ``theta_full = to_full(beta, theta_dep)`` maps back to a consistent full set (dependent
parameters held at known values or 0). This is Gautier's QR method with a deterministic column
order instead of pivoting, so that the physically meaningful parameter is the one kept.

References
----------
M. Gautier, "Numerical calculation of the base inertial parameters of robots", J. Robotic Systems
8(4):485–506, 1991.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..errors import ConfigError, ShapeError

__all__ = ["BaseParameters", "find_base_parameters", "structural_base", "format_combination", "Confounding",
           "confounded_groups", "CONFOUNDED_RTOL", "CONFOUNDED_WEIGHT"]

CONFOUNDED_RTOL = 1e-3
"""Singular value / largest singular value of the unit-column regressor below which a direction is undetermined
(the parameters with weight in it are *confounded*; see the module docstring)."""
CONFOUNDED_WEIGHT = 0.05
"""Share ``sqrt(P_ii)`` of the undetermined directions from which a parameter belongs to a confounded group."""


@dataclass(frozen=True)
class BaseParameters:
    """Split of the columns into independent (base) and dependent ones.

    names : tuple of str, (n_cols,)
    independent : ndarray of int, (n_base,)
        Column indices kept, in preference order.
    dependent : ndarray of int, (n_dep,)
    K : ndarray, (n_base, n_dep)
        ``beta = theta[independent] + K @ theta[dependent]``.
    """

    names: tuple[str, ...]
    independent: np.ndarray
    dependent: np.ndarray
    K: np.ndarray

    @property
    def n_base(self) -> int:
        return int(self.independent.size)

    def base_values(self, theta) -> np.ndarray:
        theta = np.asarray(theta, dtype=float)
        return theta[self.independent] + self.K @ theta[self.dependent]

    def to_full(self, beta, theta_dep) -> np.ndarray:
        """Full parameter vector with the dependent parameters at ``theta_dep`` reproducing ``beta``."""
        theta = np.zeros(len(self.names))
        theta_dep = np.asarray(theta_dep, dtype=float)
        theta[self.dependent] = theta_dep
        theta[self.independent] = np.asarray(beta, dtype=float) - self.K @ theta_dep
        return theta

    def expressions(self, digits: int = 6) -> list[str]:
        """Readable definition of each base parameter, e.g. ``I + 0.25*L^2``."""
        return [format_combination(self.names[i], [(self.K[b, d], self.names[j]) for d, j in enumerate(self.dependent)],
                                   digits)
                for b, i in enumerate(self.independent)]


def format_combination(lead: str, terms: Sequence[tuple[float, str]], digits: int = 6) -> str:
    """``lead + c1*name1 - c2*name2`` with negligible coefficients dropped and simple ratios kept exact."""
    from fractions import Fraction              # (here: its import pulls in decimal, which an identification never needs)

    out = lead
    scale = max([1.0] + [abs(c) for c, _ in terms])
    for c, name in terms:
        if abs(c) <= 1e-9 * scale:
            continue
        sign = "-" if c < 0 else "+"
        a = abs(c)
        frac = Fraction(a).limit_denominator(64)
        if abs(float(frac) - a) <= 1e-9 * max(1.0, a):
            coef = "" if frac == 1 else (f"{frac.numerator}" if frac.denominator == 1 else f"{frac.numerator}/{frac.denominator}")
        else:
            coef = f"{a:.{digits}g}"
        out += f" {sign} {coef + '*' if coef else ''}{name}"
    return out


def find_base_parameters(W: np.ndarray, names: Sequence[str], order: Sequence[int] | None = None,
                         rtol: float | None = None) -> BaseParameters:
    """Independent columns of ``W`` taken greedily in ``order``.

    Parameters
    ----------
    W : ndarray, shape (n_rows, n_cols)
        Stacked regressor on random (or measured) states.
    names : sequence of str, (n_cols,)
    order : sequence of int, optional
        Preference order of the columns (default: as given).
    rtol : float, optional
        Relative tolerance on the distance of a unit-normalised column from the span of the kept
        ones. Default ``max(W.shape) * eps * sqrt(n_cols)`` (numpy ``matrix_rank``'s rule for unit columns).

    Returns
    -------
    BaseParameters
    """
    W = np.asarray(W, dtype=float)
    n_rows, n_cols = W.shape
    order = list(range(n_cols)) if order is None else list(order)
    if sorted(order) != list(range(n_cols)):
        raise ValueError("order must be a permutation of the column indices")
    if rtol is None:
        rtol = max(W.shape) * np.finfo(float).eps * np.sqrt(n_cols)
    norms = np.linalg.norm(W, axis=0)
    scale = norms.max() if n_cols else 1.0
    basis = np.empty((n_cols, n_rows))          # the orthonormal vectors kept, one per row (no copy as it grows)
    independent: list[int] = []
    for j in order:
        # a column that is zero everywhere (relative to the largest) is dependent (K = 0)
        if norms[j] <= rtol * scale or norms[j] == 0.0:
            continue
        v = W[:, j] / norms[j]
        B = basis[: len(independent)]
        for _ in range(2):  # Gram-Schmidt, twice for orthogonality
            v = v - (B @ v) @ B
        r = np.linalg.norm(v)
        if r > rtol * 10.0:
            basis[len(independent)] = v / r
            independent.append(j)
    dependent = [j for j in range(n_cols) if j not in independent]
    if dependent and independent:
        K, *_ = np.linalg.lstsq(W[:, independent], W[:, dependent], rcond=None)
    else:
        K = np.zeros((len(independent), len(dependent)))
    return BaseParameters(tuple(names), np.array(independent, dtype=int), np.array(dependent, dtype=int), K)


def preference_order(roles: Sequence[str], names: Sequence[str] = (), held_first: Sequence[str] = ()) -> list[int]:
    """Dynamic parameters first, then friction, then payload coefficients, constants last; within
    the dynamic ones, those named in ``held_first`` go after the others (they become dependent)."""
    rank = {"dynamic": 0, "friction": 1, "payload": 2, "constant": 3}
    held = set(held_first)
    return sorted(range(len(roles)), key=lambda i: (rank[roles[i]], names[i] in held if names else False, i))


def structural_base(plant, *, n_states: int = 400, seed: int = 0, exclude: Sequence[int] = ()) -> BaseParameters:
    """Base parameters of a :class:`~dynid.models.Plant` from random states (data independent).

    Columns in ``exclude`` (known, fixed parameters) are forced dependent with K = 0: their
    contribution is subtracted from the torque before fitting.
    """
    rng = np.random.default_rng(seed)
    q, qd, qdd = plant.model.sample_states(rng, n_states)
    W = plant.regressor(q, qd, qdd).reshape(-1, plant.n_params)
    W = W.copy()
    if len(exclude):
        W[:, list(exclude)] = 0.0
    order = preference_order(plant.param_roles, plant.param_names, plant.model.prefer_dependent)
    # an identification analyses the same plant more than once (ahead of the selection, the selection, the final
    # fit): the same matrix, the same answer, remembered by the matrix's content (a few recent ones); an analysis
    # under way on another thread is waited for, not repeated
    key = (hash(W.tobytes()), float(W.sum()), W.shape, tuple(plant.param_names), tuple(order), plant.model.structural_rtol)
    with _RECENT_LOCK:
        entry = _RECENT.get(key)
        mine = entry is None
        if mine:
            entry = _RECENT[key] = Future()
            while len(_RECENT) > 8:
                _RECENT.pop(next(iter(_RECENT)))
    if not mine:
        return entry.result()
    try:
        found = find_base_parameters(W, plant.param_names, order, plant.model.structural_rtol)
    except BaseException as err:
        with _RECENT_LOCK:
            _RECENT.pop(key, None)
        entry.set_exception(err)
        raise
    for a in (found.independent, found.dependent, found.K):       # shared from now on: nobody changes it
        a.flags.writeable = False
    entry.set_result(found)
    return found


_RECENT: dict = {}
_RECENT_LOCK = threading.Lock()


def join_names(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _term(name: str) -> str:
    """A parameter name as a term: bracketed when it is itself a sum (``(A2^2*M2+I2)``)."""
    return f"({name})" if any(ch in name for ch in "+- ") else name


def _format_combination(lead: str, terms: Sequence[tuple[float, str]]) -> str:
    """``lead - 39.48*M + 2*X``: 4 significant digits, a coefficient of 1 left out."""
    out = _term(lead)
    for c, name in terms:
        coef = f"{abs(c):.4g}"
        out += f" {'-' if c < 0 else '+'} {'' if coef == '1' else coef + '*'}{_term(name)}"
    return out


@dataclass(frozen=True, eq=False)
class Confounding:
    """A group of parameters a motion cannot separate (see :func:`confounded_groups`).

    Attributes
    ----------
    parameters : tuple of str, (k,)
        The confounded parameters, in column order.
    combinations : tuple of str, (k - m,)
        The combinations of them the motion does determine, e.g. ``"K - 39.48*M"``: each normalised so its
        first parameter has coefficient 1 (4 significant digits, in the parameters' own units; a name that
        is itself a sum is bracketed). Empty when none of them is determined (*not excited*).
    null_vectors : ndarray, (k, m)
        Orthonormal basis (in the parameters' own units, over ``parameters``) of the undetermined
        directions: adding any multiple of a column to these parameters leaves the torque unchanged.
    indices : tuple of int, (k,)
        Column index of each parameter in the analysed matrix.
    relative_singular_values : tuple of float, (m,)
        The ``m`` smallest singular values of the group's unit-norm columns / the largest of the whole matrix.
    remedy : str
        What would separate them (filled by the caller that knows the motion; "" from :func:`confounded_groups`).
    """

    parameters: tuple[str, ...]
    combinations: tuple[str, ...]
    null_vectors: np.ndarray
    indices: tuple[int, ...]
    relative_singular_values: tuple[float, ...]
    remedy: str = ""

    @property
    def not_excited(self) -> bool:
        """None of the group's parameters is determined (e.g. a zero regressor column)."""
        return not self.combinations

    @property
    def text(self) -> str:
        """``"M and K are confounded: this motion determines them only as K - 39.48*M"``."""
        who = join_names(self.parameters)
        if self.not_excited:
            verb = "is" if len(self.parameters) == 1 else "are"
            return f"{who} {verb} not excited by this motion (not identifiable)"
        return f"{who} are confounded: this motion determines them only as {join_names(self.combinations)}"

    @property
    def reason(self) -> str:
        """:attr:`text` with the :attr:`remedy`."""
        return self.text + (f"; {self.remedy}" if self.remedy else "")

    def to_dict(self) -> dict:
        return {"parameters": list(self.parameters),
                "combination": join_names(self.combinations) if self.combinations else None,
                "combinations": list(self.combinations), "remedy": self.remedy or None, "not_excited": self.not_excited,
                "relative_singular_values": list(self.relative_singular_values)}


def confounded_groups(Y, names: Sequence[str], tol: float = CONFOUNDED_RTOL, *,
                      weight: float = CONFOUNDED_WEIGHT) -> list[Confounding]:
    """Groups of columns of a regressor that the data cannot separate, and what it determines of them.

    The columns are scaled to unit norm (so the result does not depend on parameter units); the right
    singular vectors with singular value ``<= tol`` × the largest span the undetermined directions; a
    parameter with weight ``sqrt(P_ii) > weight`` in them (``P`` the projector onto them) is confounded,
    and parameters coupled through ``P`` (``|P_ij| > weight^2``) form one group. The determined
    combinations of a group are a basis of the directions of its parameter subspace orthogonal to its
    undetermined directions, in the parameters' own units: the group's first parameters are the free ones
    (as many as it has undetermined directions) and every other parameter ``p`` gives one combination
    ``p + sum_f a_f f``.

    Parameters
    ----------
    Y : array-like, shape (n_rows, n_cols) or (n_samples, n_joints, n_cols)
        Regressor (observation matrix) of the parameters on the data or the planned motion.
    names : sequence of str, (n_cols,)
    tol : float
        Relative singular-value tolerance (default ``CONFOUNDED_RTOL`` = 1e-3).
    weight : float
        Group membership threshold (default ``CONFOUNDED_WEIGHT`` = 0.05; lowered to ``0.5/sqrt(n_cols)``
        for very many columns, so that every undetermined direction has a member).

    Returns
    -------
    list of Confounding
        One per group, ordered by first column; empty when every direction is determined.

    Examples
    --------
    A mass-spring axis moved by one sine, ``q = 0.1 sin(2 pi t)``: ``qdd = -(2 pi)^2 q``, so the mass
    column ``qdd`` is ``-39.48`` times the stiffness column ``q``; only ``K - 39.48 M`` is determined.

    >>> t = np.linspace(0.0, 3.0, 301)
    >>> q = 0.1 * np.sin(2 * np.pi * t)
    >>> [c] = confounded_groups(np.column_stack([-(2 * np.pi) ** 2 * q, q, np.cos(t)]), ["M", "K", "F"])
    >>> c.parameters, c.combinations
    (('M', 'K'), ('K - 39.48*M',))
    """
    Y = np.asarray(Y, dtype=float)
    if Y.ndim == 3:
        Y = Y.reshape(-1, Y.shape[-1])
    names = tuple(names)
    if Y.ndim != 2 or Y.shape[1] != len(names):
        raise ShapeError(f"Y must be (rows, {len(names)}) or (samples, joints, {len(names)}), got {Y.shape}")
    if not (0 < tol < 1 and 0 < weight < 1):
        raise ConfigError(f"tol and weight must be in (0, 1), got {tol} and {weight}")
    if not np.all(np.isfinite(Y)):
        raise ConfigError("the regressor has non-finite values")
    n_rows, k = Y.shape
    if k == 0:
        return []
    d = np.linalg.norm(Y, axis=0)
    zero = ~(d > 1e-13 * d.max()) if d.max() > 0 else np.ones(k, dtype=bool)
    d = np.where(zero, 1.0, d)
    Ys = np.where(zero, 0.0, Y / d)
    R = np.linalg.qr(Ys, mode="r") if n_rows > k else Ys
    _, s, Vt = np.linalg.svd(R, full_matrices=True)
    s = np.concatenate([s, np.zeros(k - s.size)])
    smax = s[0]
    undetermined = s <= tol * smax if smax > 0 else np.ones(k, dtype=bool)
    if not undetermined.any():
        return []
    N = Vt[undetermined].T                                             # (k, m) orthonormal, unit-column coordinates
    P = N @ N.T
    w = np.sqrt(np.clip(np.diag(P), 0.0, None))
    thr = min(weight, 0.5 / np.sqrt(k))
    member = w > thr
    link = (np.abs(P) > thr**2) & member[:, None] & member[None, :]
    groups: list[list[int]] = []
    seen = np.zeros(k, dtype=bool)
    for i0 in np.nonzero(member)[0]:
        if seen[i0]:
            continue
        stack, comp = [int(i0)], []
        seen[i0] = True
        while stack:
            i = stack.pop()
            comp.append(i)
            for j in np.nonzero(link[i] & ~seen)[0]:
                seen[j] = True
                stack.append(int(j))
        groups.append(sorted(comp))
    out = []
    for G in groups:
        PG = P[np.ix_(G, G)]
        m = int(min(len(G), max(1, round(float(np.trace(PG))))))
        _, vecs = np.linalg.eigh(PG)
        Ns = vecs[:, -m:]                                              # (|G|, m), unit-column coordinates
        Nn = Ns / d[G][:, None]                                        # parameters' own units
        Nn = Nn / np.linalg.norm(Nn, axis=0)
        sv = np.linalg.svd(R[:, G], compute_uv=False) if R.shape[0] else np.zeros(0)
        sv = np.concatenate([sv, np.zeros(len(G) - sv.size)])
        rel = tuple(float(x / smax) if smax > 0 else 0.0 for x in np.sort(sv)[:m])
        combos: list[str] = []
        if m < len(G):
            free = _free_rows(Ns, m)
            for p in (i for i in range(len(G)) if i not in free):
                a = -np.linalg.lstsq(Nn[free].T, Nn[p], rcond=None)[0]     # c = e_p + sum a_f e_f, c . null = 0
                a_s = a / d[[G[f] for f in free]]                           # unit-column coordinates, for "negligible"
                lead = 1.0 / d[G[p]]
                big = max([abs(lead)] + [abs(x) for x in a_s])
                terms = [(float(a[n]), names[G[f]]) for n, f in enumerate(free) if abs(a_s[n]) > 1e-9 * big]
                combos.append(_format_combination(names[G[p]], terms))
        out.append(Confounding(tuple(names[i] for i in G), tuple(combos), Nn, tuple(G), rel))
    return out


def _free_rows(Ns: np.ndarray, m: int) -> list[int]:
    """``m`` rows of ``Ns`` (|G|, m) spanning its columns' row space, the earliest that do so well."""
    chosen: list[int] = []
    basis = np.zeros((Ns.shape[1], 0))
    for i, v in enumerate(Ns):
        r = v - basis @ (basis.T @ v)
        nr = np.linalg.norm(r)
        if nr > 0 and nr >= 0.3 * np.linalg.norm(v):                 # adds a well-conditioned new direction
            chosen.append(i)
            basis = np.column_stack([basis, r / nr])
            if len(chosen) == m:
                return chosen
    while len(chosen) < m:                                             # fall back: the best remaining rows
        best, bnorm = -1, -1.0
        for i, v in enumerate(Ns):
            if i in chosen:
                continue
            nr = np.linalg.norm(v - basis @ (basis.T @ v))
            if nr > bnorm:
                best, bnorm = i, nr
        chosen.append(best)
        r = Ns[best] - basis @ (basis.T @ Ns[best])
        basis = np.column_stack([basis, r / max(np.linalg.norm(r), 1e-300)])
    return sorted(chosen)
