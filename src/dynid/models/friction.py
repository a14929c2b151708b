"""Friction and actuator terms: the one friction model of dynid and its one evaluator.

:class:`FrictionModel` names the terms (``viscous+coulomb+offset`` ...), gives their regressor
columns (what the fit solves for) and turns identified coefficients into a
:class:`FrictionCoefficients`, the evaluator every consumer uses: :meth:`Plant.torque
<dynid.models.base.Plant.torque>` (fit evaluation, predict, ``FittedModel.torque``), the per-cycle
feed-forward and collision monitor, and the simulator. The same code runs on one sample ``(n,)``
(allocation-free, with buffers made once) and on a whole recording ``(N, n)``.

>>> import numpy as np
>>> from dynid.models import Joint
>>> fm = FrictionModel("viscous+coulomb+offset", [Joint("A1", "rotary")])
>>> fc = fm.coefficients([0.5, 2.0, 0.1])
>>> fc.torque(np.array([[1.0], [-1.0], [0.0]]), np.zeros((3, 1))).ravel().tolist()
[2.6, -2.4, 0.1]
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import ConfigError
from ..units import force_unit, inertia_unit, velocity_unit
from .transmission import Transmission

__all__ = ["FrictionModel", "FrictionCoefficients", "FRICTION_TERMS", "MOTOR_TERMS", "AUTO_FRICTION"]

FRICTION_TERMS: dict[str, tuple[tuple[str, ...], str]] = {
    # term: (column suffixes, description)
    "viscous": (("viscous",), "Fv·qd"),
    "coulomb": (("coulomb",), "Fc·sign(qd)"),
    "offset": (("offset",), "constant torque offset"),
    "coulomb_asym": (("coulomb_pos", "coulomb_neg"), "Fc+ for qd > 0, Fc- for qd < 0 (replaces coulomb)"),
    "stribeck": (("stribeck",), "Fs·sign(qd)·exp(-(qd/vs)^2), vs = stribeck_velocity"),
    "armature": (("armature",), "rotor (armature) inertia Ia·qdd at the joint"),
    # coupled motors of the transmission (a row of R with several non-zero entries); per motor, not per joint
    "motor_viscous": (("viscous",), "coupled motor m: Fvm·(u·qd) along u = R[m,:]/R[m,m] (joint units of joint m)"),
    "motor_coulomb": (("coulomb",), "coupled motor m: Fcm·sign(u·qd) along u"),
    "motor_armature": (("armature",), "coupled motor m: rotor inertia Iam·(u·qdd) along u"),
}
MOTOR_TERMS = ("motor_viscous", "motor_coulomb", "motor_armature")
_TERM_ORDER = tuple(FRICTION_TERMS)
AUTO_FRICTION = "auto"
"""``friction: auto``: the friction model is chosen by validation error (dynid.identification.select)."""
_DISCONTINUOUS = {"coulomb", "coulomb_asym", "stribeck", "motor_coulomb"}


class FrictionModel:
    """Per-joint friction and actuator terms, plus the terms of coupled motors; shared by every model.

    Physical convention (interfaces.md §3): positive coefficients oppose motion, i.e. the motor
    torque is ``rigid-body torque + Fv·qd + Fc·sign(qd) + ...``. The softMC sign is applied only when
    writing the PRG.

    Coupled motors (:mod:`dynid.models.transmission`): a motor ``m`` whose row of the motor-from-joint matrix
    ``R`` has several non-zero entries turns with ``R[m, :] · qd``. Its rotor inertia and friction
    reach the joints through ``R^T``; with ``u = R[m, :] / R[m, m]`` they add, on joint ``j``,
    ``u_j · (Fvm·(u·qd) + Fcm·sign(u·qd) + Iam·(u·qdd))``. The coefficients are in the joint units of
    joint ``m`` (motor-side values times ``R[m, m]²`` for ``Fvm`` and ``Iam``, ``|R[m, m]|`` for
    ``Fcm``), which are FIGAROH's ``fvm6``, ``fsm6``, ``Iam6`` for the Stäubli TX40 wrist.

    Parameters
    ----------
    spec : str
        Terms joined by ``+``, e.g. ``viscous+coulomb`` (softMC's) or ``viscous+coulomb+offset``.
        Per joint: ``viscous``, ``coulomb``, ``offset``, ``coulomb_asym``, ``stribeck``, ``armature``;
        per coupled motor: ``motor_viscous``, ``motor_coulomb``, ``motor_armature``.
    joints : sequence of Joint
    stribeck_velocity : float
        [rad/s or m/s] of the ``stribeck`` term.
    transmission : Transmission, optional
        Needed by the ``motor_*`` terms (which apply to its coupled motors).
    """

    def __init__(self, spec: str, joints: Sequence, stribeck_velocity: float = 0.1,
                 transmission: Transmission | None = None) -> None:
        terms = [t.strip() for t in spec.split("+") if t.strip()] if spec not in ("", "none") else []
        for t in terms:
            if t not in FRICTION_TERMS:
                raise ConfigError(f"unknown friction term {t!r} in {spec!r}",
                                  hint=f"use terms from: {', '.join(FRICTION_TERMS)} joined by '+'")
        if len(set(terms)) != len(terms):
            raise ConfigError(f"friction model {spec!r} names a term twice")
        if "coulomb" in terms and "coulomb_asym" in terms:
            raise ConfigError("friction: use either 'coulomb' or 'coulomb_asym', not both")
        self.joints = tuple(joints)
        if transmission is not None:
            transmission.check_joints(len(self.joints))
        self.transmission = transmission
        motor = [t for t in terms if t in MOTOR_TERMS]
        if motor and (transmission is None or not transmission.coupled_motors):
            raise ConfigError(f"friction term {motor[0]!r} needs a transmission with a coupled motor",
                              hint="give transmission: {gear_ratios, coupling: [[motor, joint, value]], recorded} "
                                   "or drop the motor_* terms")
        self.terms = tuple(t for t in _TERM_ORDER if t in terms)
        self.joint_terms = tuple(t for t in self.terms if t not in MOTOR_TERMS)
        self.motor_terms = tuple(t for t in self.terms if t in MOTOR_TERMS)
        self.stribeck_velocity = float(stribeck_velocity)
        self.suffixes = tuple(s for t in self.joint_terms for s in FRICTION_TERMS[t][0])
        self.motors = transmission.coupled_motors if self.motor_terms else ()
        self._u = transmission.motor_directions() if self.motor_terms else np.zeros((0, len(self.joints)))

    @property
    def spec(self) -> str:
        return "+".join(self.terms) if self.terms else "none"

    @property
    def n_per_joint(self) -> int:
        return len(self.suffixes)

    @property
    def n_motor_params(self) -> int:
        """Parameters of the coupled motors (``len(motor_terms) × n_coupled``), after the per-joint ones."""
        return len(self.motor_terms) * len(self.motors)

    @property
    def n_params(self) -> int:
        return self.n_per_joint * len(self.joints) + self.n_motor_params

    @property
    def motor_names(self) -> tuple[str, ...]:
        """``motor<m>`` (1-based) of each coupled motor with terms."""
        return tuple(f"motor{m + 1}" for m in self.motors)

    @property
    def param_names(self) -> tuple[str, ...]:
        joint = tuple(f"{j.name}.{s}" for j in self.joints for s in self.suffixes)
        motor = tuple(f"{name}.{FRICTION_TERMS[t][0][0]}" for name in self.motor_names for t in self.motor_terms)
        return joint + motor

    @property
    def param_units(self) -> tuple[str, ...]:
        units = []
        for j in self.joints:
            units.extend(self._unit(s, j.kind) for s in self.suffixes)
        for m in self.motors:
            units.extend(self._unit(FRICTION_TERMS[t][0][0], self.joints[m].kind) for t in self.motor_terms)
        return tuple(units)

    @staticmethod
    def _unit(suffix: str, kind: str) -> str:
        f = force_unit(kind)
        if suffix == "viscous":
            return f"{f} s/{velocity_unit(kind).split('/')[0]}"
        if suffix == "armature":
            return inertia_unit(kind)
        return f

    @property
    def discontinuous(self) -> bool:
        return any(t in _DISCONTINUOUS for t in self.terms)

    @property
    def sign_directions(self) -> tuple[tuple[float, ...], ...]:
        """Directions ``u`` of the coupled motors with terms, for ``ConditioningOptions(sign_directions=...)``
        (the conditioning then smooths ``sign(u·qd)`` like the joints' Coulomb sign)."""
        return tuple(tuple(float(x) for x in row) for row in self._u) if self.n_motor_params else ()

    def motor_velocities(self, qd: np.ndarray) -> np.ndarray:
        """Velocities ``u·qd`` of the coupled motors ``(N, n_coupled)``, in joint units of their own joint."""
        return np.asarray(qd, dtype=float) @ self._u.T

    def motor_thresholds(self, velocity_threshold: np.ndarray) -> np.ndarray:
        """Velocity thresholds ``|u|·thr`` ``(n_coupled,)`` of the coupled motors from per-joint ones ``(n_joints,)``
        (the bound the joints' velocity noise puts on the motor velocity)."""
        return np.abs(self._u) @ np.asarray(velocity_threshold, dtype=float)

    def split_signs(self, sign: np.ndarray | None, motor_sign: np.ndarray | None = None):
        """``(joint signs (N, n), motor signs (N, n_coupled) or None)`` from a ``sign`` that may carry the
        coupled motors' columns after the joints' (as :func:`~dynid.signal.conditioning.condition`
        appends them for ``sign_directions``); an explicit ``motor_sign`` wins."""
        if sign is None:
            return None, motor_sign
        sign = np.asarray(sign, dtype=float)
        n = len(self.joints)
        if sign.shape[1] > n:
            if motor_sign is None and sign.shape[1] == n + len(self.motors):
                motor_sign = sign[:, n:]
            sign = sign[:, :n]
        return sign, motor_sign

    def columns(self, qd: np.ndarray, qdd: np.ndarray, sign: np.ndarray | None = None,
                motor_sign: np.ndarray | None = None) -> np.ndarray:
        """Friction regressor: block-diagonal per joint, then the coupled motors' columns.

        Parameters
        ----------
        qd, qdd : ndarray, shape (N, n_joints)
            Joint velocities and accelerations (SI).
        sign : ndarray, shape (N, n_joints) or (N, n_joints + n_coupled), optional
            Replacement for ``sign(qd)`` of the per-joint terms (e.g. the low-pass filtered sign used
            for identification so the Coulomb step is smoothed like the filtered torque). Default
            ``np.sign(qd)``. Extra columns, as :func:`~dynid.signal.conditioning.condition` appends them for
            ``sign_directions``, replace the coupled motors' ``sign(u·qd)``.
        motor_sign : ndarray, shape (N, n_coupled), optional
            Replacement for ``sign(u·qd)`` of the coupled motors' Coulomb term; default: the extra
            columns of ``sign``, else ``np.sign(u·qd)``.

        Returns
        -------
        ndarray, shape (N, n_joints, n_params)
        """
        N, n = qd.shape
        sign, motor_sign = self.split_signs(sign, motor_sign)
        k = self.n_per_joint
        out = np.zeros((N, n, self.n_params))
        if k:
            per = self.joint_columns(qd, qdd, sign)
            for j in range(n):  # n_joints blocks, not a per-sample loop
                out[:, j, j * k:(j + 1) * k] = per[:, j, :]
        if self.n_motor_params:
            u = self._u                                   # (n_coupled, n)
            v, a = qd @ u.T, qdd @ u.T                    # (N, n_coupled) motor velocity/acceleration, joint units
            ms = np.sign(v) if motor_sign is None else np.asarray(motor_sign, dtype=float).reshape(v.shape)
            cols = {"motor_viscous": v, "motor_coulomb": ms, "motor_armature": a}
            per_m = np.stack([cols[t] for t in self.motor_terms], axis=-1)          # (N, n_coupled, n_terms)
            mot = per_m[:, None, :, :] * u.T[None, :, :, None]                      # (N, n, n_coupled, n_terms)
            out[:, :, k * n:] = mot.reshape(N, n, -1)
        return out

    def joint_columns(self, qd: np.ndarray, qdd: np.ndarray, sign: np.ndarray | None = None) -> np.ndarray:
        """The per-joint terms' columns compactly, ``(N, n_joints, n_per_joint)``: entry ``[:, j, i]`` is the column
        of parameter ``j * n_per_joint + i`` in row ``j`` of :meth:`columns` (every other entry of a joint's row
        there is zero but the coupled motors'). ``sign``: the joints' signs ``(N, n_joints)``, default ``sign(qd)``."""
        s = np.sign(qd) if sign is None else sign
        blocks = []
        for t in self.joint_terms:
            if t == "viscous":
                blocks.append(qd)
            elif t == "coulomb":
                blocks.append(s)
            elif t == "offset":
                blocks.append(np.ones_like(qd))
            elif t == "coulomb_asym":
                blocks.append(np.maximum(s, 0.0))  # Fc+ acts for qd > 0
                blocks.append(np.minimum(s, 0.0))  # Fc- (positive value) acts for qd < 0
            elif t == "stribeck":
                blocks.append(s * np.exp(-(qd / self.stribeck_velocity) ** 2))
            elif t == "armature":
                blocks.append(qdd)
        return np.stack(blocks, axis=-1) if blocks else np.zeros((*np.shape(qd), 0))

    def values_by_term(self, theta_friction: np.ndarray) -> dict[str, list[float]]:
        """Friction coefficients grouped per suffix: ``{"viscous": [..per joint..], ...}``; coupled
        motors' terms under their term name, one value per coupled motor (``{"motor_viscous": [..]}``)."""
        theta_friction = np.asarray(theta_friction, dtype=float)
        nj = self.n_per_joint * len(self.joints)
        v = theta_friction[:nj].reshape(len(self.joints), self.n_per_joint)
        out = {s: v[:, i].tolist() for i, s in enumerate(self.suffixes)}
        if self.n_motor_params:
            m = theta_friction[nj:].reshape(len(self.motors), len(self.motor_terms))
            out.update({t: m[:, i].tolist() for i, t in enumerate(self.motor_terms)})
        return out

    def flatten_terms(self, by_term: dict) -> list:
        """Inverse of :meth:`values_by_term`: the coefficients ``(n_params,)`` in parameter order
        (``None`` where a term is missing)."""
        n = len(self.joints)
        out = []
        for j in range(n):
            out.extend((by_term.get(s) or [None] * n)[j] for s in self.suffixes)
        m = len(self.motors)
        for i in range(m):
            out.extend((by_term.get(t) or [None] * m)[i] for t in self.motor_terms)
        return out

    def coefficients(self, theta_friction: Sequence[float]) -> "FrictionCoefficients":
        """The evaluator of these terms with identified coefficients ``theta_friction`` ``(n_params,)``."""
        return FrictionCoefficients(self, theta_friction)


class FrictionCoefficients:
    """Identified friction of one plant, evaluated on one sample ``(n,)`` or many ``(N, n)``.

    Physical convention (interfaces.md §3)::

        tau_f = Fv·qd + Fc·s + offset + Fc+·max(s, 0) + Fc-·min(s, 0) + Fs·s·exp(-(qd/vs)²) + Ia·qdd
                + Σ_m u_m · (Fvm·(u_m·qd) + Fcm·s_m + Iam·(u_m·qdd))

    where ``s`` is the Coulomb sign of the joints (``sign(qd)`` by default; the conditioned,
    filtered sign in identification; the simulator's ``tanh``) and ``s_m`` that of coupled motor
    ``m`` (default ``sign(u_m·qd)``). Build it with :meth:`FrictionModel.coefficients`.

    Attributes (``(n,)`` per joint, zero where the term is absent): ``viscous``, ``coulomb``,
    ``offset``, ``coulomb_pos``, ``coulomb_neg``, ``stribeck``, ``armature``; per coupled motor
    ``(n_coupled,)``: ``motor_viscous``, ``motor_coulomb``, ``motor_armature``, and ``directions``
    ``(n_coupled, n)`` (the rows ``u_m``).
    """

    def __init__(self, model: "FrictionModel", values: Sequence[float]) -> None:
        values = np.asarray(values, dtype=float).ravel()
        if values.shape != (model.n_params,):
            raise ConfigError(f"friction {model.spec!r} has {model.n_params} coefficients, got {values.size}")
        n = len(model.joints)
        nj = model.n_per_joint * n
        per = values[:nj].reshape(n, model.n_per_joint)
        col = {s: per[:, i].copy() for i, s in enumerate(model.suffixes)}
        z = np.zeros(n)
        self.model = model
        self.n_joints = n
        self.viscous = col.get("viscous", z)
        self.coulomb = col.get("coulomb", z)
        self.offset = col.get("offset", z)
        self.coulomb_pos = col.get("coulomb_pos", z)
        self.coulomb_neg = col.get("coulomb_neg", z)
        self.stribeck = col.get("stribeck", z)
        self.armature = col.get("armature", z)
        self.has_asym = "coulomb_asym" in model.terms
        self.has_stribeck = "stribeck" in model.terms
        self.has_armature = "armature" in model.terms
        self._inv_vs = np.full(n, 1.0 / model.stribeck_velocity)
        self._zero = np.zeros(n)
        m = len(model.motors) if model.n_motor_params else 0
        self.n_coupled = m
        mot = values[nj:].reshape(m, len(model.motor_terms)) if m else np.zeros((0, 0))
        mcol = {t: mot[:, i].copy() for i, t in enumerate(model.motor_terms)}
        zm = np.zeros(m)
        self.motor_viscous = mcol.get("motor_viscous", zm)
        self.motor_coulomb = mcol.get("motor_coulomb", zm)
        self.motor_armature = mcol.get("motor_armature", zm)
        self.directions = np.array(model._u, dtype=float).reshape(m, n)
        self._uT = np.ascontiguousarray(self.directions.T)
        # buffers of the one-sample (per-cycle) path, made once: that path allocates nothing
        self._t = np.empty(n)
        self._v = np.empty(m)
        self._a = np.empty(m)
        self._ms = np.empty(m)
        self._fm = np.empty(m)
        self._w = np.empty(m)
        self._back = np.empty(n)

    def inertia(self) -> np.ndarray:
        """The actuators' inertia added to the mass matrix ``(n, n)``: ``diag(Ia) + Σ_m Iam u_m u_mᵀ``."""
        M = np.diag(self.armature) if self.has_armature else np.zeros((self.n_joints, self.n_joints))
        if self.n_coupled:
            M = M + (self.directions.T * self.motor_armature) @ self.directions
        return M

    def sign_into(self, qd: np.ndarray, out: np.ndarray) -> None:
        """The default Coulomb sign ``sign(qd)`` into ``out``."""
        np.sign(qd, out=out)

    def motor_velocities(self, qd: np.ndarray) -> np.ndarray:
        """Coupled motors' velocities ``u_m·qd`` ``(..., n_coupled)`` in joint units of their own joint."""
        return np.asarray(qd, dtype=float) @ self._uT

    def add_into(self, qd: np.ndarray, qdd: np.ndarray | None, s: np.ndarray, out: np.ndarray, *,
                 motor_sign: np.ndarray | None = None) -> None:
        """``out += tau_f(qd, qdd)`` with joint Coulomb sign ``s``; shapes ``(n,)`` or ``(N, n)``.

        ``qdd=None`` leaves out the (joint and motor) armature terms, e.g. where a simulator keeps
        them in the mass matrix (:meth:`inertia`). ``motor_sign`` ``(..., n_coupled)`` replaces
        ``sign(u_m·qd)``. On one sample nothing is allocated.
        """
        one = np.ndim(qd) == 1
        if not one:
            qd = np.asarray(qd, dtype=float)
        t = self._t if one else np.empty(qd.shape)
        np.multiply(self.viscous, qd, out=t)
        np.add(out, t, out=out)
        np.multiply(self.coulomb, s, out=t)
        np.add(out, t, out=out)
        np.add(out, self.offset, out=out)
        if self.has_asym:
            np.maximum(s, self._zero, out=t)
            np.multiply(t, self.coulomb_pos, out=t)
            np.add(out, t, out=out)
            np.minimum(s, self._zero, out=t)
            np.multiply(t, self.coulomb_neg, out=t)
            np.add(out, t, out=out)
        if self.has_stribeck:
            np.multiply(qd, self._inv_vs, out=t)
            np.multiply(t, t, out=t)
            np.negative(t, out=t)
            np.exp(t, out=t)
            np.multiply(t, s, out=t)
            np.multiply(t, self.stribeck, out=t)
            np.add(out, t, out=out)
        if self.has_armature and qdd is not None:
            np.multiply(self.armature, qdd, out=t)
            np.add(out, t, out=out)
        if self.n_coupled:
            # no ufunc writes into one of its inputs here: numpy allocates for that on size-1 arrays
            if one:
                v, fm, w, a, ms = self._v, self._fm, self._w, self._a, self._ms
            else:
                v, fm, w, a, ms = (np.empty(qd.shape[:-1] + (self.n_coupled,)) for _ in range(5))
            np.dot(qd, self._uT, out=v)
            if motor_sign is None:
                np.sign(v, out=ms)
            else:
                ms = motor_sign
            np.multiply(self.motor_viscous, v, out=fm)
            np.multiply(self.motor_coulomb, ms, out=w)
            np.add(fm, w, out=v)                               # motor torque so far, in v
            total = v
            if qdd is not None:
                np.dot(qdd, self._uT, out=a)
                np.multiply(self.motor_armature, a, out=w)
                np.add(v, w, out=fm)
                total = fm
            back = self._back if one else t
            np.dot(total, self.directions, out=back)
            np.add(out, back, out=out)

    def expressions(self, qd: Sequence, qdd: Sequence, *, sign, exp) -> list:
        """The friction torque of each joint as an expression of any scalar algebra (code generation).

        ``qd``, ``qdd`` are per-joint scalars (e.g. SymPy symbols), ``sign`` and ``exp`` the algebra's
        functions. The same terms as :meth:`add_into`, written once more for symbols: the code generator's
        output is tested equal to ``FittedModel.torque``, which runs :meth:`add_into`.
        """
        n = self.n_joints
        out = []
        for j in range(n):
            s = sign(qd[j])
            t = self.viscous[j] * qd[j] + self.coulomb[j] * s + self.offset[j]
            if self.has_asym:   # max(s, 0) and min(s, 0) of a sign are (s + |s|)/2 and (s - |s|)/2 = (s ± s²)/2
                t = t + self.coulomb_pos[j] * (s + s * s) / 2 + self.coulomb_neg[j] * (s - s * s) / 2
            if self.has_stribeck:
                t = t + self.stribeck[j] * s * exp(-(qd[j] * self._inv_vs[j]) ** 2)
            if self.has_armature:
                t = t + self.armature[j] * qdd[j]
            out.append(t)
        for m in range(self.n_coupled):   # coupled motors: u_j (Fvm v + Fcm sign(v) + Iam a), v = u·qd, a = u·qdd
            u = self.directions[m]
            v = sum(u[k] * qd[k] for k in range(n) if u[k])
            a = sum(u[k] * qdd[k] for k in range(n) if u[k])
            fm = self.motor_viscous[m] * v + self.motor_coulomb[m] * sign(v) + self.motor_armature[m] * a
            out = [out[j] + u[j] * fm if u[j] else out[j] for j in range(n)]
        return out

    def torque(self, qd, qdd, sign: np.ndarray | None = None, motor_sign: np.ndarray | None = None) -> np.ndarray:
        """``tau_f`` ``(N, n)`` (or ``(n,)``) for velocities and accelerations of that shape; ``sign``
        defaults to ``sign(qd)``, ``motor_sign`` to ``sign(u_m·qd)``."""
        qd = np.asarray(qd, dtype=float)
        qdd = None if qdd is None else np.asarray(qdd, dtype=float)
        s = np.sign(qd) if sign is None else np.asarray(sign, dtype=float)
        out = np.zeros(qd.shape)
        self.add_into(qd, qdd, s, out, motor_sign=None if motor_sign is None else np.asarray(motor_sign, dtype=float))
        return out
