"""The one model interface every robot implements, and the plant that joins it to the friction block.

A :class:`DynamicModel` is linear in its parameters::

    tau = Y(q, qd, qdd) @ p + offset(q, qd, qdd)

``Y`` has shape ``(N, n_joints, n_params)``; ``offset`` holds the known torque of the configured
payload. Friction and actuator terms are NOT part of a model: :class:`~dynid.models.friction.FrictionModel`
(:mod:`dynid.models.friction`, their one owner) adds them as extra columns, identically for every model,
and :class:`Plant` joins the two. Pipeline, writers,
simulator and runtime only ever talk to a :class:`Plant`.
"""

from __future__ import annotations

import copy

from abc import ABC, abstractmethod
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from .._validation import as_joint_array
from ..errors import ConfigError, ShapeError
from .config import ModelConfig, Payload
from .friction import AUTO_FRICTION, FrictionCoefficients, FrictionModel

__all__ = ["Joint", "Parameter", "DynamicModel", "Plant", "ConfigurationCheck", "TaskSpace"]


@dataclass(frozen=True)
class Joint:
    """A joint: ``name`` (axis name in the PRG, e.g. ``A1``) and ``kind`` (``rotary`` or ``linear``)."""

    name: str
    kind: str

    def __post_init__(self) -> None:
        if self.kind not in ("rotary", "linear"):
            raise ConfigError(f"joint {self.name!r}: kind must be 'rotary' or 'linear', got {self.kind!r}")


@dataclass(frozen=True)
class Parameter:
    """One model parameter.

    name : str
        Name as the catalogue prints it (``I``, ``L^2``, ``M*g*A``).
    unit : str
        SI unit.
    description : str
    slot : int
        softMC ``DynamicParameter[slot]`` index (1-based).
    role : {"dynamic", "payload", "constant"}
        ``dynamic``: identified from an ordinary run. ``payload``: a payload coefficient (L², g·L, ...)
        that only a run with a known payload can identify. ``constant``: a user constant, never fitted.
    positive : bool
        Physically a mass or an inertia about an axis: a value ``<= 0`` is impossible (the verdict fails).
    """

    name: str
    unit: str
    description: str
    slot: int
    role: str = "dynamic"
    positive: bool = False

    def __post_init__(self) -> None:
        if self.role not in ("dynamic", "payload", "constant"):
            raise ConfigError(f"parameter {self.name}: unknown role {self.role!r}")


@dataclass(frozen=True)
class ConfigurationCheck:
    """Limits of a mechanism beyond its joints' own ranges, at ``N`` positions (e.g. a hexapod's U-joint
    angles and distance from singularity). ``value <= limit`` is inside; ``inf`` where it does not assemble.

    names : tuple of str, (k,) ; values : ndarray, (N, k) ; limits : ndarray, (k,) ; units : tuple of str, (k,)
    """

    names: tuple[str, ...]
    values: np.ndarray
    limits: np.ndarray
    units: tuple[str, ...]

    def margins(self) -> np.ndarray:
        """``1 − value/limit`` ``(N, k)``: >= 0 inside the limits, -inf where the mechanism does not assemble."""
        with np.errstate(invalid="ignore"):
            return np.where(np.isfinite(self.values), 1.0 - self.values / self.limits, -np.inf)


@dataclass(frozen=True)
class TaskSpace:
    """Positions of a model's output (a platform's pose, a plate's position) at ``N`` samples, for reports.

    title : str ; names : tuple of str, (k,) ; units : tuple of str, (k,) (SI: m, rad) ; values : ndarray, (N, k)
    """

    title: str
    names: tuple[str, ...]
    units: tuple[str, ...]
    values: np.ndarray


