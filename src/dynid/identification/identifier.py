"""``dynid.Identifier``: the identification as a scikit-learn style estimator (spec/interfaces.md §6).

The constructor holds the options (the keywords of ``dynid identify``, with its defaults); :meth:`fit`
identifies a recording and returns the estimator, whose learned state ends in ``_``: ``model_`` (the
:class:`~dynid.fitted.FittedModel`), ``metrics_`` (result.json's ``metrics``), ``result_`` (the full
:class:`~dynid.identification.result.Identification` record, with the conditioned signals) and, for a
payload run, ``payload_``; ``units_`` is the position units its last recording file was read in. The command
line is a thin layer over it.

>>> import dynid
>>> from dynid.sim import SineMotion, simulate
>>> from dynid.models import Plant, make_model
>>> robot = Plant(make_model("rotary1"))
>>> rec = simulate(robot, [0.02, 0.5, 0.3], SineMotion([-1.0], [1.0], [1.0], record_s=6.0), seed=1)
>>> est = dynid.Identifier("rotary1").fit(rec)
>>> est.metrics_["success"], round(est.model_.values["I"], 2)
(True, 0.02)
"""

from __future__ import annotations

import datetime as _dt
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..errors import ConfigError
from ..fitted import FittedModel, Prediction, default_element, is_prg, load
from ..models.base import DynamicModel, Plant
from ..recording import Recording
from ..signal.conditioning import ConditioningOptions
from ..threads import limit_threads
from .checks import check_torque
from .consistent import DEFAULT_PRIOR_WEIGHT, ConsistentOptions
from .options import IdentifyOptions, check_cutoff
from .pipeline import identify
from .select import analyse_ahead

__all__ = ["Identifier"]

Progress = Callable[[str, float], None]


