"""The softMC catalogue models as physical chains: the geometry their closed forms come from.

Each entry builds a :class:`~._chain.SymbolicChain` whose bodies carry *physical* symbols (masses, first
moments, inertias, a spring's stiffness) and the configured payload, and states every catalogue
parameter as an expression of those symbols (spec/models.md §1–4). :func:`catalogue_regressor` then
derives the chain's torques and writes them in the catalogue's parameters — which succeeds only if the
catalogue's closed form and the physics agree; the tests compare the result with the hand-written
regressors of :mod:`dynid.models`.

Frames: joint axes are z unless said otherwise, gravity is ``−g·e_z``; a payload is a point mass
``M_p`` (and inertia ``I_p`` about the tool axis) at the tool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import sympy as sp

from ._chain import SymbolicChain, clean_number

__all__ = ["CatalogueChain", "catalogue_chain", "CATALOGUE_CHAINS"]

_I4 = np.eye(4)
_Z = (0.0, 0.0, 1.0)
_X = (1.0, 0.0, 0.0)


def _tx(x: float) -> np.ndarray:
    T = np.eye(4)
    T[0, 3] = x
    return T


def body(m=0, mx=0, my=0, mz=0, Ixx=0, Iyy=0, Izz=0) -> list:
    """Standard parameters ``[Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m]`` (inertia about the origin)."""
    return [Ixx, 0, 0, Iyy, 0, Izz, mx, my, mz, m]


def _add(a: list, b: list) -> list:
    return [sp.sympify(x) + y for x, y in zip(a, b)]


@dataclass(frozen=True)
class CatalogueChain:
    """A catalogue model as a physical chain.

    chain : SymbolicChain (physical symbols and the payload as body parameters)
    definitions : dict name -> SymPy expression — each catalogue parameter in the physical symbols and ``g``
    physical : tuple of Symbol — the physical symbols
    geometry : str — what the chain is, for the derivation's notes
    """

    chain: SymbolicChain
    definitions: dict
    physical: tuple
    geometry: str


def _payload(model, at: list, axis: int = 2) -> list:
    """Point mass ``M_p`` at ``at`` (tool frame) plus ``I_p`` about the tool axis (``axis``: 0 x, 2 z), numeric."""
    m, Ip = clean_number(model.payload.mass), clean_number(model.payload.inertia)
    x, y, z = at
    out = [m * (y**2 + z**2), -m * x * y, -m * x * z, m * (x**2 + z**2), -m * y * z, m * (x**2 + y**2),
           m * x, m * y, m * z, m]
    out[{0: 0, 2: 5}[axis]] += Ip
    return out


def _single_rotary(model, g) -> CatalogueChain:
    I, L, MA = sp.symbols("I L MA", real=True)
    number = int(model.name[-1])
    if number == 3:   # vertical crank: axis x (horizontal), crank along +z at q = 0 (pointing up)
        crank = body(mz=MA, Ixx=I)
        pay = _payload(model, [0, 0, L], axis=0)
        axis, defs = _X, {"I": I, "L^2": L**2, "M*g*A": g * MA, "g*L": g * L}
        geometry = "a crank turning about a horizontal axis (x), pointing up at q = 0; payload at distance L on it"
    else:             # vertical axis: a turntable (1) or a horizontal crank with the payload at L (2)
        crank = body(Izz=I)
        pay = _payload(model, [L, 0, 0] if number == 2 else [0, 0, 0])
        axis = _Z
        defs = {"I": I} if number == 1 else {"I": I, "L^2": L**2}
        geometry = "a body turning about a vertical axis" + ("; payload at distance L" if number == 2 else "")
    chain = SymbolicChain(["rotary"], [_I4], [_I4], [axis], [_add(crank, pay)], [0, 0, -g])
    return CatalogueChain(chain, defs, tuple(s for s in (I, L, MA) if any(e.has(s) for e in defs.values())), geometry)


def _single_linear(model, g) -> CatalogueChain:
    M, K, KX0, ca = sp.symbols("M K K_X0 cos_alpha", real=True)
    number = int(model.name[-1])
    pay = _payload(model, [0, 0, 0])
    sled = _add(body(m=M), pay)
    if number == 1:
        chain = SymbolicChain(["linear"], [_I4], [_I4], [_X], [sled], [0, 0, -g])
        return CatalogueChain(chain, {"M": M}, (M,), "a horizontal slide")
    if number == 2:   # tilted by alpha from the vertical: gravity along the slide is -g cos(alpha)
        chain = SymbolicChain(["linear"], [_I4], [_I4], [_Z], [sled], [0, 0, -g * ca])
        return CatalogueChain(chain, {"M": M, "M*g*cos(alpha)": M * g * ca, "g*cos(alpha)": g * ca}, (M, ca),
                              "a slide tilted by alpha from the vertical (cos_alpha = cos(alpha))")
    z = sp.Symbol("q1", real=True)
    chain = SymbolicChain(["linear"], [_I4], [_I4], [_Z], [sled], [0, 0, -g],
                          potential=K * z**2 / 2 - KX0 * z)
    return CatalogueChain(chain, {"M": M, "K": K, "K*X0": KX0}, (M, K, KX0),
                          "a vertical slide on a spring of stiffness K relaxed at X0")


def _traverse(model, g) -> CatalogueChain:
    M1, M2, MA2, Iz2, M3, I4, J4 = sp.symbols("M1 M2 MA2 Iz2 M3 I4 J4", real=True)
    bodies = [body(m=M1),                                 # carriage on the traverse x
              body(m=M2, mx=MA2, Izz=Iz2),                # arm: first moment along the arm, inertia about its axis
              body(m=M3),                                 # vertical axis z at the arm tip
              _add(body(Izz=I4), _payload(model, [0, 0, 0]))]   # tool turning with th + phi
    chain = SymbolicChain(["linear", "rotary", "linear", "rotary"], [_I4, _I4, _tx(model.L2), _I4], [_I4] * 4,
                          [_X, _Z, _Z, _Z], bodies, [0, 0, -g], armature=[0, 0, 0, J4])
    defs = {"M1+M2": M1 + M2, "A2*M2": MA2, "A2^2*M2+I2": Iz2, "M3": M3, "g*M3": g * M3, "I4": I4, "J4": J4}
    return CatalogueChain(chain, defs, (M1, M2, MA2, Iz2, M3, I4, J4),
                          f"traverse x, arm turning about a vertical axis (length L2 = {model.L2:g} m), vertical axis at its "
                          "tip, tool rotation relative to the arm; J4 on the tool joint alone")


def _scara(model, g) -> CatalogueChain:
    I1, M2, MA2, Iz2, J2, M3, I4, J4 = sp.symbols("I1 M2 MA2 Iz2 J2 M3 I4 J4", real=True)
    L1 = clean_number(model.L1)
    four = model.n_joints == 4
    tool = _add(body(Izz=I4), _payload(model, [0, 0, 0]))
    bodies = [body(Izz=I1), body(m=M2, mx=MA2, Izz=Iz2), _add(body(m=M3), [0] * 10 if four else tool)]
    kinds, pre, axes = ["rotary", "rotary", "linear"], [_I4, _tx(model.L1), _tx(model.L2)], [_Z, _Z, _Z]
    coupling = None
    if four:
        bodies.append(tool)
        kinds.append("rotary")
        pre.append(_I4)
        axes.append(_Z)
        if model.screw_lead:   # ball-screw spline: shaft height q3 + lead * q4
            coupling = np.eye(4)
            coupling[2, 3] = model.screw_lead
    chain = SymbolicChain(kinds, pre, [_I4] * len(kinds), axes, bodies, [0, 0, -g], coupling=coupling,
                          armature=[0, J2, 0] + ([J4] if four else []))
    defs = {"L1^2*M2+I1": L1**2 * M2 + I1, "A2^2*M2+I2": Iz2, "J2": J2, "L1*A2*M2": L1 * MA2, "M3": M3,
            "g*M3": g * M3, "I4": I4}
    phys = [I1, M2, MA2, Iz2, J2, M3, I4]
    if four:
        defs["J4"] = J4
        phys.append(J4)
    return CatalogueChain(chain, defs, tuple(phys),
                          f"two arms turning about vertical axes (L1 = {model.L1:g} m, L2 = {model.L2:g} m), a vertical shaft at the "
                          "tip" + (", the tool turning relative to arm 2" if four else "") + "; J2"
                          + (", J4" if four else "") + " on their own joints alone")


CATALOGUE_CHAINS: dict[str, Callable] = {
    **{f"rotary{k}": _single_rotary for k in (1, 2, 3)},
    **{f"linear{k}": _single_linear for k in (1, 2, 3)},
    "traverse": _traverse, "scara3": _scara, "scara4": _scara,
}
"""Catalogue model name -> builder of its physical chain."""


def catalogue_chain(model, g: sp.Expr) -> CatalogueChain | None:
    """The physical chain of a catalogue model (None if dynid has none for it)."""
    build = CATALOGUE_CHAINS.get(model.name)
    if build is None:
        return None
    cat = build(model, g)
    names = list(cat.definitions)
    if names != list(model.param_names[: len(names)]) or len(names) != len(
            [p for p in model.parameters if p.role != "constant"]):
        raise AssertionError(f"catalogue chain of {model.name} does not list the model's parameters in order")  # pragma: no cover
    return cat
