"""The two PUMA models of the softMC catalogue (spec/models.md §6–7).

``puma`` (softMC Dynamic Model 1): the full rigid-body model of Armstrong, Khatib & Burdick (AKB,
1986) in their 23 inertial constants I1..I23 plus the five gravity constants g1..g5::

    tau = A(q) qdd + c(q, qd) + G(q)

``A(q)`` is the AKB inertia matrix exactly as spec/models.md §6 writes it (corrected constants),
``c_i = sum_jk Gamma_ijk qd_j qd_k`` with the Christoffel symbols
``Gamma_ijk = (da_ij/dq_k + da_ik/dq_j - da_jk/dq_i) / 2`` of that matrix, and ``G(q)`` the AKB gravity
vector of §7. Everything is linear in the 28 constants, so regressor column k is
``A_k qdd + c_k(q, qd)`` with ``A_k = dA/dI_k`` (or the gravity basis function for g1..g5).

``puma-gravity`` (softMC Dynamic Model 2): the semi-static model, gravity only,
``tau = -P1 C2 - P2 C23 - P3 S23 - P4 w(q) [- P5 S2]`` (§7 "Resolution"; ``w`` the wrist term).

Frames: modified DH (Craig) as Corke's ``mdl_puma560akb`` (spec/interfaces.md §4): q = 0 is the
L-shaped pose, z0 points up and gravity acts along -z0; link i: (alpha_{i-1}, a_{i-1}, d_i) =
(0, 0, 0), (-90°, 0, d2), (0, a2, d3), (+90°, a3, d4), (-90°, 0, 0), (+90°, 0, 0).

Joint directions and zeros of a real arm (softMC's are unpublished) are set per joint by the
configuration keys ``joint_sign`` (s_j = +1 or -1) and ``joint_offset`` (o_j [rad])::

    q_model = s * q + o,   qd_model = s * qd,   qdd_model = s * qdd,   tau = s * tau_model

(the torque maps with the same sign, since tau·qd is power in both coordinate systems), so
``Y(q, qd, qdd) = diag(s) Y_model(s q + o, s qd, s qdd)``. Friction stays in the user's joint
coordinates (it opposes the user's velocity either way).

Rotor (armature) inertias: the 23 constants hold a rotor inertia only on joints 1 and 2 (absorbed
into I1, I2). Rotors on joints 3..6 (AKB Im3..Im6) are not representable; add the shared
``armature`` term of the friction block (``friction: viscous+coulomb+armature``).

References
----------
B. Armstrong, O. Khatib, J. Burdick, "The explicit dynamic model and inertial parameters of the
PUMA 560 arm", Proc. IEEE ICRA 1986, pp. 510-518.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from ..errors import ConfigError
from .base import DynamicModel, Joint, Parameter
from .registry import register_model

__all__ = ["Puma", "PumaGravity", "AKB_GEOMETRY"]

AKB_GEOMETRY: dict[str, float] = {"d2": 0.2435, "d3": -0.0934, "a2": 0.4318, "a3": -0.0203, "d4": 0.4331}
"""AKB link lengths [m] (modified DH); used only for the payload terms."""

_N_INERTIAL = 23
_H = 1e-20            # complex-step size: Im f(x + ih) / h = f'(x) exactly in floating point
_CHUNK = 4096         # samples per block (keeps the complex work arrays in cache)

_COMMON_KEYS: dict[str, str] = {
    "joint_sign": "per joint +1 or -1: q_model = joint_sign*q + joint_offset, tau = joint_sign*tau_model "
                  "(default all +1)",
    "joint_offset": "per joint [rad], added after the sign: q_model = joint_sign*q + joint_offset; q_model = 0 is "
                    "AKB's L-shaped pose (default all 0)",
    "payload_lz": "payload centre of mass on the z6 axis, distance from the wrist centre [m] (default 0); the payload "
                  "mass is a point mass there and its inertia acts about z6",
    "geometry": "link lengths {d2, d3, a2, a3, d4} [m] for the payload terms (default AKB's PUMA 560)",
}


# ------------------------------------------------------------------------------ AKB closed form

class _Trig:
    """Sines, cosines and shared products of one batch of (possibly complex) joint angles ``(..., 6)``."""

    def __init__(self, q: np.ndarray) -> None:
        q2, q3, q4, q5 = q[..., 1], q[..., 2], q[..., 3], q[..., 4]
        self.S2, self.C2 = np.sin(q2), np.cos(q2)
        self.S3, self.C3 = np.sin(q3), np.cos(q3)
        self.S23, self.C23 = np.sin(q2 + q3), np.cos(q2 + q3)
        self.S4, self.C4 = np.sin(q4), np.cos(q4)
        self.S5, self.C5 = np.sin(q5), np.cos(q5)
        self.one = np.ones_like(q2)


def _mass_terms(t: _Trig) -> list[tuple[int, int, int, np.ndarray]]:
    """Non-zero entries of ``dA/dI_k``: ``(i, j, k, value)`` for ``i <= j`` (0-based joints, k = 1..23).

    Transcribes the inertia matrix of spec/models.md §6; ``A = sum_k I_k dA/dI_k`` and ``A`` is
    symmetric, so only the upper triangle is listed.
    """
    S2, C2, S3, C3, S23, C23 = t.S2, t.C2, t.S3, t.C3, t.S23, t.C23
    S4, C4, S5, C5, one = t.S4, t.C4, t.S5, t.C5, t.one
    SS4, SS5, SS23, CC4 = S4 * S4, S5 * S5, S23 * S23, C4 * C4
    SC23 = S23 * C23
    C4S5 = C4 * S5
    S4S5 = S4 * S5
    w = S23 * C5 + C23 * C4S5            # recurring wrist combinations
    v = C23 * S5 + S23 * C4 * C5
    x18 = S23 * C4S5 - C23 * C5
    ssx = SS4 * SS5
    return [
        # a11
        (0, 0, 1, one), (0, 0, 3, C2 * C2), (0, 0, 7, SS23), (0, 0, 10, SC23), (0, 0, 11, S2 * C2),
        (0, 0, 20, SS5 * (SS23 * (1 + CC4) - 1) - 2 * SC23 * C4S5 * C5), (0, 0, 21, SS23 * CC4),
        (0, 0, 5, 2 * C2 * S23), (0, 0, 12, 2 * C2 * C23), (0, 0, 15, 2 * (SS23 * C5 + SC23 * C4S5)),
        (0, 0, 16, 2 * C2 * w), (0, 0, 18, 2 * S4S5), (0, 0, 22, 2 * (SC23 * C5 + C23 * C23 * C4S5)),
        # a12
        (0, 1, 4, S2), (0, 1, 8, C23), (0, 1, 9, C2), (0, 1, 13, S23), (0, 1, 15, -C23 * S4S5),
        (0, 1, 16, S2 * S4S5), (0, 1, 18, x18), (0, 1, 19, S23 * S4 * C4), (0, 1, 20, S4 * C5 * v),
        (0, 1, 22, S23 * S4S5),
        # a13
        (0, 2, 8, C23), (0, 2, 13, S23), (0, 2, 15, -C23 * S4S5), (0, 2, 18, x18), (0, 2, 19, S23 * S4 * C4),
        (0, 2, 20, S4 * C5 * v), (0, 2, 22, S23 * S4S5),
        # a14
        (0, 3, 14, C23), (0, 3, 15, S23 * C4S5), (0, 3, 16, C2 * C4S5), (0, 3, 18, C23 * S4S5),
        (0, 3, 20, -S5 * v), (0, 3, 22, C23 * C4S5),
        # a15
        (0, 4, 15, S23 * S4 * C5), (0, 4, 16, C2 * S4 * C5), (0, 4, 17, S23 * S4),
        (0, 4, 18, S23 * S5 - C23 * C4 * C5), (0, 4, 22, C23 * S4 * C5),
        # a16
        (0, 5, 23, C23 * C5 - S23 * C4S5),
        # a22
        (1, 1, 2, one), (1, 1, 6, one), (1, 1, 5, 2 * S3), (1, 1, 12, 2 * C3), (1, 1, 15, 2 * C5),
        (1, 1, 16, 2 * (S3 * C5 + C3 * C4S5)), (1, 1, 22, 2 * C4S5), (1, 1, 20, ssx), (1, 1, 21, SS4),
        # a23
        (1, 2, 6, one), (1, 2, 5, S3), (1, 2, 12, C3), (1, 2, 15, 2 * C5), (1, 2, 16, S3 * C5 + C3 * C4S5),
        (1, 2, 22, 2 * C4S5), (1, 2, 20, ssx), (1, 2, 21, SS4),
        # a24, a25, a26
        (1, 3, 15, -S4S5), (1, 3, 16, -S3 * S4S5), (1, 3, 20, S4S5 * C5),
        (1, 4, 15, C4 * C5), (1, 4, 16, C3 * S5 + S3 * C4 * C5), (1, 4, 17, C4), (1, 4, 22, S5),
        (1, 5, 23, S4S5),
        # a33, a34, a35, a36
        (2, 2, 6, one), (2, 2, 15, 2 * C5), (2, 2, 22, 2 * C4S5), (2, 2, 20, ssx), (2, 2, 21, SS4),
        (2, 3, 15, -S4S5), (2, 3, 20, S4S5 * C5),
        (2, 4, 15, C4 * C5), (2, 4, 17, C4), (2, 4, 22, S5),
        (2, 5, 23, S4S5),
        # a44, a46, a55, a66 (a45 = a56 = 0)
        (3, 3, 14, one), (3, 3, 20, -SS5), (3, 5, 23, C5), (4, 4, 17, one), (5, 5, 23, one),
    ]


def _gravity_basis(q: np.ndarray) -> np.ndarray:
    """dG/dg_k, k = 1..5 (spec/models.md §7): ``(N, 6, 5)``, gravity along -z0, tau = holding torque."""
    S2, C2 = np.sin(q[:, 1]), np.cos(q[:, 1])
    S23, C23 = np.sin(q[:, 1] + q[:, 2]), np.cos(q[:, 1] + q[:, 2])
    S4, C4 = np.sin(q[:, 3]), np.cos(q[:, 3])
    S5, C5 = np.sin(q[:, 4]), np.cos(q[:, 4])
    B = np.zeros((q.shape[0], 6, 5))
    w = S23 * C5 + C23 * C4 * S5
    B[:, 1, 0] = C2
    B[:, 1, 1] = B[:, 2, 1] = S23
    B[:, 1, 2] = S2
    B[:, 1, 3] = B[:, 2, 3] = C23
    B[:, 1, 4] = B[:, 2, 4] = w
    B[:, 3, 4] = -S23 * S4 * S5
    B[:, 4, 4] = C23 * S5 + S23 * C4 * C5
    return B


def _inertial_regressor(q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
    """Columns of I1..I23: ``A_k(q) qdd + c_k(q, qd)``, ``(N, 6, 23)``.

    The derivatives of ``A`` come from complex-step differentiation, exact to machine precision:
    one evaluation at ``q + i h qd`` gives ``A`` (real part) and ``dA/dt = sum_m dA/dq_m qd_m``
    (imaginary part / h); one evaluation at ``q + i h e_m`` for each of q2..q5 (A does not depend on
    q1, q6) gives ``dA/dq_m``. Then ``c = (dA/dt) qd - 1/2 d(qd^T A qd)/dq``.
    """
    n = q.shape[0]
    Y = np.zeros((n, 6, _N_INERTIAL))
    probes = (1, 2, 3, 4)  # joints A depends on
    for a in range(0, n, _CHUNK):
        b = min(n, a + _CHUNK)
        qc, qdc, qddc = q[a:b], qd[a:b], qdd[a:b]
        m = b - a
        Q = np.empty((1 + len(probes), m, 6), dtype=complex)
        Q[:] = qc
        Q[0] += 1j * _H * qdc
        for r, j in enumerate(probes):
            Q[1 + r, :, j] += 1j * _H
        Yc = Y[a:b]
        for i, j, k, phi in _mass_terms(_Trig(Q)):
            val = phi[0].real                          # dA_ij/dI_k at q
            rate = phi[0].imag / _H                    # its time derivative along qd
            col = Yc[:, :, k - 1]
            col[:, i] += val * qddc[:, j] + rate * qdc[:, j]
            quad = qdc[:, i] * qdc[:, j]
            if i != j:
                col[:, j] += val * qddc[:, i] + rate * qdc[:, i]
                quad = 2.0 * quad
            for r, jm in enumerate(probes):
                col[:, jm] -= 0.5 * (phi[1 + r].imag / _H) * quad
    return Y


# ------------------------------------------------------------------------------ configuration helpers

def _per_joint(model: DynamicModel, key: str, default: float) -> np.ndarray:
    raw = model.option(key)
    if raw is None:
        return np.full(6, default)
    if isinstance(raw, (str, bytes)) or not isinstance(raw, Sequence) or len(raw) != 6:
        raise ConfigError(f"{key} of model {model.name!r} must be a list of 6 numbers (one per joint), got {raw!r}")
    out = []
    for j, v in enumerate(raw):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ConfigError(f"{key}[{j}] of model {model.name!r} must be a finite number, got {v!r}")
        out.append(float(v))
    return np.array(out)


def _geometry(model: DynamicModel) -> dict[str, float]:
    raw = model.option("geometry")
    if raw is None:
        return dict(AKB_GEOMETRY)
    if not isinstance(raw, Mapping):
        raise ConfigError(f"geometry of model {model.name!r} must be a mapping {{d2, d3, a2, a3, d4}} [m], got {raw!r}")
    unknown = sorted(set(raw) - set(AKB_GEOMETRY))
    if unknown:
        raise ConfigError(f"unknown geometry key {unknown[0]!r} for model {model.name!r}",
                          hint="geometry keys are d2, d3, a2, a3, d4 [m]")
    geo = dict(AKB_GEOMETRY)
    for k, v in raw.items():
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ConfigError(f"geometry.{k} of model {model.name!r} must be a finite number [m], got {v!r}")
        geo[k] = float(v)
    return geo


class _PumaBase(DynamicModel):
    element = "PUMA"
    status = "verified"
    config_keys = _COMMON_KEYS

    def __init__(self, config=None) -> None:
        super().__init__(config)
        self.joints = tuple(Joint(n, "rotary") for n in self._joint_names([f"A{i}" for i in range(1, 7)]))
        sign = _per_joint(self, "joint_sign", 1.0)
        if not np.all(np.abs(sign) == 1.0):
            raise ConfigError(f"joint_sign of model {self.name!r} must hold only +1 or -1, got {sign.tolist()}")
        self.joint_sign = sign
        self.joint_offset = _per_joint(self, "joint_offset", 0.0)
        lz = self.option("payload_lz", 0.0)
        if isinstance(lz, bool) or not isinstance(lz, (int, float)) or not math.isfinite(lz):
            raise ConfigError(f"payload_lz of model {self.name!r} must be a finite number [m], got {lz!r}")
        self.payload_lz = float(lz)
        self.geometry = _geometry(self)

    def _to_model(self, q, qd, qdd):
        s = self.joint_sign
        return s * q + self.joint_offset, s * qd, s * qdd

    def _regressor(self, q, qd, qdd):
        Y = self._model_regressor(*self._to_model(q, qd, qdd))
        return self.joint_sign[None, :, None] * Y

    def _model_regressor(self, q, qd, qdd) -> np.ndarray:
        raise NotImplementedError

    def _payload_delta(self) -> np.ndarray:
        """Parameter increments ``(n_params,)`` due to the configured payload."""
        raise NotImplementedError

    def _offset(self, q, qd, qdd):
        if self.payload.is_zero:
            return np.zeros_like(q)
        return self._regressor(q, qd, qdd) @ self._payload_delta()


# ------------------------------------------------------------------------------ the models

_I_DESCRIPTIONS = {
    1: "I1zz + m1 l1y^2 + m2 d2^2 + (m4+m5+m6) a3^2 + m2 l2z^2 + (m3+..+m6)(d2+d3)^2 + I2xx + I3yy + 2 m2 d2 l2z "
       "+ m2 l2y^2 + m3 l3z^2 + 2 m3 (d2+d3) l3z + I4zz + I5yy + I6zz",
    2: "I2zz + m2 (l2x^2 + l2y^2) + (m3+m4+m5+m6) a2^2",
    3: "-I2xx + I2yy + (m3+m4+m5+m6) a2^2 + m2 l2x^2 - m2 l2y^2",
    4: "m2 l2x (d2 + l2z) + m3 a2 l3z + (m3+m4+m5+m6) a2 (d2+d3)",
    5: "-m3 a2 l3y + (m4+m5+m6) a2 d4 + m4 a2 l4z",
    6: "I3zz + m3 l3y^2 + m4 a3^2 + m4 (d4 + l4z)^2 + I4yy + m5 a3^2 + m5 d4^2 + I5zz + m6 a3^2 + m6 d4^2 "
       "+ m6 l6z^2 + I6xx",
    7: "m3 l3y^2 + I3xx - I3yy + m4 l4z^2 + 2 m4 d4 l4z + (m4+m5+m6)(d4^2 - a3^2) + I4yy - I4zz + I5zz - I5yy "
       "+ m6 l6z^2 - I6zz + I6xx",
    8: "-m4 (d2+d3)(d4 + l4z) - (m5+m6)(d2+d3) d4 + m3 l3y l3z + m3 (d2+d3) l3y",
    9: "m2 l2y (d2 + l2z)",
    10: "2 m4 a3 l4z + 2 (m4+m5+m6) a3 d4",
    11: "-2 m2 l2x l2y",
    12: "(m4+m5+m6) a2 a3",
    13: "(m4+m5+m6) a3 (d2+d3)",
    14: "I4zz + I5yy + I6zz",
    15: "m6 d4 l6z",
    16: "m6 a2 l6z",
    17: "I5zz + I6xx + m6 l6z^2",
    18: "m6 (d2+d3) l6z",
    19: "I4yy - I4xx + I5zz - I5yy + m6 l6z^2 + I6xx - I6zz",
    20: "I5yy - I5xx - m6 l6z^2 + I6zz - I6xx",
    21: "I4xx - I4yy + I5xx - I5zz",
    22: "m6 a3 l6z",
    23: "I6zz",
}

_G_DESCRIPTIONS = (
    "-g (m2 l2x + (m3+m4+m5+m6) a2): coefficient of C2 in G2",
    "g (m3 l3y - m4 l4z - (m4+m5+m6) d4): coefficient of S23 in G2, G3",
    "g m2 l2y: coefficient of S2 in G2",
    "-g (m4+m5+m6) a3: coefficient of C23 in G2, G3",
    "-g m6 l6z: coefficient of the wrist terms in G2..G5",
)

# AKB PUMA 560 (Corke's AKB link data, I1zz = 0.35, m1 l1y^2 = 0) through spec/models.md §6-7, g = 9.80665
_AKB_EXAMPLE = (
    1.553261063, 1.748114002, 1.601861202, 0.690314699, 0.372123081, 0.313747409, 0.298577184, -0.1340594295,
    0.023751, -0.021347277, -0.0141984, -0.010956925, -0.0038087875, 0.00164, 0.001247328, 0.001243584,
    0.00064216, 0.000432288, 0.00030216, -0.00020216, -0.0001, -5.8464e-05, 4e-05,
    -37.2220226735, -8.45132193675, 1.02381426, 0.24884374375, -0.028243152,
)


def _link6_columns(geo: Mapping[str, float], g: float) -> np.ndarray:
    """How I1..I23 and g1..g5 change with link-6 quantities ``(28, 4)``.

    Columns: mass [kg], first moment m·l6z [kg m], inertia about the x6 (= y6) axis through the wrist
    centre I6xx + m6 l6z^2 [kg m^2], inertia about z6 [kg m^2] (read off the definitions of §6–7).
    """
    d23, a2, a3, d4 = geo["d2"] + geo["d3"], geo["a2"], geo["a3"], geo["d4"]
    D = np.zeros((28, 4))
    M, F, JX, JZ = 0, 1, 2, 3
    D[0, M], D[0, JZ] = a3**2 + d23**2, 1.0              # I1
    D[1, M] = D[2, M] = a2**2                              # I2, I3
    D[3, M] = a2 * d23                                     # I4
    D[4, M] = a2 * d4                                      # I5
    D[5, M], D[5, JX] = a3**2 + d4**2, 1.0                 # I6
    D[6, M], D[6, JX], D[6, JZ] = d4**2 - a3**2, 1.0, -1.0  # I7
    D[7, M] = -d23 * d4                                    # I8
    D[9, M] = 2 * a3 * d4                                  # I10
    D[11, M] = a2 * a3                                     # I12
    D[12, M] = a3 * d23                                    # I13
    D[13, JZ] = 1.0                                        # I14
    D[14, F], D[15, F] = d4, a2                            # I15, I16
    D[16, JX] = 1.0                                        # I17
    D[17, F] = d23                                         # I18
    D[18, JX], D[18, JZ] = 1.0, -1.0                       # I19
    D[19, JX], D[19, JZ] = -1.0, 1.0                       # I20
    D[21, F] = a3                                          # I22
    D[22, JZ] = 1.0                                        # I23
    D[23, M] = -g * a2                                     # g1
    D[24, M] = -g * d4                                     # g2
    D[26, M] = -g * a3                                     # g4
    D[27, F] = -g                                          # g5
    return D


def _payload_link6(mass: float, inertia: float, lz: float) -> np.ndarray:
    """Link-6 increments (mass, first moment, x6 inertia at the wrist centre, z6 inertia) of a point
    mass ``mass`` [kg] at ``lz`` [m] on z6 with ``inertia`` [kg m^2] about z6."""
    return np.array([mass, mass * lz, mass * lz**2, inertia])


@register_model
class Puma(_PumaBase):
    """PUMA 560 full rigid-body model in the AKB constants (softMC Dynamic Model 1).

    Parameters (SI): ``I1..I23`` [kg m^2] (softMC ``DynamicParameter[1..23]``), ``g1..g5`` [N m]
    (``DynamicParameter[24..28]``).

    Parameters
    ----------
    config : mapping or ModelConfig, optional
        Common keys plus ``joint_sign``, ``joint_offset`` (per joint), ``payload_lz``, ``geometry``.

    Examples
    --------
    >>> import numpy as np
    >>> from dynid.models import make_model
    >>> m = make_model("puma")
    >>> tau = m.torque(m.example_parameters(), np.zeros((1, 6)), np.zeros((1, 6)), np.zeros((1, 6)))
    >>> round(float(tau[0, 1]), 2)   # shoulder holding torque in the L pose [N m]
    -36.97
    """

    name = "puma"
    title = "PUMA 560 (6R), Armstrong-Khatib-Burdick model: 23 inertial + 5 gravity constants"
    softmc_model = 1
    notes = ("AKB frames (modified DH as Corke's mdl_puma560akb): q = 0 is the L-shaped pose, gravity along -z0. "
             "DynamicParameter[1..23] = I1..I23 (kg m^2, AKB 1986 with corrected constants: help(dynid.models.puma)); "
             "DynamicParameter[24..28] = g1..g5 (N m), the AKB gravity constants (softMC publishes no gravity "
             "numbering for model 1: this is dynid's choice). Velocity terms are the Christoffel terms of the "
             "AKB inertia matrix with exact derivatives. q_model = joint_sign*q + joint_offset, "
             "tau = joint_sign*tau_model. Rotor inertias of joints 3..6 are not representable by the constants: "
             "use friction 'viscous+coulomb+armature'. Payload: point mass at payload_lz on z6, inertia about z6.")

    def __init__(self, config=None) -> None:
        super().__init__(config)
        params = [Parameter(f"I{k}", "kg m^2", _I_DESCRIPTIONS[k], k) for k in range(1, 24)]
        params += [Parameter(f"g{k}", "N m", _G_DESCRIPTIONS[k - 1], 23 + k) for k in range(1, 6)]
        self.parameters = tuple(params)

    def _model_regressor(self, q, qd, qdd):
        return np.concatenate([_inertial_regressor(q, qd, qdd), _gravity_basis(q)], axis=2)

    def _payload_delta(self):
        return _link6_columns(self.geometry, self.gravity) @ _payload_link6(
            self.payload.mass, self.payload.inertia, self.payload_lz)

    def example_parameters(self):
        """The AKB PUMA 560 (Corke's link data): I1..I23 [kg m^2], g1..g5 [N m] for g = 9.80665."""
        p = np.array(_AKB_EXAMPLE)
        p[23:] *= self.gravity / 9.80665
        return tuple(p.tolist())


@register_model
class PumaGravity(_PumaBase):
    """PUMA 560 semi-static model: gravity only (softMC Dynamic Model 2).

    ``tau2 = -P1 C2 - P2 C23 - P3 S23 - P4 w - P5 S2``, ``tau3 = -P2 C23 - P3 S23 - P4 w``,
    ``tau4 = P4 S23 S4 S5``, ``tau5 = -P4 (C23 S5 + S23 C4 C5)``, ``tau1 = tau6 = 0``,
    ``w = S23 C5 + C23 C4 S5``; so P1 = -g1, P2 = -g4, P3 = -g2, P4 = -g5, P5 = -g3 of the AKB
    constants. P5 (the shoulder's COM offset along y2, about 1 N m on the AKB arm) is not in softMC's
    four-parameter list; ``include_g3: false`` drops it. Six ``DynamicParameter`` slots are written,
    unused ones 0, as in softMC's example PRG.

    Semi-static: velocity and acceleration terms are not modelled, so by default samples faster than
    half of each axis' peak velocity are not used (``upper_velocity_fraction`` = 0.5, softMC's
    second velocity threshold).
    """

    name = "puma-gravity"
    title = "PUMA 560 (6R), semi-static gravity model"
    softmc_model = 2
    upper_velocity_fraction = 0.5
    config_keys = {**_COMMON_KEYS,
                   "include_g3": "true (default): also fit P5 = -g m2 l2y (AKB g3, shoulder COM offset along y2) in "
                                 "DynamicParameter[5]; false: softMC's four parameters only"}
    notes = ("Gravity + friction only, for slow motions; samples above 50 % of each axis' peak velocity are "
             "excluded by default (softMC's upper velocity threshold). P1..P4 of the AKB gravity vector "
             "(P1 = -g1, P2 = -g4, P3 = -g2, P4 = -g5); P5 = -g3 unless include_g3 is false; 6 slots written, "
             "unused ones 0. Same frames and joint_sign/joint_offset as 'puma'.")

    _P = (
        ("P1", "g (m2 l2x + (m3+m4+m5+m6) a2) = -g1: shoulder gravity moment, basis -C2 on joint 2"),
        ("P2", "g (m4+m5+m6) a3 = -g4: basis -C23 on joints 2, 3"),
        ("P3", "g (m4 l4z + (m4+m5+m6) d4 - m3 l3y) = -g2: basis -S23 on joints 2, 3"),
        ("P4", "g m6 l6z = -g5: wrist term, basis -w on joints 2..5"),
        ("P5", "-g m2 l2y = -g3: basis -S2 on joint 2 (not in softMC's list)"),
    )

    def __init__(self, config=None) -> None:
        super().__init__(config)
        inc = self.option("include_g3", True)
        if not isinstance(inc, bool):
            raise ConfigError(f"include_g3 of model {self.name!r} must be true or false, got {inc!r}")
        self.include_g3 = inc
        n = 5 if inc else 4
        self.parameters = tuple(Parameter(name, "N m", desc, k + 1) for k, (name, desc) in enumerate(self._P[:n]))

    @property
    def n_slots(self) -> int:
        """softMC writes DynamicParameter[1..6] for PUMA model 2 (unused slots 0)."""
        return 6

    def _model_regressor(self, q, qd, qdd):
        B = _gravity_basis(q)                      # columns g1..g5
        order = [0, 3, 1, 4, 2][: self.n_params]   # P1..P5 <-> g1, g4, g2, g5, g3
        return -B[:, :, order]

    def _payload_delta(self):
        d = _link6_columns(self.geometry, self.gravity)[23:] @ _payload_link6(
            self.payload.mass, self.payload.inertia, self.payload_lz)
        return -d[[0, 3, 1, 4, 2][: self.n_params]]

    def example_parameters(self):
        """The AKB PUMA 560: P1..P4 (and P5) [N m] for the configured gravity."""
        g = np.array(_AKB_EXAMPLE[23:]) * self.gravity / 9.80665
        return tuple((-g[[0, 3, 1, 4, 2][: self.n_params]]).tolist())
