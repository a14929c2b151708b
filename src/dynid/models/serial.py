"""``serial``: any fixed-base serial robot from a URDF or a DH table (spec/models.md §9).

Parameters: the standard ten inertial parameters of every moving link, in the link frame, in the
order of Khalil & Dombre (2002)::

    <link>.Ixx <link>.Ixy <link>.Ixz <link>.Iyy <link>.Iyz <link>.Izz  <link>.mx <link>.my <link>.mz  <link>.m

the inertia about the link-frame origin [kg m²], ``(mx, my, mz) = m·c`` [kg m] with ``c`` the centre
of mass, and ``m`` [kg]. With that order the structural base parameters (greedy in column order)
keep the inertias and regroup masses and first moments, as the textbook grouping rules do, so
their expressions read like ``link_4.Izz + link_5.Iyy``. Link names are the URDF child-link names (``link1..linkn`` for DH). The
link frame is the URDF link frame (= joint frame) for URDF and modified DH, and the distal DH frame
``i`` for standard DH. The regressor is a batched recursive Newton–Euler (:mod:`._rnea`), checked
against Pinocchio. Friction and rotor inertia (``armature``) are not model columns: the shared
friction block adds them per joint.

Sources of the chain, in this order:

1. ``urdf=FILE`` (``dynid identify --urdf FILE``) or the configuration key ``urdf``; the parsed chain
   is stored in the configuration under ``chain``, so ``result.json`` rebuilds the model without the
   file or a URDF parser;
2. ``chain`` (a chain description, see :mod:`._urdf`);
3. ``dh`` (+ ``convention``, ``links`` priors).

Without one of them the model is a :class:`~dynid.errors.ConfigError` naming ``urdf``: a robot is never
guessed. :meth:`Serial.example` (``dynid models``, the conformance tests) is a PUMA 560 in standard DH with the
link values of Corke's ``mdl_puma560`` (Corke & Armstrong-Hélouvry 1994), :data:`PUMA560_CONFIG` its
configuration.

Gravity acts along ``gravity_direction`` (base frame, default ``[0, 0, -1]``) with magnitude
``gravity``. A fixed base rotation (e.g. a ceiling mount) is expressed through that direction.

Payload: the ``payload`` mass [kg] is a point mass at ``payload_com`` [m] in the last link frame
(default its origin) and the payload ``inertia`` [kg m²] is about the last joint's axis through that
point (softMC ``PayloadInertia`` is about the tool axis). Both enter as known torque (``offset``),
never as columns.

Counterbalance (``counterbalance``, a list; spec/interfaces.md §4, :mod:`.counterbalance`): gas or
spring cylinders on rotary joints (e.g. a heavy robot's axis 2). Their parameters follow the inertial
ones, in the order of the list: ``CB<j>.c`` [J] (gas), ``CB<j>.k`` [N/m] and ``CB<j>.F0`` [N]
(spring), ``<j>`` the 1-based joint. Their columns ``h·A/(V0 − A s)`` (gas), ``h·s`` and ``h``
(spring) are added to joint ``j``'s row of the regressor, so regressor, torque, simulation and runtime
include them; the symbolic derivation (``dynid derive``/``codegen``) rejects them.

softMC has no generic serial DynamicModel: the PRG records ``DynamicModel = 1`` and the standard
parameters in ``DynamicParameter[1..10 n]`` for reference only, the counterbalance parameters in the
slots after them (``10 n + 1, ...``); no firmware model reads them.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from .config import ModelConfig
from ..errors import ConfigError
from ._rnea import chain_torque, BODY_PARAM_NAMES, N_BODY_PARAMS, chain_regressor, compile_chain
from ._urdf import body_parameters, chain_elements, check_chain, dh_chain, read_urdf
from .base import DynamicModel, Joint, Parameter
from .counterbalance import PARAMETERS as _CB_PARAMETERS
from .counterbalance import Counterbalance, parse_counterbalances
from .registry import register_model

__all__ = ["Serial", "PUMA560_DH", "PUMA560_CONFIG"]

_UNITS = {"m": "kg", "mx": "kg m", "my": "kg m", "mz": "kg m"}
_DESCRIPTIONS = {
    "m": "mass", "mx": "first moment m*c_x", "my": "first moment m*c_y", "mz": "first moment m*c_z",
    "Ixx": "inertia xx about the link origin", "Ixy": "inertia xy about the link origin",
    "Ixz": "inertia xz about the link origin", "Iyy": "inertia yy about the link origin",
    "Iyz": "inertia yz about the link origin", "Izz": "inertia zz about the link origin",
}

_DEG = np.pi / 180.0
#: PUMA 560, standard DH, as Corke's ``mdl_puma560`` (values from Corke & Armstrong-Hélouvry 1994).
PUMA560_DH: tuple[dict[str, Any], ...] = (
    {"a": 0.0, "alpha": np.pi / 2, "d": 0.0, "limits": [-160 * _DEG, 160 * _DEG]},
    {"a": 0.4318, "alpha": 0.0, "d": 0.0, "limits": [-45 * _DEG, 225 * _DEG]},
    {"a": 0.0203, "alpha": -np.pi / 2, "d": 0.15005, "limits": [-225 * _DEG, 45 * _DEG]},
    {"a": 0.0, "alpha": np.pi / 2, "d": 0.4318, "limits": [-110 * _DEG, 170 * _DEG]},
    {"a": 0.0, "alpha": -np.pi / 2, "d": 0.0, "limits": [-100 * _DEG, 100 * _DEG]},
    {"a": 0.0, "alpha": 0.0, "d": 0.0, "limits": [-266 * _DEG, 266 * _DEG]},
)
_PUMA560_LINKS: tuple[dict[str, Any], ...] = (
    {"mass": 0.0, "com": [0, 0, 0], "inertia": [0, 0, 0, 0.35, 0, 0]},
    {"mass": 17.4, "com": [-0.3638, 0.006, 0.2275], "inertia": [0.13, 0, 0, 0.524, 0, 0.539]},
    {"mass": 4.8, "com": [-0.0203, -0.0141, 0.070], "inertia": [0.066, 0, 0, 0.086, 0, 0.0125]},
    {"mass": 0.82, "com": [0, 0.019, 0], "inertia": [1.8e-3, 0, 0, 1.3e-3, 0, 1.8e-3]},
    {"mass": 0.34, "com": [0, 0, 0], "inertia": [0.3e-3, 0, 0, 0.4e-3, 0, 0.3e-3]},
    {"mass": 0.09, "com": [0, 0, 0.032], "inertia": [0.15e-3, 0, 0, 0.15e-3, 0, 0.04e-3]},
)
#: The configuration of the built-in example (:meth:`Serial.example`): the PUMA 560's DH table and link priors.
PUMA560_CONFIG: dict[str, Any] = {"dh": [dict(r) for r in PUMA560_DH], "links": [dict(k) for k in _PUMA560_LINKS]}


@register_model
class Serial(DynamicModel):
    """Serial robot from a URDF or DH table; ten standard inertial parameters per moving link.

    Parameters
    ----------
    config : ModelConfig or mapping, optional
        Common keys plus ``urdf``, ``chain``, ``dh``, ``convention``, ``links``, ``gravity_direction``,
        ``payload_com`` (see ``config_keys``).
    urdf : path-like, optional
        URDF file (read with yourdfpy, else Pinocchio); overrides ``chain``/``urdf`` in ``config``.

    Examples
    --------
    >>> from dynid.models import make_model
    >>> arm = make_model("serial", {"dh": [{"a": 0.5}, {"a": 0.4}], "gravity_direction": [0, -1, 0]})
    >>> arm.n_joints, arm.param_names[:3], arm.param_names[9]
    (2, ('link1.Ixx', 'link1.Ixy', 'link1.Ixz'), 'link1.m')
    """

    name = "serial"
    title = "Serial robot from a URDF or DH table (10 inertial parameters per link)"
    softmc_model = 1
    element = "ROBOT"
    status = "verified"
    config_keys = {
        "urdf": "URDF file of the robot (or the urdf argument); parsed once, then kept as 'chain'",
        "chain": "parsed kinematic/inertial chain (written automatically from the URDF or DH table)",
        "dh": "DH table: list of {a [m], alpha [rad], d [m], theta_offset [rad], type: revolute|prismatic, limits}",
        "convention": "DH convention: standard (default; Rz Tz Tx Rx, distal frames) or modified (Rx Tx Rz Tz)",
        "links": "DH only: inertial priors per link {mass [kg], com [m], inertia [kg m^2] about the COM "
                 "as [ixx, ixy, ixz, iyy, iyz, izz]}",
        "gravity_direction": "unit vector of gravity in the base frame, default [0, 0, -1]",
        "payload_com": "payload centre of mass in the last link frame [m], default [0, 0, 0]",
        "counterbalance": "gas or spring cylinders: list of {joint: 1-based number or name, kind: gas|spring, "
                          "base_distance D [m], link_distance k [m], angle_offset [rad] (delta = q_j + offset), "
                          "area [m^2] and volume [m^3] (gas only)}; torque h*F on joint j, parameters "
                          "CB<j>.c [J] (gas) or CB<j>.k [N/m], CB<j>.F0 [N] (spring)",
    }
    notes = ("Parameters: m, m*c and the inertia about the link-frame origin for each moving link (URDF link frame; "
             "distal frame for standard DH). Fixed URDF joints are merged into the moving link they hang from. "
             "Payload: point mass at payload_com in the last link frame plus inertia about the last joint axis. "
             "Counterbalance cylinders (key counterbalance) add CB<j>.c (gas, J) or CB<j>.k, CB<j>.F0 (spring) after "
             "the inertial parameters. "
             "softMC has no generic serial model: the PRG writes DynamicModel = 1 and the standard parameters "
             "for reference only.")

    def __init__(self, config: ModelConfig | Mapping[str, Any] | None = None, urdf: str | Path | None = None) -> None:
        if urdf is not None:
            data = config.to_dict() if isinstance(config, ModelConfig) else dict(config or {})
            data["urdf"] = str(Path(urdf).resolve())
            data["chain"] = read_urdf(urdf)
            data["chain"]["source"] = {"urdf": data["urdf"], "sha256": _sha256(urdf)}
            config = data
        super().__init__(config)
        opts = self.config.options
        for key in ("convention", "links"):
            if key in opts and "dh" not in opts:
                raise ConfigError(f"configuration key {key!r} needs a 'dh' table", hint="add dh: [...] or remove it")
        if "dh" in opts and ("chain" in opts or "urdf" in opts):
            raise ConfigError("give either a URDF ('urdf' or 'chain') or a 'dh' table, not both", options=("urdf",))
        if "chain" in opts:
            chain = opts["chain"]
            check_chain(chain, where="configuration 'chain'")
        elif "urdf" in opts:
            chain = read_urdf(opts["urdf"])
            chain["source"] = {"urdf": str(Path(opts["urdf"]).resolve()), "sha256": _sha256(opts["urdf"])}
            self.config = replace(self.config, options={**opts, "chain": chain})
        elif "dh" in opts:
            chain = dh_chain(opts["dh"], opts.get("convention", "standard"), opts.get("links"))
        else:
            raise ConfigError("model 'serial' needs the robot: a URDF file or a DH table ('dh' in the configuration); "
                              "none was given", hint="give the robot's URDF, or a dh table in the configuration",
                              options=("urdf", "config"))
        self.chain = chain
        elements, self._C, self._q_offset, actuated = chain_elements(chain)
        self._compiled = compile_chain(elements)
        self._mimic = bool(np.any(self._q_offset)) or self._C.shape[0] != self._C.shape[1]
        links = chain["links"]
        kinds = ["linear" if links[k]["type"] == "prismatic" else "rotary" for k in actuated]
        names = self._joint_names([f"A{i + 1}" for i in range(len(actuated))])
        self.joints = tuple(Joint(n, kd) for n, kd in zip(names, kinds))
        self._actuated = tuple(actuated)
        self.link_names = tuple(link["name"] for link in links)
        inertial = tuple(
            Parameter(f"{ln}.{pn}", _UNITS.get(pn, "kg m^2"), f"{ln}: {_DESCRIPTIONS[pn]}", N_BODY_PARAMS * b + k + 1)
            for b, ln in enumerate(self.link_names) for k, pn in enumerate(BODY_PARAM_NAMES))
        self.counterbalances: tuple[Counterbalance, ...] = parse_counterbalances(
            opts.get("counterbalance"), self.joints, self._known_limits())
        extra = []
        for cb in self.counterbalances:
            for suffix, unit, text in _CB_PARAMETERS[cb.kind]:
                extra.append(Parameter(f"{cb.name}.{suffix}", unit,
                                       f"{cb.kind} counterbalance on joint {cb.joint + 1} ({self.joints[cb.joint].name}): "
                                       f"{text}", len(inertial) + len(extra) + 1))
        self.parameters = inertial + tuple(extra)   # names cannot clash: link parameters end in .Ixx .. .m
        if any(cb.kind == "spring" for cb in self.counterbalances):
            # k_s*s^2/2 holds -k_s*D*k*cos(delta), gravity-like: when collinear, keep F0 and regroup k
            self.prefer_dependent = tuple(f"{cb.name}.k" for cb in self.counterbalances if cb.kind == "spring")
        self._gravity_vec = self.gravity * _unit(opts.get("gravity_direction", [0.0, 0.0, -1.0]), "gravity_direction")
        self._payload_pi = self._payload_parameters(opts.get("payload_com", [0.0, 0.0, 0.0]))

    @classmethod
    def example(cls) -> "Serial":
        """The built-in example robot, a PUMA 560 (standard DH, :data:`PUMA560_CONFIG`): never a default."""
        model = cls({k: [dict(r) for r in v] for k, v in PUMA560_CONFIG.items()})
        model.chain["robot"] = "puma560 (built-in example)"
        return model

    # ------------------------------------------------------------------ dynamics
    def _regressor(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        Y = self._rigid_regressor(q, qd, qdd)
        if not self.counterbalances:
            return Y
        return np.concatenate([Y, self._counterbalance_columns(q)], axis=2)

    def _counterbalance_columns(self, q: np.ndarray) -> np.ndarray:
        """``(N, n_joints, n_counterbalance_params)``: each cylinder's columns on its joint's row."""
        cols = np.zeros((q.shape[0], self.n_joints, self.n_params - N_BODY_PARAMS * len(self.link_names)))
        k = 0
        for cb in self.counterbalances:
            cols[:, cb.joint, k:k + cb.n_params] = cb.columns(q[:, cb.joint])
            k += cb.n_params
        return cols

    def _rigid_regressor(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """Newton–Euler regressor of the inertial parameters ``(N, n_joints, 10 n_links)``."""
        if self._mimic:
            C = self._C
            q, qd, qdd = q @ C.T + self._q_offset, qd @ C.T, qdd @ C.T
        Y = chain_regressor(self._compiled, q, qd, qdd, self._gravity_vec)
        if self._mimic:  # torque of an actuated joint = sum over the bodies it drives
            Y = np.einsum("nbp,bj->njp", Y, self._C)
        return Y

    def _torque(self, p: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """``Y @ p + offset`` by the compiled kernel's fused torque (no regressor stored; the payload added to
        the last body's parameters, which is what the offset computes), else as every model does."""
        nb = N_BODY_PARAMS * len(self.link_names)
        if self._mimic or nb != N_BODY_PARAMS * self._compiled.n:
            return super()._torque(p, q, qd, qdd)
        pi = p[:nb]
        if self._payload_pi is not None:
            pi = pi.copy()
            pi[-N_BODY_PARAMS:] += self._payload_pi
        tau = chain_torque(self._compiled, q, qd, qdd, self._gravity_vec, pi)
        if tau is None:
            return super()._torque(p, q, qd, qdd)
        if self.counterbalances:
            tau += self._counterbalance_columns(q) @ p[nb:]
        return tau

    def _offset(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        if self._payload_pi is None:
            return np.zeros_like(q)
        return self._rigid_regressor(q, qd, qdd)[:, :, -N_BODY_PARAMS:] @ self._payload_pi

    def _payload_parameters(self, com: Sequence[float]) -> np.ndarray | None:
        try:
            c = np.array(com, dtype=float).reshape(3)
        except (TypeError, ValueError):
            raise ConfigError(f"payload_com must be 3 numbers [x, y, z] in m, got {com!r}") from None
        if self.payload.is_zero:
            return None
        sw = self._compiled.screw[-1, :3]
        axis = sw / np.linalg.norm(sw) if np.any(sw) else np.array([0.0, 0.0, 1.0])
        return body_parameters(self.payload.mass, c, self.payload.inertia * np.outer(axis, axis))

    # ------------------------------------------------------------------ priors and limits
    def prior_parameters(self) -> np.ndarray | None:
        """Inertial values of the URDF (or the DH ``links`` priors) ``(n_params,)``, or ``None``; the
        counterbalance parameters' prior is 0 (no cylinder)."""
        inertia = [link.get("inertia") for link in self.chain["links"]]
        if any(i is None for i in inertia):
            return None
        n_cb = self.n_params - N_BODY_PARAMS * len(self.link_names)
        return np.concatenate([np.asarray(i, dtype=float) for i in inertia] + [np.zeros(n_cb)])

    def link_parameter_groups(self) -> list[np.ndarray]:
        """Ten parameter indices per moving link (the parameters are link-wise, in Khalil–Dombre order)."""
        return [np.arange(N_BODY_PARAMS * b, N_BODY_PARAMS * (b + 1)) for b in range(len(self.link_names))]

    def example_parameters(self):
        return self.prior_parameters()

    def _known_limits(self) -> list[tuple[float, float] | None]:
        """Per joint ``(lo, hi)`` from ``position_limits`` or the URDF/DH limits, ``None`` where unknown."""
        if self.config.position_limits is not None and len(self.config.position_limits) == self.n_joints:
            return [tuple(map(float, lim)) for lim in self.config.position_limits]
        out = []
        for k in self._actuated:
            lim = self.chain["links"][k].get("limits")
            out.append(None if lim is None else (float(lim[0]), float(lim[1])))
        return out

    def state_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Joint limits ``(lo, hi)`` ``(n_joints,)``: ``position_limits``, else the URDF/DH limits, else ±π rad / ±0.5 m."""
        if self.config.position_limits is not None and len(self.config.position_limits) == self.n_joints:
            lims = np.array(self.config.position_limits, dtype=float)
            return lims[:, 0], lims[:, 1]
        lo, hi = [], []
        for k, joint in zip(self._actuated, self.joints):
            lim = self.chain["links"][k].get("limits")
            default = np.pi if joint.kind == "rotary" else 0.5
            lo.append(float(lim[0]) if lim is not None else -default)
            hi.append(float(lim[1]) if lim is not None else default)
        return np.array(lo), np.array(hi)


def _unit(v: Any, name: str) -> np.ndarray:
    try:
        a = np.array(v, dtype=float).reshape(3)
    except (TypeError, ValueError):
        raise ConfigError(f"{name} must be 3 numbers, got {v!r}") from None
    norm = float(np.linalg.norm(a))
    if not np.isfinite(norm) or norm == 0.0:
        raise ConfigError(f"{name} must be a non-zero finite vector, got {v!r}")
    return a / norm


def _sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
