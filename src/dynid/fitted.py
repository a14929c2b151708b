"""The identified model: :class:`FittedModel`, the one type every consumer reads.

An identification (:mod:`dynid.identification`) ends in a ``FittedModel``; ``result.json`` is its
:meth:`~FittedModel.to_dict`, and :func:`load` reads it back — the only place in dynid that rebuilds
a model from that file. Predict, feed-forward, collision monitoring, payload identification, the
PRG/REC writers and the report all take a ``FittedModel``; nothing else assembles a model from the
pieces of a result. Every friction term (offset, Stribeck, asymmetric Coulomb, armature, coupled
motors) and the transmission survive :meth:`~FittedModel.save` / :func:`load` exactly.

>>> import numpy as np, tempfile
>>> from dynid.models import make_model, Plant
>>> plant = Plant(make_model("rotary3", {"friction": "viscous+coulomb+offset"}))
>>> fm = FittedModel(plant, [0.5, 0.0, 4.0, 0.0, 0.1, 0.3, 0.05])
>>> d = tempfile.mkdtemp()
>>> same = load(fm.save(d))
>>> q = np.array([[0.2]]); dq = np.array([[1.0]]); ddq = np.zeros((1, 1))
>>> bool(np.array_equal(same.torque(q, dq, ddq), fm.torque(q, dq, ddq)))
True
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import re
import warnings
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from . import __version__
from ._atomic import commit_files
from ._json import dumps, jsonable
from .errors import ConfigError, DynidError, FileFormatError, InputDataError
from .metrics import nrmse, relative_error_norm
from .models.base import Plant
from .recording import Recording
from .signal.conditioning import ConditioningOptions, condition, lowpass

__all__ = ["FittedModel", "Prediction", "load", "is_prg", "read_result_json", "predict", "SIGN_NOISE_FACTOR",
           "RESULT_FILE"]

RESULT_FILE = "result.json"

SIGN_NOISE_FACTOR = 4.0
"""The sign of a velocity is taken as known when ``|qd|`` exceeds this many robust standard deviations
of the velocity noise (filtered noise comes in correlated bursts, so 2 would let ~5 % of a rest through)."""

# keys of result.json that FittedModel writes from its own fields (the rest are kept in ``info``)
_OWN = ("dynid_version", "model", "model_title", "softmc_dynamic_model", "element", "config", "joints",
        "parameters", "friction", "conditioning", "metrics", "success", "message")
# informational keys written between the parameters and the conditioning, and first at the end, as 0.1.0
# ordered them (the others follow in the order they were added)
_AFTER_FRICTION = ("base_parameters", "derived")
_TAIL = ("physical_consistency", "notes", "source", "created")


@dataclass(frozen=True)
class Prediction:
    """Model torque for a motion.

    t : (N,) ; tau : (N, n_joints) model torque incl. friction [N m or N] ;
    measured : (N, n_joints) raw measured torque at the same rows, or None ;
    rows : (N,) indices of these rows in the recording
    """

    t: np.ndarray
    tau: np.ndarray
    measured: np.ndarray | None
    rows: np.ndarray

    def nrmse(self, norm: str = "rms") -> np.ndarray | None:
        return None if self.measured is None else nrmse(self.tau, self.measured, norm=norm)

    def relative_error(self) -> float | None:
        return None if self.measured is None else relative_error_norm(self.tau, self.measured)


@dataclass(frozen=True, eq=False)
class FittedModel:
    """An identified model: the plant (model + friction + transmission) with its parameters.

    Parameters
    ----------
    plant : Plant
        Model and friction block; the model's configuration holds geometry, payload and transmission.
    theta : array-like, shape (n_params,)
        Parameters, model then friction (physical sign convention, SI).
    std : array-like, shape (n_params,), optional
        Standard deviations (NaN where not estimated; default all NaN).
    status : sequence of str, optional
        :class:`~dynid.identification.pipeline.ParameterStatus` per parameter (default ``"known"``).
    conditioning : mapping, optional
        result.json's ``conditioning`` (``cutoff_hz``, ``filter_order``, ``sample_period_s``, ...);
        :meth:`predict` uses its cutoff and filter order (default: no filtering information, so
        :meth:`predict` needs ``cutoff_hz``).
    metrics : mapping, optional
        result.json's ``metrics`` (errors, success, condition number, diagnostics).
    element : str, optional
        softMC element name (default: the model's, or the axis name of a single axis).
    info : mapping, optional
        Every other result.json key (base parameters, derived quantities, notes, source, ...), kept as is.
    """

    plant: Plant
    theta: np.ndarray
    std: np.ndarray | None = None
    status: tuple[str, ...] | None = None
    conditioning: Mapping[str, Any] = field(default_factory=dict)
    metrics: Mapping[str, Any] = field(default_factory=dict)
    element: str = ""
    info: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = self.plant.n_params
        theta = np.array(self.theta, dtype=float).ravel()
        if theta.shape != (n,):
            raise FileFormatError(f"{self.plant.model.name}: {n} parameters (model + friction) expected, got {theta.size}")
        theta.flags.writeable = False
        std = np.full(n, np.nan) if self.std is None else np.array(self.std, dtype=float).ravel()
        if std.shape != (n,):
            raise FileFormatError(f"{self.plant.model.name}: {n} standard deviations expected, got {std.size}")
        std.flags.writeable = False
        status = ("known",) * n if self.status is None else tuple(self.status)
        if len(status) != n:
            raise FileFormatError(f"{self.plant.model.name}: {n} parameter statuses expected, got {len(status)}")
        object.__setattr__(self, "theta", theta)
        object.__setattr__(self, "std", std)
        object.__setattr__(self, "status", status)
        object.__setattr__(self, "conditioning", dict(self.conditioning))
        object.__setattr__(self, "metrics", dict(self.metrics))
        object.__setattr__(self, "info", dict(self.info))
        if not self.element:
            object.__setattr__(self, "element", default_element(self.plant.model))

    # ------------------------------------------------------------------ description
    @property
    def model(self):
        """The :class:`~dynid.models.base.DynamicModel`."""
        return self.plant.model

    @property
    def friction(self):
        """The :class:`~dynid.models.friction.FrictionModel`."""
        return self.plant.friction

    @property
    def n_joints(self) -> int:
        return self.plant.n_joints

    @property
    def param_names(self) -> tuple[str, ...]:
        return self.plant.param_names

    @property
    def values(self) -> dict[str, float]:
        """``{parameter name: value}``, model then friction."""
        return dict(zip(self.plant.param_names, self.theta.tolist()))

    @property
    def cutoff_hz(self) -> float | None:
        c = self.conditioning.get("cutoff_hz")
        return None if c is None else float(c)

    @property
    def filter_order(self) -> int:
        return int(self.conditioning.get("filter_order", 4))

    @property
    def group(self) -> int:
        return int(self.info.get("group", 1))

    @property
    def success(self) -> bool | None:
        s = self.metrics.get("success")
        return None if s is None else bool(s)

    @property
    def message(self) -> str:
        """softMC's verdict in one line (empty for a model that was not validated)."""
        m = self.metrics
        if "max_relative_error" not in m or m.get("success") is None:
            return ""
        err = np.asarray([np.nan if v is None else v for v in m["max_relative_error"]], dtype=float)
        worst = int(np.nanargmax(err)) + 1 if np.isfinite(err).any() else 1
        pct = 100 * float(np.nanmax(err)) if np.isfinite(err).any() else float("nan")
        lim = 100 * float(m.get("allowed", 0.5))
        reasons = [r for r in (m.get("verdict") or {}).get("reasons", []) if r.get("code") != "softmc_rule"]
        if not m["success"] and m.get("softmc_rule", True) and reasons:
            first = reasons[0]["message"].split(":")[0]
            more = f" and {len(reasons) - 1} more" if len(reasons) > 1 else ""
            return (f"identification failed: {reasons[0]['code'].replace('_', ' ')} on {first}{more} (max relative "
                    f"torque error {pct:.2f} % < {lim:.2f} %, but the model cannot be trusted)")
        if m["success"]:
            return f"identification succeeded: max relative torque error {pct:.2f} % (axis {worst}) < {lim:.2f} %"
        return f"identification failed: max relative torque error {pct:.2f} % on axis {worst} exceeds {lim:.2f} %"

    # ------------------------------------------------------------------ evaluation
    def torque(self, q, dq, ddq, *, sign: np.ndarray | None = None) -> np.ndarray:
        """Motor torque ``(N, n_joints)`` [N m or N]: rigid body + payload + friction, for ``(N, n_joints)``
        positions, velocities and accelerations (SI, joint side); Coulomb terms use ``sign(dq)`` unless
        ``sign`` is given."""
        return self.plant.torque(self.theta, q, dq, ddq, sign=sign)

    def conditioning_options(self) -> ConditioningOptions:
        """The filter of the identification (cutoff and order), for conditioning another motion alike."""
        if self.cutoff_hz is None:
            return ConditioningOptions(filter_order=self.filter_order)
        return ConditioningOptions(cutoff_hz=self.cutoff_hz, filter_order=self.filter_order)

    def predict(self, rec: Recording, *, trim: bool = True) -> Prediction:
        """Torque of this model for the motion in ``rec`` (SI, joint side), conditioned as in the identification.

        Positions are low-pass filtered at the identification cutoff and differentiated (or the
        recording's ``dq``/``ddq`` are filtered), so prediction and identification see the same
        kinematics. The Coulomb term uses the sign of the velocity (the physical friction step) where
        that sign is known, i.e. ``|qd|`` above ``SIGN_NOISE_FACTOR`` (4) times the velocity noise,
        and 0 where it is not: a joint at rest holds an unknown static friction torque anywhere in
        ``[-Fc, Fc]``, whose best guess is 0, not ``±Fc`` chosen by the sign of noise. Coupled motors
        (``motor_coulomb``) follow the same rule on the motor velocity. Around reversals where a joint
        sticks, the friction torque passes through the static range and that sign low-pass filtered
        (the transition as the identification filter sees it) is used. Edge rows inside the filter
        transient are dropped when ``trim``.
        """
        opts = self._prediction_options(trim)
        cond = condition(rec, opts, self.model.joint_kinds, require_motion=False)
        return self._prediction(cond, opts)

    def predict_blocks(self, source, *, trim: bool = True, progress=None):
        """:meth:`predict` of a recording of any length read block by block (a
        :class:`~dynid.recording.RecordingSource`): an iterator of :class:`Prediction` of consecutive rows, the same
        numbers as :meth:`predict` of the whole recording (its velocity noise from every row up to
        ``STREAM_VALUES`` samples × joints, from as many at random places beyond), in memory bounded by a block.
        ``progress(stage, fraction)`` is told how far it has read."""
        from .signal.blocks import BlockPlan, condition_block
        from .signal.conditioning import StickCarry, check_recording
        from .signal.stream import blocks_of, cached, measure_gates, scan_recording

        step = progress or (lambda stage, frac: None)
        source = cached(source)
        scan = scan_recording(source, lambda stage, frac: step("reading", 0.3 * frac))
        check_recording(scan.dt, scan.q_max > scan.q_min, scan.qd_any if scan.has_qd else None, source.source)
        opts = self._prediction_options(trim)
        cutoff = opts.cutoff_hz if opts.cutoff_hz is not None else scan.default_cutoff(opts)
        plan = BlockPlan(scan.n_samples, scan.dt, cutoff, replace(opts, cutoff_hz=cutoff),
                         time_base=scan.time_base_record())
        if plan.data_length < 1:
            raise InputDataError(f"{source.source}: {scan.n_samples} samples leave none after trimming {plan.trim} at "
                                 f"each end for the {cutoff:.3g} Hz filter", hint="record longer")
        plan = measure_gates(source, scan, {cutoff: plan}, plan.options,
                             lambda stage, frac: step(stage, 0.3 + 0.3 * frac))[cutoff]
        carry = StickCarry.empty(scan.n_joints)
        for ext in blocks_of(source, scan, plan.margin, lambda stage, frac: step(stage, 0.6 + 0.4 * frac),
                             "model torque"):
            cond = condition_block(ext, plan, carry)
            if cond is not None:
                yield self._prediction(cond, plan.options)

    def _prediction_options(self, trim: bool) -> ConditioningOptions:
        opts = replace(self.conditioning_options(), threshold_fraction=0.0,   # threshold = velocity noise only
                       threshold_noise_factor=SIGN_NOISE_FACTOR)
        return opts if trim else replace(opts, trim=0)

    def _prediction(self, cond, opts: ConditioningOptions) -> Prediction:
        """The model torque on conditioned rows, the Coulomb step at the known velocity signs (:meth:`predict`)."""
        known = np.abs(cond.qd) > cond.velocity_threshold
        sign = np.where(known, np.sign(cond.qd), 0.0)
        if cond.near_stuck is not None and cond.near_stuck.any():
            smooth = lowpass(sign, cond.cutoff_hz, cond.sample_period_s, opts.filter_order)
            sign = np.where(cond.near_stuck, smooth, sign)
        fr = self.friction
        motor_sign = None
        if fr.n_motor_params:
            v = fr.motor_velocities(cond.qd)
            motor_sign = np.where(np.abs(v) > fr.motor_thresholds(cond.velocity_threshold), np.sign(v), 0.0)
        tau = self.plant.torque(self.theta, cond.q, cond.qd, cond.qdd, sign=sign, motor_sign=motor_sign)
        rows = np.arange(cond.start, cond.start + cond.data_length)
        return Prediction(cond.t, tau, cond.tau_raw, rows)

    # ------------------------------------------------------------------ variants
    def with_info(self, **info: Any) -> "FittedModel":
        """The same model with more result.json keys (``element`` sets the element name)."""
        element = info.pop("element", None) or self.element
        return replace(self, element=element, info={**self.info, **info})

    def with_payload(self, mass: float | None = None, inertia: float | None = None) -> "FittedModel":
        """The same robot carrying another payload [kg, kg m²] (unchanged where ``None``)."""
        return replace(self, plant=self.plant.with_model(self.model.with_payload(mass, inertia)))

    def model_with(self, config: Mapping[str, Any]) -> Any:
        """This robot's model rebuilt with configuration keys replaced (``config`` as in ``--config``);
        the friction block is not part of it (see :attr:`friction`)."""
        return _make_model(self.model.name, {**self.model.config.to_dict(), **dict(config)})

    # ------------------------------------------------------------------ result.json
    def to_dict(self) -> dict[str, Any]:
        """The ``result.json`` content (spec/interfaces.md §3 and more keys)."""
        plant, model, fr = self.plant, self.model, self.friction
        k = plant.n_model
        theta, std, status = self.theta, self.std, self.status
        config = model.config.to_dict()
        config["friction"] = fr.spec
        if fr.stribeck_velocity != 0.1:
            config["stribeck_velocity"] = fr.stribeck_velocity
        head: dict[str, Any] = {
            "dynid_version": __version__,
            "model": model.name,
            "model_title": model.title,
            "softmc_dynamic_model": model.softmc_model,
            "element": self.element,
        }
        if "group" in self.info:
            head["group"] = self.info["group"]
        nonzero = np.where(theta[:k] == 0, np.nan, theta[:k])
        body = {
            "config": config,
            "joints": [{"name": j.name, "type": j.kind} for j in model.joints],
            "parameters": {
                "names": list(plant.param_names[:k]),
                "values": theta[:k],
                "units": [p.unit for p in model.parameters],
                "index": [p.slot for p in model.parameters],
                "identifiable": [s in ("identified", "confounded") for s in status[:k]],
                "status": list(status[:k]),
                "std": std[:k],
                "relative_std_percent": 100 * std[:k] / np.abs(nonzero),
            },
            "friction": {
                "model": fr.spec,
                "convention": "physical: motor torque = rigid body + Fv*qd + Fc*sign(qd) (+ offset ...)",
                "prg_sign": model.config.friction_sign,
                **fr.values_by_term(theta[k:]),
                "std": fr.values_by_term(std[k:]),
                "names": list(fr.param_names),
                "values": theta[k:],
                "units": list(fr.param_units),
                "status": list(status[k:]),
                "stribeck_velocity": fr.stribeck_velocity,
            },
        }
        mid = {key: self.info[key] for key in _AFTER_FRICTION if key in self.info}
        tail = {"conditioning": dict(self.conditioning), "metrics": dict(self.metrics)}
        if self.metrics.get("success") is not None:
            tail["success"] = bool(self.metrics["success"])
            tail["message"] = self.message
        rest = {key: self.info[key] for key in _TAIL if key in self.info}
        rest.update((key, v) for key, v in self.info.items()
                    if key not in _AFTER_FRICTION and key != "group" and key not in _OWN and key not in rest)
        return jsonable({**head, **body, **mid, **tail, **rest})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "result.json") -> "FittedModel":
        """Rebuild from :meth:`to_dict` (a parsed result.json). ``where`` names the source in errors."""
        try:
            name = data["model"]
            fr = data["friction"]
            spec = fr["model"]
            config = dict(data.get("config") or {})
            config["friction"] = spec                         # the fitted friction, whatever the input said
            if fr.get("stribeck_velocity") is not None:
                config["stribeck_velocity"] = fr["stribeck_velocity"]
            model = _make_model(name, config)
            plant = Plant(model)
            par = data["parameters"]
            theta = _by_name(plant.model.param_names, par["names"], par["values"], "parameters", where) + \
                _by_name(plant.friction.param_names, fr["names"], fr["values"], "friction", where)
            std = None
            if "std" in par:
                fstd = fr.get("std")
                fstd = plant.friction.flatten_terms(fstd) if isinstance(fstd, Mapping) else [None] * plant.friction.n_params
                std = [_num(v, np.nan) for v in list(par["std"]) + list(fstd)]
            status = None
            if "status" in par and "status" in fr:
                status = tuple(par["status"]) + tuple(fr["status"])
            info = {key: v for key, v in data.items() if key not in _OWN}
            return cls(plant, theta, std, status, dict(data.get("conditioning") or {}), dict(data.get("metrics") or {}),
                       str(data.get("element") or ""), info)
        except (KeyError, TypeError, ValueError) as err:
            raise FileFormatError(f"{where}: incomplete result.json ({type(err).__name__}: {err})",
                                  hint="use a result.json written by dynid identify (or FittedModel.save)") from err

    def result_json(self) -> bytes:
        """The bytes of ``result.json``."""
        return (dumps(self.to_dict()) + "\n").encode()

    def save(self, out_dir: str | Path) -> Path:
        """Write ``out_dir/result.json`` atomically (the folder is created); returns its path."""
        info = self.info if "created" in self.info else {**self.info,
                                                          "created": _dt.datetime.now().isoformat(timespec="seconds")}
        path = Path(out_dir) / RESULT_FILE
        commit_files({path: replace(self, info=info).result_json()})
        return path