class DynamicModel(ABC):
    """Base class of every robot model (single axes, catalogue robots, URDF chains, parallel robots).

    Subclasses set the class attributes, build ``self.joints`` and ``self.parameters`` in
    ``__init__`` (they may depend on the configuration), and implement :meth:`_regressor`.
    Instances are immutable: derive variants with :meth:`with_payload`.

    Parameters
    ----------
    config : ModelConfig or mapping, optional
        Common keys (spec/interfaces.md §4) plus the model's ``config_keys``.
    """

    name: ClassVar[str]
    title: ClassVar[str]
    softmc_model: ClassVar[int]
    """softMC ``DynamicModel`` number written to the PRG."""
    element: ClassVar[str]
    """Default element name in the PRG (``A1`` for a single axis, ``SCARA``, ``PUMA``, ...)."""
    status: ClassVar[str] = "verified"
    """``verified`` (checked against an independent computation) or ``experimental``."""
    config_keys: ClassVar[Mapping[str, str]] = {}
    notes: ClassVar[str] = ""
    structural_rtol: ClassVar[float | None] = None
    """Relative tolerance for structural rank; ``None`` = numpy's ``matrix_rank`` rule."""
    prefer_dependent: ClassVar[tuple[str, ...]] = ()
    """Parameters to hold first when the model has collinear columns (they go last in the base
    parameters' preference order), e.g. the one whose absorption keeps the others physical."""
    example_config: ClassVar[Mapping[str, Any]] = {}
    """Configuration of a typical robot of this kind (geometry keys a model requires), used by
    :meth:`example`, the conformance tests and ``dynid models``."""
    fourier_dopt_weight: ClassVar[float] = 3.0
    """Default weight of the D-optimal term of the Fourier excitation objective (``dynid excite --fourier``):
    3 keeps serial arms' designs brisk; 0 (the pure condition number) where a D-optimal term trades the
    model's weakest directions away (see the model's notes)."""
    upper_velocity_fraction: ClassVar[float | None] = None
    """Semi-static models (softMC PUMA model 2): default upper velocity threshold per axis as a
    fraction of the axis' peak velocity; samples faster than it are not used (their dynamic forces
    are not in the model). ``None``: no upper threshold."""

    joints: tuple[Joint, ...]
    parameters: tuple[Parameter, ...]

    def __init__(self, config: ModelConfig | Mapping[str, Any] | None = None) -> None:
        if not isinstance(config, ModelConfig):
            config = ModelConfig.from_dict(config, self.config_keys, model_name=self.name)
        self.config = config

    @classmethod
    def example(cls) -> "DynamicModel":
        """A typical robot of this kind, built from :attr:`example_config`."""
        return cls(dict(cls.example_config))

    # ------------------------------------------------------------------ description
    @property
    def n_joints(self) -> int:
        return len(self.joints)

    @property
    def n_params(self) -> int:
        return len(self.parameters)

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.parameters)

    @property
    def joint_kinds(self) -> tuple[str, ...]:
        return tuple(j.kind for j in self.joints)

    @property
    def n_slots(self) -> int:
        """Number of ``DynamicParameter`` slots written to the PRG."""
        return max((p.slot for p in self.parameters), default=0)

    @property
    def gravity(self) -> float:
        return self.config.gravity

    @property
    def payload(self) -> Payload:
        return self.config.payload

    def _joint_names(self, default: Sequence[str]) -> tuple[str, ...]:
        names = self.config.joint_names
        if names is None:
            return tuple(default)
        if len(names) != len(default):
            raise ConfigError(f"joint_names has {len(names)} names but model {self.name!r} has {len(default)} joints")
        return tuple(names)

    def option(self, key: str, default: Any = None) -> Any:
        return self.config.options.get(key, default)

    # ------------------------------------------------------------------ dynamics
    def regressor(self, q, qd, qdd) -> np.ndarray:
        """Regressor ``Y`` with ``tau = Y @ p + offset``.

        Parameters
        ----------
        q, qd, qdd : array-like, shape (N, n_joints)
            Joint positions [rad, m], velocities and accelerations (SI).

        Returns
        -------
        Y : ndarray, shape (N, n_joints, n_params)
        """
        q, qd, qdd = self._check_states(q, qd, qdd)
        Y = self._regressor(q, qd, qdd)
        if Y.shape != (q.shape[0], self.n_joints, self.n_params):  # pragma: no cover - programming error
            raise ShapeError(f"model {self.name}: regressor has shape {Y.shape}")
        return Y

    @abstractmethod
    def _regressor(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """Model-specific regressor on validated ``(N, n_joints)`` float arrays."""

    def offset(self, q, qd, qdd) -> np.ndarray:
        """Known torque not multiplied by any parameter (payload inertia/mass terms) ``(N, n_joints)``."""
        q, qd, qdd = self._check_states(q, qd, qdd)
        return self._offset(q, qd, qdd)

    def _offset(self, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        return np.zeros_like(q)

    def torque(self, p, q, qd, qdd, *, chunk: int = 4096) -> np.ndarray:
        """Rigid-body torque ``Y @ p + offset`` ``(N, n_joints)`` for parameters ``p`` ``(n_params,)``,
        evaluated ``chunk`` samples at a time so memory stays bounded."""
        p = np.asarray(p, dtype=float)
        q, qd, qdd = self._check_states(q, qd, qdd)
        out = np.empty(q.shape)
        for a in range(0, q.shape[0], chunk):  # blocks of samples, each vectorised
            b = slice(a, a + chunk)
            out[b] = self._torque(p, q[b], qd[b], qdd[b])
        return out

    def _torque(self, p: np.ndarray, q: np.ndarray, qd: np.ndarray, qdd: np.ndarray) -> np.ndarray:
        """``Y @ p + offset`` on validated arrays; a model with a faster way (a fused kernel) overrides it."""
        return self._regressor(q, qd, qdd) @ p + self._offset(q, qd, qdd)

    def _check_states(self, q, qd, qdd):
        n = self.n_joints
        q = as_joint_array("q", q, n)
        qd = as_joint_array("qd", qd, n, n_samples=q.shape[0])
        qdd = as_joint_array("qdd", qdd, n, n_samples=q.shape[0])
        return q, qd, qdd

    # ------------------------------------------------------------------ variants and hooks
    def with_config(self, **changes: Any) -> "DynamicModel":
        """The same robot with some :class:`~dynid.models.config.ModelConfig` fields replaced.

        Models whose constructor takes more than the configuration (e.g. a URDF) override this. Only the
        friction model changing (no model reads it: the :class:`Plant` builds its friction block), the robot
        is the same: a copy with the new configuration, not a new build (a URDF chain is not compiled again
        for each candidate friction model of a selection).
        """
        if set(changes) <= {"friction"}:
            twin = copy.copy(self)
            twin.config = replace(self.config, **changes)
            return twin
        return type(self)(replace(self.config, **changes))

    def with_payload(self, mass: float | None = None, inertia: float | None = None) -> "DynamicModel":
        """The same robot carrying another payload (unchanged values where ``None``)."""
        payload = Payload(self.payload.mass if mass is None else mass,
                          self.payload.inertia if inertia is None else inertia)
        return self.with_config(payload=payload)

    def state_bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Typical position range ``(lo, hi)`` ``(n_joints,)`` for random states (structural rank)."""
        lo = np.array([-np.pi if j.kind == "rotary" else -0.5 for j in self.joints])
        if self.config.position_limits is not None and len(self.config.position_limits) == self.n_joints:
            lims = np.array(self.config.position_limits, dtype=float)
            return lims[:, 0], lims[:, 1]
        return lo, -lo

    def sample_states(self, rng: np.random.Generator, n_samples: int):
        """Random states ``(q, qd, qdd)`` inside :meth:`state_bounds`, for structural analysis."""
        lo, hi = self.state_bounds()
        q = rng.uniform(lo, hi, size=(n_samples, self.n_joints))
        qd = rng.normal(size=(n_samples, self.n_joints))
        qdd = rng.normal(size=(n_samples, self.n_joints)) * 3.0
        return q, qd, qdd

    def configuration_check(self, q) -> ConfigurationCheck | None:
        """Mechanism limits at positions ``q`` ``(N, n_joints)`` that the joint ranges do not express
        (excitation design checks them on every sample), or ``None`` (default: none)."""
        return None

    def home_positions(self) -> np.ndarray | None:
        """Joint positions ``(n_joints,)`` of the robot's home pose (where excitation is planned about when
        the source has no program for it), or ``None`` (default)."""
        return None

    def task_space(self, q) -> TaskSpace | None:
        """The output's positions (e.g. a platform's pose) at ``q`` ``(N, n_joints)``, or ``None`` (default)."""
        return None

    def example_parameters(self) -> Sequence[float] | None:
        """Physically plausible parameters ``(n_params,)`` of a typical robot of this kind (simulator,
        tests, examples), or ``None``."""
        return None

    def check_parameters(self, values) -> None:
        """Reject parameter values this model's torque would silently ignore (a mapping {name: value} or all
        ``(n_params,)`` values in catalogue order, e.g. from a softMC PRG); raises :class:`ConfigError`
        naming the parameter. The default accepts every value."""

    def prior_parameters(self) -> Sequence[float] | None:
        """Prior values ``(n_params,)`` at which parameters the data cannot identify are held (e.g. a
        URDF's inertial values), or ``None`` to hold them at 0."""
        return None

    def link_parameter_groups(self) -> list[np.ndarray]:
        """Indices of each rigid link's ten standard inertial parameters, or ``[]``.

        Each group is an int array ``(10,)`` of parameter indices in the order
        ``[Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m]`` (inertia about the link-frame origin [kg m²],
        first moments m·c [kg m], mass [kg]). Models that expose such groups can be identified with the
        physically consistent estimator (``estimator="consistent"``); the default ``[]`` means the
        model's parameters are not link-wise standard parameters.
        """
        return []

    def complete(self, values: dict[str, float], identified: Mapping[str, bool]) -> tuple[dict[str, float], list[str]]:
        """Fill parameters the data could not identify from physics (default: leave as held).

        Returns the updated values and notes for the report.
        """
        return values, []

    def derived(self, values: Mapping[str, float]) -> dict[str, dict[str, Any]]:
        """Physical quantities derived from identified parameters (e.g. the tilt angle of a linear axis)."""
        return {}

    def describe(self) -> dict[str, Any]:
        """Machine-readable description (``dynid models --json``)."""
        from .config import COMMON_KEYS

        return {
            "name": self.name,
            "title": self.title,
            "status": self.status,
            "softmc_dynamic_model": self.softmc_model,
            "element": self.element,
            "joints": [{"name": j.name, "type": j.kind} for j in self.joints],
            "parameters": [{"index": p.slot, "name": p.name, "unit": p.unit, "description": p.description,
                            "role": p.role} for p in self.parameters],
            "config_keys": {**{k: v for k, v in self.config_keys.items()}, **COMMON_KEYS},
            "model_config_keys": sorted(self.config_keys),
            "notes": self.notes,
        }


class Plant:
    """A model plus its friction/actuator block: what the pipeline identifies and the runtime uses.

    The full parameter vector is ``theta = [model parameters, friction parameters]``.
    """

    def __init__(self, model: DynamicModel, friction: FrictionModel | None = None) -> None:
        self.model = model
        spec = model.config.friction
        self.auto_friction = friction is None and spec.strip() == AUTO_FRICTION
        if self.auto_friction:  # chosen by validation error in identify(); softMC's until then
            spec = "viscous+coulomb"
        self.friction = friction if friction is not None else FrictionModel(
            spec, model.joints, model.config.stribeck_velocity, model.config.transmission)

    @property
    def n_joints(self) -> int:
        return self.model.n_joints

    @property
    def n_model(self) -> int:
        return self.model.n_params

    @property
    def n_params(self) -> int:
        return self.model.n_params + self.friction.n_params

    @property
    def param_names(self) -> tuple[str, ...]:
        return self.model.param_names + self.friction.param_names

    @property
    def param_units(self) -> tuple[str, ...]:
        return tuple(p.unit for p in self.model.parameters) + self.friction.param_units

    @property
    def param_roles(self) -> tuple[str, ...]:
        return tuple(p.role for p in self.model.parameters) + ("friction",) * self.friction.n_params

    def regressor(self, q, qd, qdd, sign: np.ndarray | None = None, motor_sign: np.ndarray | None = None) -> np.ndarray:
        """``(N, n_joints, n_params)``: model columns then friction columns (``sign``, ``motor_sign``:
        see :meth:`FrictionModel.columns`)."""
        return np.concatenate(self.regressor_blocks(q, qd, qdd, sign, motor_sign), axis=2)

    def regressor_blocks(self, q, qd, qdd, sign: np.ndarray | None = None,
                         motor_sign: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The two column blocks of :meth:`regressor`, not joined: the model's ``(N, n_joints, n_model)`` and the
        friction's ``(N, n_joints, n_friction)`` (a caller that gathers rows from them skips the joined copy)."""
        Y = self.model.regressor(q, qd, qdd)
        q, qd, qdd = self.model._check_states(q, qd, qdd)
        return Y, self.friction.columns(qd, qdd, sign, motor_sign)

    def offset(self, q, qd, qdd) -> np.ndarray:
        return self.model.offset(q, qd, qdd)

    def torque(self, theta, q, qd, qdd, sign: np.ndarray | None = None, *, motor_sign: np.ndarray | None = None,
               chunk: int = 4096) -> np.ndarray:
        """Motor torque ``(N, n_joints)`` = rigid body + payload + friction/actuator terms.

        Evaluated ``chunk`` samples at a time, so memory stays bounded whatever ``N`` is.
        """
        theta = np.asarray(theta, dtype=float)
        if theta.shape != (self.n_params,):
            raise ShapeError(f"theta must have {self.n_params} values ({self.model.name} + friction), got {theta.shape}")
        q, qd, qdd = self.model._check_states(q, qd, qdd)
        sign, motor_sign = self.friction.split_signs(sign, motor_sign)
        out = np.empty(q.shape)
        k = self.model.n_params
        fc = self.friction.coefficients(theta[k:])
        for a in range(0, q.shape[0], chunk):  # blocks of samples, each vectorised
            b = slice(a, a + chunk)
            out[b] = self.model._torque(theta[:k], q[b], qd[b], qdd[b])
            s = np.sign(qd[b]) if sign is None else sign[b]
            ms = None if motor_sign is None else np.asarray(motor_sign[b], dtype=float)
            fc.add_into(qd[b], qdd[b], s, out[b], motor_sign=ms)
        return out

    def friction_coefficients(self, theta) -> FrictionCoefficients:
        """The friction evaluator of parameters ``theta`` (model then friction, ``(n_params,)``)."""
        return self.friction.coefficients(np.asarray(theta, dtype=float)[self.n_model:])

    def with_model(self, model: DynamicModel) -> "Plant":
        return Plant(model, self.friction)
