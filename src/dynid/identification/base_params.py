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

from dataclasses import dataclass
from fractions import Fraction
from typing import Sequence

import numpy as np

__all__ = ["BaseParameters", "find_base_parameters", "structural_base", "format_combination"]


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
    basis = np.zeros((n_rows, 0))
    independent: list[int] = []
    for j in order:
        # a column that is zero everywhere (relative to the largest) is dependent (K = 0)
        if norms[j] <= rtol * scale or norms[j] == 0.0:
            continue
        v = W[:, j] / norms[j]
        for _ in range(2):  # Gram-Schmidt, twice for orthogonality
            v = v - basis @ (basis.T @ v)
        r = np.linalg.norm(v)
        if r > rtol * 10.0:
            basis = np.column_stack([basis, v / r])
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
    return find_base_parameters(W, plant.param_names, order, plant.model.structural_rtol)