class Identifier:
    """Identify a robot's dynamic model from a recording.

    Parameters
    ----------
    model : str or DynamicModel
        Model name (``dynid models``: ``rotary3``, ``scara4``, ``puma``, ``serial`` ...) or a model object.
    config : mapping or path, optional
        Model configuration (spec/interfaces.md §4), or a JSON/YAML/TOML file holding it.
    urdf : path, optional
        URDF of the robot (model ``serial``).
    friction : str, optional
        Friction model (``viscous+coulomb+offset``, ``auto`` ...); overrides the configuration's. Default:
        the configuration's ``friction``, else ``auto`` (chosen by held-out error).
    cutoff : float, "auto" or None
        Low-pass cutoff [Hz]; ``"auto"`` (default): chosen by held-out error among 0.5, 1, 2, 4 × the
        motion-based default; ``None``: that default (20 × the motion bandwidth). A number must obey
        softMC's rule — below 125 Hz (and the Nyquist frequency) and above the excitation frequency of the
        recorded motion — else :meth:`fit` raises :class:`~dynid.errors.ConfigError`.
    estimator : {"auto", "wls", "ols", "irls", "consistent"}
        ``auto`` (default): weighted least squares, or the physically consistent fit where the model has
        link inertias and a least-squares link is no rigid body.
    units : {"si", "softmc"}, optional
        Position units of recording files read by :meth:`fit` and :meth:`predict`; default: the file's
        ``# units:`` metadata line, else ``"si"`` (a given value the line contradicts is an error).
    threshold, upper_threshold : float or sequence, optional
        Velocity gating thresholds per joint [rad/s or m/s].
    upper_fraction : float, optional
        Upper threshold as a fraction of each joint's peak velocity.
    weighting : {"residual_std", "torque_std", "none"}
    allowed : float
        Success threshold on the max relative torque error [%] (softMC: 50).
    trim : int, optional
        Samples dropped at each end (default: 2 cutoff periods).
    torque_delay : float
        The torque lags the positions by this many seconds.
    align : bool
        Estimate the torque/position delay and align before the final fit.
    decimate : int, optional
        Fit on every k-th sample (default ``fs / (10 cutoff)``).
    prior_weight : float
        ``estimator="consistent"``: weight of the pull toward the model's prior (URDF) inertias.
    regularize : float or "auto"
        Identify the deviation from the a-priori model (URDF/configuration inertias): ridge toward it of
        this strength relative to the largest singular value (``IdentifyOptions.prior_regularization``);
        0 = off; ``"auto"`` (default): chosen by held-out error among 0, 0.01, 0.1 where the model has
        a-priori values (the cutoff, friction and regularisation are chosen together, in one pass).
    payload_of : FittedModel or path, optional
        A payload run (softMC ``IdentPayload``): keep the robot identified there fixed and identify the
        payload (mass/inertia, or the model's payload coefficients when ``config`` gives its mass). A
        result.json (or its folder), or a softMC parameter program ``IDNT<g>.PRG`` — dynid's or the controller's
        —, read as this model with ``config``/``urdf`` (the geometry a PRG does not hold).
    element : str, optional
        softMC element name (default: the robot type, or the axis name of a single axis).
    group : int
        softMC group number (output files ``IDNT<group>``).
    threads : int, optional
        Threads the numerics may use during :meth:`fit` (:func:`dynid.threads.limit_threads`; default:
        ``DYNID_NUM_THREADS``, else every core). Scoped to the call: other work in the process keeps its own.
    topic : str, optional
        ROS 2 bags: the ``sensor_msgs/msg/JointState`` topic to read when the bag has several (joints are
        matched by the configuration's ``joint_names``; UR RTDE currents use its ``torque_constants``).
    streaming : {"auto", "always", "never"}
        Identify block by block, in memory bounded by the block size (:mod:`dynid.identification.streaming`):
        ``auto`` (default) for recordings of at least ``STREAM_VALUES`` (500 000) samples × joints (CSV, RTDE,
        Parquet, ``.npz`` files, ROS 2 bags and recordings in memory), ``always``, or
        ``never`` (the whole recording in memory). The errors are over every row either way; the diagnoses and
        the REC of a recording read in blocks are on full-rate windows of it.
    """

    def __init__(self, model: str | DynamicModel, *, config: Mapping[str, Any] | str | os.PathLike | None = None,
                 urdf: str | os.PathLike | None = None, friction: str | None = None, cutoff: float | str | None = "auto",
                 estimator: str = "auto", units: str | None = None, threshold: float | Sequence[float] | None = None,
                 upper_threshold: float | Sequence[float] | None = None, upper_fraction: float | None = None,
                 weighting: str = "residual_std", allowed: float = 50.0, trim: int | None = None,
                 torque_delay: float = 0.0, align: bool = False, decimate: int | None = None,
                 prior_weight: float = DEFAULT_PRIOR_WEIGHT, regularize: float | str = "auto", payload_of: FittedModel | str | os.PathLike | None = None,
                 element: str | None = None, group: int = 1, threads: int | None = None,
                 topic: str | None = None, streaming: str = "auto") -> None:
        self.model = model
        self.config = config
        self.urdf = urdf
        self.friction = friction
        self.cutoff = cutoff
        self.estimator = estimator
        self.units = units
        self.threshold = threshold
        self.upper_threshold = upper_threshold
        self.upper_fraction = upper_fraction
        self.weighting = weighting
        self.allowed = allowed
        self.trim = trim
        self.torque_delay = torque_delay
        self.align = align
        self.decimate = decimate
        self.prior_weight = prior_weight
        self.regularize = regularize
        self.payload_of = payload_of
        self.element = element
        self.group = group
        self.threads = threads
        self.topic = topic
        self.streaming = streaming

    # ------------------------------------------------------------------ scikit-learn conventions
    _PARAMS = ("model", "config", "urdf", "friction", "cutoff", "estimator", "units", "threshold", "upper_threshold",
               "upper_fraction", "weighting", "allowed", "trim", "torque_delay", "align", "decimate", "prior_weight",
               "regularize", "payload_of", "element", "group", "threads", "topic", "streaming")

    def get_params(self, deep: bool = True) -> dict[str, Any]:
        """The constructor's options."""
        return {k: getattr(self, k) for k in self._PARAMS}

    def set_params(self, **params: Any) -> "Identifier":
        """Change options (unknown names are an error); returns the estimator."""
        for k, v in params.items():
            if k not in self._PARAMS:
                raise ConfigError(f"Identifier has no option {k!r}", hint=f"options are: {', '.join(self._PARAMS)}")
            setattr(self, k, v)
        return self

    def __repr__(self) -> str:
        defaults = Identifier("x").get_params()
        changed = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items() if k != "model" and v != defaults[k])
        return f"Identifier({self.model!r}{', ' + changed if changed else ''})"

    # ------------------------------------------------------------------ building blocks
    def build_model(self) -> DynamicModel:
        """The model these options describe (configuration, friction and URDF applied)."""
        from ..models import make_model
        from ..models.config import load_config_file

        if isinstance(self.model, DynamicModel):
            model = self.model
            if self.config is not None or self.urdf is not None:
                raise ConfigError("a model object carries its configuration: give config/urdf only with a model name")
            return model.with_config(friction=self.friction) if self.friction else model
        if isinstance(self.config, (str, os.PathLike)):
            config = load_config_file(self.config)
        else:
            config = dict(self.config or {})
        if self.friction:
            config["friction"] = self.friction
        elif "friction" not in config:
            config["friction"] = "auto"     # dynid's default: the friction model the data choose
        kwargs = {} if self.urdf is None else {"urdf": self.urdf}
        try:
            return make_model(self.model, config, **kwargs)
        except TypeError as err:
            if kwargs:
                raise ConfigError(f"model {self.model!r} does not take a URDF", hint="use model 'serial' for URDF robots",
                                  options=("urdf",)) from err
            raise

    def options(self) -> IdentifyOptions:
        """The :class:`IdentifyOptions` these options describe."""
        auto = isinstance(self.cutoff, str)
        if auto and self.cutoff.strip().lower() != "auto":
            raise ConfigError(f"cutoff must be a frequency in Hz or 'auto', got {self.cutoff!r}", options=("cutoff",))
        ridge_auto = isinstance(self.regularize, str)
        if ridge_auto and self.regularize.strip().lower() != "auto":
            raise ConfigError(f"regularize must be a number >= 0 or 'auto', got {self.regularize!r}",
                              options=("regularize",))
        if not ridge_auto and not float(self.regularize) >= 0:
            raise ConfigError(f"regularize must be >= 0, got {self.regularize!r}", options=("regularize",))
        copt = ConditioningOptions(cutoff_hz=None if auto or self.cutoff is None else float(self.cutoff),
                                   velocity_threshold=self.threshold, trim=self.trim, torque_delay_s=self.torque_delay,
                                   upper_velocity_threshold=self.upper_threshold,
                                   upper_velocity_fraction=self.upper_fraction)
        return IdentifyOptions(conditioning=copt, estimator=self.estimator, weighting=self.weighting,
                               allowed_error=self.allowed / 100.0,
                               consistent=ConsistentOptions(prior_weight=self.prior_weight),
                               align_torque=self.align, decimate=self.decimate, select_cutoff=auto,
                               prior_regularization=0.0 if ridge_auto else float(self.regularize),
                               select_regularization=ridge_auto)

    def read(self, recording: Recording | str | os.PathLike, model: DynamicModel | None = None, *,
             require_tau: bool = True) -> Recording:
        """A recording for ``model``: a :class:`Recording` (SI, joint side) as it is — with a warning where the
        configuration's transmission records the motor side and the recording was not converted by one —, a file
        read in ``units`` and converted to the joint side by the model's transmission (bags and logs: joints by the
        configuration's ``joint_names``, ``topic``, currents × ``torque_constants``)."""
        if isinstance(recording, Recording):
            tr = (model if model is not None else self.build_model()).config.transmission
            if tr is not None and tr.records_motor_side and "transmission" not in recording.meta:
                warnings.warn(
                    f"{recording.source}: an in-memory Recording is taken as joint side, but the configuration's "
                    f"transmission says recordings are {tr.position}-side positions and {tr.torque}-side torques; "
                    "if this one is, pass transmission.to_joint(recording) (or the file) instead",
                    UserWarning, stacklevel=3)
            return recording
        from ..io.readers import read_recording, recording_units

        model = model if model is not None else self.build_model()
        rec = read_recording(recording, n_joints=model.n_joints, joint_kinds=model.joint_kinds, units=self.units,
                             require_tau=require_tau, transmission=model.config.transmission,
                             joint_names=model.config.joint_names, topic=self.topic,
                             torque_constants=model.config.torque_constants)
        self.units_ = recording_units(rec.meta, self.units)     # the units the file was read in
        return rec

    # ------------------------------------------------------------------ fit / predict
    def fit(self, recording: Recording | str | os.PathLike, *, progress: Progress | None = None,
            out_dir: str | os.PathLike | None = None) -> "Identifier":
        """Identify the model from ``recording`` (a :class:`Recording` or a file); returns ``self``.

        A failed softMC rule is a result (``metrics_["success"]`` is False), not an exception.

        ``out_dir``: the folder :meth:`write` will be given, if known. With two threads allowed, the REC (tens of MB
        for a long recording) is then written there under a temporary name during the fit, and
        :meth:`write` to that folder renames it in with the other outputs; nothing appears under an output's name
        before :meth:`write`, and a temporary :meth:`write` does not take is removed (when the fit fails or is
        interrupted, at the next :meth:`fit`, or when the estimator is collected or the process ends). Without it
        :meth:`write` makes the REC itself.

        Raises
        ------
        ConfigError, FileFormatError, InputDataError, IdentifiabilityError
            Bad options, an unreadable file, unusable data.
        """
        if self.group < 0:
            raise ConfigError(f"group must be >= 0, got {self.group}", options=("group",))
        if self.threads is not None and int(self.threads) < 1:
            raise ConfigError(f"threads must be >= 1, got {self.threads}", options=("threads",))
        with limit_threads(self.threads):
            try:
                return self._fit(recording, progress, out_dir)
            except BaseException:           # (an error or Ctrl-C: the REC begun for write() is removed)
                if getattr(self, "_rec", None) is not None:
                    self._rec.drop(wait=True)
                raise

    def _fit(self, recording, progress, out_dir=None) -> "Identifier":
        from ..io.outputs import RecAhead

        options = self.options()
        self.payload_ = None
        if getattr(self, "_rec", None) is not None:
            self._rec.drop()                        # (the last fit's REC, not written)
        self._rec = RecAhead()
        if self.payload_of is not None:
            from .payload import identify_payload

            name = self.model.name if isinstance(self.model, DynamicModel) else self.model
            robot = self._robot_of_payload_run(name)
            if name != robot.model.name:
                raise ConfigError(f"model {name} does not match the model {robot.model.name!r} of the run without "
                                  "payload", hint="a payload run keeps the robot identified without payload: use the "
                                                  "same model", options=("model",))
            user = self._user_config()
            rec = self.read(recording, robot.model)
            check_torque(rec, robot.model.joint_kinds)
            self._check_cutoff(rec)
            est = identify_payload(rec, robot, config=user, options=options, progress=progress)
            self.payload_ = est
            self.result_ = est.identification
            element = self.element or robot.element
            extra: dict[str, Any] = {"payload": est.to_dict()}
        else:
            model = self.build_model()
            if out_dir is not None:             # the REC's folder, name and header (checked again by write_run)
                self._rec.target = (out_dir, self.group, self.element or default_element(model), model)
            source = self._stream_source(recording, model)
            if source is not None:
                from .streaming import identify_stream

                user_cutoff = None if self.cutoff is None or isinstance(self.cutoff, str) else float(self.cutoff)
                self.result_ = identify_stream(source, Plant(model), options, progress=progress,
                                               check_cutoff=user_cutoff)
            else:
                if not isinstance(recording, Recording):
                    analyse_ahead(Plant(model), options)  # (model-only work of the selection, while the file is read)
                rec = self.read(recording, model)
                check_torque(rec, model.joint_kinds)
                self._check_cutoff(rec)
                self.result_ = identify(rec, Plant(model), options, progress=progress, on_conditioned=self._rec.start,
                                        on_evaluated=self._rec.finish)
            element = self.element or self.result_.model.element
            extra = {}
        self.model_ = self.result_.model.with_info(element=element, group=self.group, **extra)
        self.metrics_ = self.model_.metrics
        return self

    def _stream_source(self, recording, model: DynamicModel):
        """The recording as a block source when it is identified block by block (``streaming``), else None."""
        from .streaming import STREAM_VALUES

        mode = self.streaming
        if mode not in ("auto", "always", "never"):
            raise ConfigError(f"streaming must be 'auto', 'always' or 'never', got {mode!r}", options=("streaming",))
        if mode == "never":
            return None
        if isinstance(recording, Recording):
            if mode == "auto" and recording.n_samples * recording.n_joints < STREAM_VALUES:
                return None
            from ..recording import ArraySource

            return ArraySource(self.read(recording, model))
        from ..io.sources import long_source

        source = long_source(recording, model, units=self.units, topic=self.topic, require_tau=True,
                             always=mode == "always")
        if source is None:
            return None
        self.units_ = source.units                              # the units the file is read in
        return source

    def _robot_of_payload_run(self, name: str) -> FittedModel:
        """The robot :attr:`payload_of` names: a :class:`FittedModel`, a result.json, or a softMC parameter program
        (dynid's or the controller's ``IDNT<g>.PRG``, read as this estimator's model with its configuration and
        URDF — the geometry a PRG does not hold —, without the payload run's known payload: the PRG's robot
        carried none)."""
        if isinstance(self.payload_of, FittedModel):
            return self.payload_of
        if not is_prg(self.payload_of):
            return load(self.payload_of)
        if isinstance(self.model, DynamicModel):
            config, urdf = self.model.config.to_dict(), None
        else:
            config, urdf = self._user_config(), self.urdf
        config = {k: v for k, v in config.items() if k not in ("payload", "friction")}
        return load(self.payload_of, name, config=config, urdf=urdf)

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.pop("_rec", None)             # a thread's REC for write(), not part of the estimator
        return state

    def predict(self, recording: Recording | str | os.PathLike) -> Prediction:
        """Torque of the identified model for the motion of ``recording`` (what ``dynid predict`` writes)."""
        model = self._fitted()
        return model.predict(self.read(recording, model.model, require_tau=False))

    def write(self, out_dir: str | os.PathLike, *, source: Mapping[str, Any] | None = None, report: bool = True,
              history: Mapping[str, Any] | None = None, tag: str = "") -> dict[str, Path]:
        """Write ``IDNT<group>.PRG``, ``IDNT<group>.REC``, ``result.json`` (and ``report.html``) into ``out_dir``;
        ``source`` (e.g. the recording's path) is recorded in result.json; ``history`` (the robot's runs in a
        registry, :meth:`dynid.fleet.registry.Registry.history_view`) is shown in the report.

        All of them are staged first — the report rendered from the staged files, as ``dynid report`` would — and
        put in place together, with the removal of the earlier run's outputs they do not replace (its report too,
        when ``report`` is False; :func:`dynid.io.outputs.earlier_outputs`): an error or an interrupt
        (``KeyboardInterrupt``) leaves ``out_dir`` as it was (absent, if it was), a finished write leaves this run's
        outputs beside the folder's other files, which are never touched. ``tag``: put into the staging folder's
        name (:class:`~dynid._atomic.Staging`).

        Raises
        ------
        OutputError
            An output cannot be written (a full disk, a read-only folder): nothing was changed.
        """
        from ..io.outputs import REPORT_NAME, stage_run

        model = self._fitted().with_info(source=dict(source or {}),
                                         created=_dt.datetime.now().isoformat(timespec="seconds"))
        props = self.payload_.prg_properties() if self.payload_ is not None else None
        ahead = self._rec.take(self.result_.cond, self.result_.tcmd) if getattr(self, "_rec", None) else {}
        staging, written = stage_run(model, self.result_.cond, self.result_.tcmd, out_dir, properties=props, tag=tag,
                                     **ahead)
        with staging:
            if report:  # rendered from the files just staged, as 'dynid report' would
                from ..report import write_report

                written[REPORT_NAME] = write_report(out_dir, history=history, staging=staging)
            staging.commit(list(written.values()))
        return written

    @property
    def success_(self) -> bool:
        """softMC's rule: the max relative torque error is below ``allowed`` on every axis."""
        return bool(self._fitted().success)

    def _check_cutoff(self, rec: Recording) -> None:
        """A cutoff given in Hz obeys softMC's rule (:func:`~dynid.identification.options.check_cutoff`)."""
        if self.cutoff is not None and not isinstance(self.cutoff, str):
            check_cutoff(float(self.cutoff), rec)

    def _fitted(self) -> FittedModel:
        model = getattr(self, "model_", None)
        if model is None:
            raise ConfigError("this Identifier is not fitted yet", hint="call fit(recording) first")
        return model

    def _user_config(self) -> dict[str, Any]:
        from ..models.config import load_config_file

        if isinstance(self.config, (str, os.PathLike)):
            return load_config_file(self.config)
        return dict(self.config or {})