def default_element(model) -> str:
    """softMC element name: the robot type (``SCARA``...) or the axis name for a single axis."""
    return model.joints[0].name if model.n_joints == 1 and model.element == "A1" else model.element


def read_result_json(path: str | Path) -> tuple[Path, dict]:
    """The path and parsed content of a ``result.json`` (or of the one in folder ``path``)."""
    path = Path(path)
    if path.is_dir():
        path = path / RESULT_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileFormatError(f"{path}: no such file",
                              hint="pass the result.json written by an identification (or its folder)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        raise FileFormatError(f"{path}: not a readable result.json ({err})") from err
    if not isinstance(data, dict):
        raise FileFormatError(f"{path}: not a result.json (a JSON object is expected)")
    return path, data


def load(path: str | Path, model: str | None = None, *, config: Mapping[str, Any] | str | Path | None = None,
         urdf: str | Path | None = None) -> FittedModel:
    """The :class:`FittedModel` of a ``result.json`` (or of the folder holding it), or of a softMC
    parameter program ``IDNT<g>.PRG`` — dynid's or the controller's (spec/interfaces.md §5).

    Parameters
    ----------
    path : str or Path
        ``result.json``, a folder holding it, or a ``.PRG`` file.
    model : str, optional
        Model name (``scara4``, ...). Required for a PRG, which names only softMC's element and
        ``DynamicModel`` number; for a result.json it must be the model the file holds, if given.
    config : mapping or path, optional
        Model configuration (as ``--config``) for what a PRG does not hold: geometry, transmission,
        ``friction_sign``. A result.json carries its own; giving one with it is an error.
    urdf : str or Path, optional
        URDF of a ``serial`` model (PRG only).

    Returns
    -------
    FittedModel
        For a PRG: parameters from the ``DynamicParameter`` slots in softMC's units (converted to SI)
        and dynid's comment lines, friction from ``ViscousFriction``/``CoulombFriction`` in the PRG's
        sign (the configuration's ``friction_sign``, softMC's −1 by default) plus dynid's extra friction
        terms, ``TorqueThreshold`` as the configuration's ``torque_limits``, ``PayloadMass``/``PayloadInertia``
        as its payload; the header's errors, cutoff and lengths as metrics and conditioning. Statuses
        are ``"known"`` (values given by the file).

    Raises
    ------
    ConfigError
        A PRG without ``model``; ``config``/``urdf`` with a result.json; ``model`` differs from the result's.
    FileFormatError
        Unreadable file, or a PRG that does not fit the model (axis count, DynamicModel number, slots).

    Examples
    --------
    >>> import tempfile
    >>> from dynid.io.outputs import prg_content
    >>> from dynid.io.prg import format_prg
    >>> from dynid.models import make_model
    >>> fm = FittedModel(Plant(make_model("rotary3")), [0.5, 0.0, 4.0, 0.0, 0.1, 0.3])
    >>> prg = Path(tempfile.mkdtemp()) / "IDNT1.PRG"
    >>> _ = prg.write_text(format_prg(prg_content(fm)))      # A1.ViscousFriction = -1.0e-01: softMC's sign
    >>> same = load(prg, "rotary3")
    >>> same.values["M*g*A"], same.values["A1.viscous"]
    (4.0, 0.1)
    """
    if is_prg(path):
        if model is None:
            raise ConfigError(f"{path}: a softMC parameter program names only its element and DynamicModel "
                              "number, not dynid's model", hint="give the model (and the configuration with its "
                              "geometry) the PRG was identified with", options=("model", "config"))
        return _from_prg(Path(path), model, config, urdf)
    if config is not None or urdf is not None:
        raise ConfigError(f"{path}: a result.json carries its model's configuration; a configuration or URDF "
                          "applies to an IDNT<group>.PRG only", hint="drop the configuration and URDF",
                          options=("config", "urdf"))
    path, data = read_result_json(path)
    fitted = FittedModel.from_dict(data, where=str(path))
    if model is not None and model != fitted.model.name:
        raise ConfigError(f"{path}: holds model {fitted.model.name!r}, not {model!r}",
                          hint="drop the model name or pass the result of that model", options=("model",))
    return fitted


def is_prg(path: str | Path) -> bool:
    """``path`` is a softMC program: the ``.PRG`` extension, or a file (not JSON) whose first character is a
    comment (``'``)."""
    path = Path(path)
    if path.suffix.lower() == ".prg":
        return True
    if path.is_dir() or path.suffix.lower() == ".json" or not path.is_file():
        return False
    try:
        with path.open("rb") as f:
            head = f.read(64).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return False
    return head.startswith(b"'")


def _from_prg(path: Path, name: str, config, urdf) -> FittedModel:
    """Rebuild a fitted model from a softMC parameter program (see :func:`load`)."""
    from .io.prg import friction_values, model_values, read_prg
    from .models import make_model, model_class
    from .models.config import load_config_file

    prg = read_prg(path)
    cfg = load_config_file(config) if isinstance(config, (str, Path)) else dict(config or {})
    kwargs = {} if urdf is None else {"urdf": urdf}
    where = str(path)
    try:                                  # the parameter layout (a model may need constants the PRG holds)
        probe = make_model(name, cfg, **kwargs)
    except ConfigError as err:
        if "urdf" in err.options:         # the robot itself is missing: no example has its layout
            raise
        try:
            probe = model_class(name).example()
        except DynidError:
            raise err from None
    n, axes = probe.n_joints, list(prg.axes)
    if len(axes) != n:
        raise FileFormatError(f"{where}: {len(axes)} axes with friction lines ({', '.join(axes) or 'none'}) but model "
                              f"{name!r} has {n} joints", hint="pass the model of the PRG's element",
                              options=("model",))
    if prg.dynamic_model != probe.softmc_model:
        raise FileFormatError(f"{where}: {prg.element}.DynamicModel = {prg.dynamic_model} but model {name!r} is softMC "
                              f"DynamicModel {probe.softmc_model}", hint="pass the model of the PRG's DynamicModel",
                              options=("model",))
    values = model_values(prg, probe, where)
    names = cfg.get("joint_names")
    if names is not None and [a.lower() for a in names] != [a.lower() for a in axes]:
        raise FileFormatError(f"{where}: axes {axes} differ from the configuration's joint_names {list(names)}",
                              hint="fix joint_names (or drop it: the PRG's axis names are used)")
    if names is None and axes != [j.name for j in probe.joints]:
        cfg["joint_names"] = axes
    constants = {p.name: values[p.name] for p in probe.parameters if p.role == "constant"}
    if constants:
        cfg["parameters"] = {**dict(cfg.get("parameters") or {}), **constants}
    payload = dict(cfg.get("payload") or {})
    for field_name in dict(getattr(probe, "prg_payload", None) or {}).values():
        payload[field_name] = 0.0         # the PRG's slot carries it (parameter + payload)
    for field_name, prop in (("mass", "PayloadMass"), ("inertia", "PayloadInertia")):
        for key, v in prg.properties.items():
            if key.lower() == prop.lower():
                payload[field_name] = v
    if payload:
        cfg["payload"] = payload
    limits = {k.lower(): v for k, v in prg.torque_thresholds.items()}
    thr = [limits.get(a.lower()) for a in axes]
    if all(v is not None for v in thr):
        cfg["torque_limits"] = thr
    elif any(v is not None for v in thr):
        warnings.warn(f"{where}: TorqueThreshold is given for some axes only; not used", stacklevel=2)
    cfg["friction"] = _prg_friction_spec(prg)
    if prg.stribeck_velocity is not None:
        cfg["stribeck_velocity"] = prg.stribeck_velocity
    try:                                  # values the model's torque would ignore (the Delta's p11..p14, ...)
        plant = Plant(make_model(name, cfg, **kwargs))
        plant.model.check_parameters([values[p] for p in plant.model.param_names])
    except ConfigError as err:
        if "parameters" not in err.options:      # a configuration error (geometry missing, ...) stays one
            raise
        raise FileFormatError(f"{where}: {err.message}", hint=err.hint) from None
    dyn = plant.model
    theta_fr = friction_values(prg, plant.friction, dyn.config.friction_sign, where)
    theta = [values[p] for p in dyn.param_names] + theta_fr
    cutoff = prg.exact_cutoff_hz if prg.exact_cutoff_hz is not None else prg.cutoff_hz
    conditioning = {"cutoff_hz": None if math.isnan(cutoff) else cutoff, "filter_order": prg.filter_order or 4,
                    "raw_length": prg.raw_length, "data_length": prg.data_length,
                    "velocity_threshold": list(prg.thresholds), "velocity_threshold_units": list(prg.threshold_units),
                    "moving_samples": list(prg.moving_samples)}
    metrics = {"max_relative_error": [v / 100 if v == v else None for v in prg.max_error_percent],
               "mean_relative_error": [v / 100 if v == v else None for v in prg.mean_error_percent],
               "allowed": prg.allowed_percent / 100, "success": prg.success}
    group = re.fullmatch(r"idnt(\d+)\.prg", path.name.lower())
    info = {"group": int(group.group(1)) if group else 1,
            "source": {"prg": str(path.resolve()), "date": prg.date.isoformat() if prg.date else None}}
    return FittedModel(plant, theta, None, None, conditioning, metrics, prg.element, info)


def _prg_friction_spec(prg) -> str:
    """The friction model of a PRG: dynid's comment line, else softMC's ``viscous+coulomb`` plus the terms
    of the ``Friction term`` comment lines (``coulomb_pos``/``coulomb_neg`` are ``coulomb_asym``)."""
    if prg.friction_model:
        return prg.friction_model
    from .models.friction import FRICTION_TERMS, MOTOR_TERMS

    term_of = {sfx: t for t, (suffixes, _) in FRICTION_TERMS.items() if t not in MOTOR_TERMS for sfx in suffixes}
    terms = ["viscous", "coulomb"]
    for key in prg.friction_terms:
        term = key if key in MOTOR_TERMS else term_of.get(key, key)
        if term == "coulomb_asym" and "coulomb" in terms:
            terms.remove("coulomb")
        if term not in terms:
            terms.append(term)
    return "+".join(terms)


def predict(model: FittedModel, rec: Recording, *, trim: bool = True) -> Prediction:
    """``model.predict(rec)`` (see :meth:`FittedModel.predict`)."""
    return model.predict(rec, trim=trim)


def _make_model(name: str, config: Mapping[str, Any]):
    """The one place a model is rebuilt from result.json's name and configuration (a URDF robot's parsed
    chain is part of its configuration)."""
    from .models import make_model

    return make_model(name, dict(config))


def _num(v, default: float = 0.0) -> float:
    return default if v is None else float(v)


def _by_name(expected: Sequence[str], names: Sequence[str], values: Sequence[Any], section: str, where: str) -> list[float]:
    if list(names) != list(expected):
        missing = [n for n in expected if n not in names]
        extra = [n for n in names if n not in expected]
        raise FileFormatError(f"{where}: {section} names do not match the model "
                              f"(missing {missing[:3] or '-'}, unknown {extra[:3] or '-'})",
                              hint="the result was written by another model or dynid version: identify again")
    if len(values) != len(names):
        raise FileFormatError(f"{where}: {section} has {len(names)} names but {len(values)} values")
    return [_num(v, np.nan) for v in values]          # null: how a NaN is written, never a 0
