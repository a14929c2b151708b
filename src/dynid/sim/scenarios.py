"""Built-in closed-loop scenarios (``dynid simulate --scenario NAME``), reproducing the source's
experiments qualitatively (spec/units-and-runtime.md §6) and the collision test.

Every scenario starts from a representative robot ("true" robot: parameters, friction including an
unmodelled Stribeck term, drive limits, encoder, noise), simulates the source's SineWave
identification run on it in closed loop, identifies it with the dynid pipeline
(:func:`~dynid.identification.pipeline.identify`, softMC's ``viscous+coulomb`` friction, PUMA with the
``armature`` extension) and uses *that* result for the feed-forward and the collision detector. The
true robot is then run with and without the additive torque, the servo gains identical.

=================  ==========================================================================
scenario           what is measured
=================  ==========================================================================
scara-move         600 mm straight line at 900 mm/s, 1 kg payload; settling (PESETTLE 0.001)
delta-move         550 mm straight line at 3000 mm/s; settling (PESETTLE 0.05)
puma-hold          axis 3 SineWave, axis 2 commanded at 0; axis-2 peak-to-peak position error
scara-collision    60 s of pick-and-place moves (false alarms) and the same moves with an
                   external torque step of 20 % of axis 1's peak torque (detection delay)
=================  ==========================================================================

Settling follows softMC (``PESETTLE`` per axis in user units, deg or mm, every axis of the
group; ``TIMESETTLE`` 10 ms), measured from the end of the profile. The robots, servo tuning and
noise are documented in :data:`ROBOTS` and in each scenario's ``to_dict()["setup"]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .._progress import ProgressCallback, part
from ..errors import ConfigError
from ..identification.pipeline import Identification, IdentifyOptions, identify
from ..models import Plant, make_model
from ..runtime.collision import DerivedThresholds, ThresholdOptions, replay, thresholds_from_fit
from ..runtime.feedforward import FeedForward
from .closed_loop import (ClosedLoopRun, Command, DriveOptions, ExternalStep, ServoGains, joint_inertia,
                          peak_to_peak, run_closed_loop, settling_time)
from .motion import SineMotion
from .profile import line_path, scurve

__all__ = ["RobotSpec", "ROBOTS", "SCENARIOS", "ScenarioResult", "run_scenario", "identify_robot",
           "thresholds_from_identification", "scara_ik", "source_results"]

_DEG = math.pi / 180.0
_TWO20 = 2.0**20
SUBSTEPS = 4
"""Drive loop steps per 1 ms controller cycle (4 kHz position/velocity loop and integration)."""
TIMESETTLE_S = 0.010
"""TIMESETTLE of the move scenarios [s] (softMC's default is 0; 10 ms keeps an overshoot crossing the
window from counting as settled)."""


# --------------------------------------------------------------------------- robots

@dataclass(frozen=True)
class RobotSpec:
    """A representative robot: what the simulator treats as the real machine.

    name : str ; model : registered model name ; config : geometry keys (true and identified model) ;
    params : (n_model,) true model parameters ; friction : true friction per joint, a mapping
    ``{term: (n,)}`` over ``viscous``, ``coulomb``, ``stribeck`` (unmodelled by softMC's model),
    ``armature`` ; stribeck_velocity : [rad/s or m/s] ; ident_friction : friction terms identified ;
    gear_ratio : (n,) motor turns per joint turn (linear: per screw turn) ; lead_m : screw lead per joint
    [m/rev] (linear joints) ; torque_limit : (n,) drive peak torque at the joint [N m or N] ;
    feedback_noise : (n,) torque-feedback noise std [N m or N] ; torque_ripple : (n,) applied torque
    ripple std per drive step [N m or N] ; bandwidth_hz : velocity loop bandwidth ;
    ident : (start, target) [SI] and frequencies [Hz] of the SineWave identification program ;
    home : (n,) pose the servo is tuned at [SI]
    """

    name: str
    model: str
    config: dict
    params: tuple
    friction: dict
    stribeck_velocity: float
    ident_friction: str
    gear_ratio: tuple
    lead_m: tuple
    torque_limit: tuple
    feedback_noise: tuple
    torque_ripple: tuple
    bandwidth_hz: float
    ident_start: tuple
    ident_target: tuple
    ident_freqs_hz: tuple
    home: tuple
    ident_record_s: float = 20.0
    ident_settle_s: float = 2.0
    description: str = ""

    @property
    def n_joints(self) -> int:
        return len(self.gear_ratio)

    def true_plant(self, payload_mass: float = 0.0, payload_inertia: float = 0.0) -> tuple[Plant, np.ndarray]:
        """The true robot as a plant (with Stribeck and armature terms where given) and its theta."""
        terms = [t for t in ("viscous", "coulomb", "stribeck", "armature") if t in self.friction]
        cfg = dict(self.config, friction="+".join(terms), stribeck_velocity=self.stribeck_velocity,
                   payload={"mass": payload_mass, "inertia": payload_inertia})
        plant = Plant(make_model(self.model, cfg))
        fr = np.column_stack([np.asarray(self.friction[t], dtype=float) for t in terms]).ravel()
        return plant, np.concatenate([np.asarray(self.params, dtype=float), fr])

    def ident_plant(self) -> Plant:
        """The model dynid identifies (no payload, ``ident_friction``)."""
        return Plant(make_model(self.model, dict(self.config, friction=self.ident_friction)))

    @property
    def encoder_resolution(self) -> np.ndarray:
        """Joint-side quantum of a 20-bit motor encoder [rad or m]."""
        res = []
        for gr, lead in zip(self.gear_ratio, self.lead_m):
            res.append((lead if lead else 2 * math.pi) / (_TWO20 * gr))
        return np.array(res)

    def drive(self, sample_period: float = 1e-3, substeps: int | None = None) -> DriveOptions:
        substeps = SUBSTEPS if substeps is None else substeps
        # plant_update: a Delta (batch-regressor plant) once per cycle, 2.3x faster, same scenario results
        return DriveOptions(sample_period=sample_period, substeps=substeps, command_delay_cycles=3,
                            torque_limit=self.torque_limit, feedback_noise=self.feedback_noise,
                            torque_ripple=self.torque_ripple, encoder_resolution=self.encoder_resolution,
                            plant_update="cycle")

    def gains(self) -> ServoGains:
        """Tuned once on the true joint inertias at :attr:`home` (no payload)."""
        plant, theta = self.true_plant()
        return ServoGains.tune(joint_inertia(plant, theta, self.home), self.bandwidth_hz)

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "model": self.model, "config": self.config, "true_parameters": list(self.params),
                "true_friction": {k: list(v) for k, v in self.friction.items()},
                "stribeck_velocity": self.stribeck_velocity, "identified_friction_model": self.ident_friction,
                "gear_ratio": list(self.gear_ratio), "encoder_bits": 20,
                "encoder_resolution": self.encoder_resolution.tolist(), "torque_limit": list(self.torque_limit),
                "feedback_noise_std": list(self.feedback_noise), "torque_ripple_std": list(self.torque_ripple),
                "velocity_loop_bandwidth_hz": self.bandwidth_hz,
                "identification_program": {"start": list(self.ident_start), "target": list(self.ident_target),
                                           "freqs_hz": list(self.ident_freqs_hz), "record_s": self.ident_record_s,
                                           "settle_s": self.ident_settle_s},
                "description": self.description}


_SCARA_GEOMETRY = {"L1": 0.325, "L2": 0.275}
_SCARA = RobotSpec(
    name="scara 600 mm",
    model="scara4",
    config=_SCARA_GEOMETRY,
    # M2 = 4 kg, A2 = 0.12 m, I1 = 0.25, I2 = 0.035, J2 = 0.06 kg m^2, M3 = 1.5 kg, I4 = 0.002, J4 = 0.008
    params=(0.325**2 * 4.0 + 0.25, 0.12**2 * 4.0 + 0.035, 0.06, 0.325 * 0.12 * 4.0, 1.5, 9.80665 * 1.5, 0.002, 0.008),
    friction={"viscous": (0.8, 0.5, 60.0, 0.05), "coulomb": (2.5, 1.5, 12.0, 0.3),
              "stribeck": (1.0, 0.6, 5.0, 0.1)},
    stribeck_velocity=0.05,
    ident_friction="viscous+coulomb",
    gear_ratio=(80.0, 50.0, 1.0, 30.0),
    lead_m=(0.0, 0.0, 0.02, 0.0),
    torque_limit=(60.0, 30.0, 150.0, 4.0),
    feedback_noise=(0.10, 0.05, 0.5, 0.005),
    torque_ripple=(0.05, 0.025, 0.05, 0.002),
    bandwidth_hz=30.0,
    ident_start=(-160 * _DEG, -160 * _DEG, 0.0, -350 * _DEG),
    ident_target=(160 * _DEG, 160 * _DEG, 0.150, 350 * _DEG),
    ident_freqs_hz=tuple(0.3 * f for f in (1.0, 1.27, 1.43, 1.13)),
    home=(0.0, 60 * _DEG, 0.05, 0.0),
    description="600 mm class 4-axis SCARA (L1 325 mm, L2 275 mm), harmonic drives 80:1 / 50:1 / 30:1, "
                "20 mm/rev ball screw; the source's SCARA identification program",
)

_DELTA_GEOMETRY = {"base_radius": 0.2, "platform_radius": 0.05, "upper_arm": 0.35, "forearm": 0.8}
_DELTA = RobotSpec(
    name="delta 3-axis",
    model="delta3",
    config=_DELTA_GEOMETRY,
    # Theta_AB 0.08 kg m^2 (arm + reflected rotor), M_AB·g·L 1 kg at 0.15 m, forearm pair 0.3 kg
    # (Theta_BC = m L^2/12), plate 1.2 kg; slots 6..14 unused by delta3
    params=(0.08, 9.80665 * 1.0 * 0.15, 0.3, 0.3 * 0.8**2 / 12, 1.2) + (0.0,) * 9,
    friction={"viscous": (0.6, 0.6, 0.6), "coulomb": (1.2, 1.2, 1.2), "stribeck": (0.5, 0.5, 0.5)},
    stribeck_velocity=0.05,
    ident_friction="viscous+coulomb",
    gear_ratio=(25.0, 25.0, 25.0),
    lead_m=(0.0, 0.0, 0.0),
    torque_limit=(120.0, 120.0, 120.0),
    feedback_noise=(0.15, 0.15, 0.15),
    torque_ripple=(0.08, 0.08, 0.08),
    bandwidth_hz=30.0,
    ident_start=(-30 * _DEG,) * 3,
    ident_target=(70 * _DEG,) * 3,
    ident_freqs_hz=tuple(0.3 * f for f in (1.0, 1.27, 1.43)),
    home=(25.4 * _DEG,) * 3,
    description="Delta (R 200 mm, r 50 mm, upper arm 350 mm, forearm 800 mm; the merged delta3 example "
                "geometry), 25:1 gearboxes; the source's Delta identification program (-30..70 deg)",
)

_PUMA = RobotSpec(
    name="puma 560",
    model="puma",
    config={},
    params=tuple(make_model("puma").example_parameters()),
    friction={"viscous": (3.0, 5.0, 2.0, 0.3, 0.3, 0.3), "coulomb": (4.0, 6.0, 3.0, 0.4, 0.4, 0.4),
              "stribeck": (1.5, 2.0, 1.0, 0.1, 0.1, 0.1),
              "armature": (0.0, 0.0, 0.827, 0.2, 0.179, 0.193)},
    stribeck_velocity=0.05,
    ident_friction="viscous+coulomb+armature",
    gear_ratio=(62.6, 107.8, 53.7, 76.0, 71.9, 76.7),
    lead_m=(0.0,) * 6,
    torque_limit=(100.0, 180.0, 90.0, 20.0, 20.0, 20.0),
    feedback_noise=(0.2, 0.3, 0.15, 0.02, 0.02, 0.02),
    torque_ripple=(0.1, 0.15, 0.08, 0.01, 0.01, 0.01),
    bandwidth_hz=20.0,
    ident_start=tuple(x * _DEG for x in (-100, -170, 100, -60, -60, -100)),
    ident_target=tuple(x * _DEG for x in (100, -40, 235, 60, 60, 100)),
    ident_freqs_hz=tuple(0.15 * f for f in (1.56, 1.0, 1.31, 1.47, 1.21, 1.17)),
    home=(0.0, 0.0, 45 * _DEG, 0.0, 0.0, 0.0),
    description="PUMA 560 with the Armstrong-Khatib-Burdick parameters, rotor inertias Im3..Im6 of AKB on "
                "joints 3-6 (identified with the armature extension), PUMA gear ratios; the source's PUMA "
                "identification program",
)

ROBOTS: dict[str, RobotSpec] = {"scara": _SCARA, "delta": _DELTA, "puma": _PUMA}
"""The representative robots of the scenarios."""


# --------------------------------------------------------------------------- identification

def identify_robot(spec: RobotSpec, *, seed: int = 0, sample_period: float = 1e-3,
                   substeps: int | None = None, progress: ProgressCallback | None = None
                   ) -> tuple[Identification, ClosedLoopRun]:
    """Simulate the SineWave identification run of ``spec`` in closed loop and identify it with dynid.

    Returns the :class:`~dynid.identification.pipeline.Identification` and the simulated run;
    ``progress(stage, fraction)`` is called as they go.
    """
    plant, theta = spec.true_plant()
    motion = SineMotion(spec.ident_start, spec.ident_target, spec.ident_freqs_hz, record_s=spec.ident_record_s,
                        settle_s=spec.ident_settle_s)
    t = np.arange(int(round(motion.duration / sample_period)) + 1) * sample_period
    q, qd, qdd = motion.command(t)
    run = run_closed_loop(plant, theta, Command(t, q, qd, qdd), spec.gains(), spec.drive(sample_period, substeps),
                          seed=seed, progress=part(progress, 0.0, 0.7, "identification run: "))
    rec = run.to_recording(start_s=spec.ident_settle_s)
    ident = identify(rec, spec.ident_plant(), IdentifyOptions(), progress=part(progress, 0.7, 1.0, "identifying: "))
    return ident, run


def thresholds_from_identification(ident: Identification, options: ThresholdOptions = ThresholdOptions()
                                   ) -> DerivedThresholds:
    """Collision thresholds from the identification's validation residuals (see
    :func:`~dynid.runtime.collision.thresholds_from_fit`)."""
    c = ident.cond
    return thresholds_from_fit(ident.plant, ident.theta, c.q, c.qd, c.qdd, c.tau_raw, c.sample_period_s,
                               c.velocity_threshold, options)


# --------------------------------------------------------------------------- kinematics of the moves

def scara_ik(L1: float, L2: float, p: np.ndarray, pd: np.ndarray, pdd: np.ndarray, *, elbow: float = 1.0):
    """Planar 2-link inverse kinematics of the SCARA's axes 1–2, with rates.

    Parameters
    ----------
    L1, L2 : float
        Link lengths [m].
    p, pd, pdd : ndarray, shape (N, 2)
        Tool position in the base plane [m], velocity, acceleration.
    elbow : {1.0, -1.0}
        Sign of q2 (elbow configuration).

    Returns
    -------
    q, qd, qdd : ndarray, shape (N, 2)
        [rad], [rad/s], [rad/s²]; ``qd = J⁻¹ pd``, ``qdd = J⁻¹ (pdd − J̇ qd)``.
    """
    x, y = p[:, 0], p[:, 1]
    c2 = (x**2 + y**2 - L1**2 - L2**2) / (2 * L1 * L2)
    if np.any(np.abs(c2) > 1):
        raise ConfigError("SCARA move leaves the reachable annulus", hint="choose points within L1 + L2 of axis 1")
    q2 = elbow * np.arccos(c2)
    q1 = np.arctan2(y, x) - np.arctan2(L2 * np.sin(q2), L1 + L2 * np.cos(q2))
    s1, c1, s12, c12 = np.sin(q1), np.cos(q1), np.sin(q1 + q2), np.cos(q1 + q2)
    J = np.empty((x.size, 2, 2))
    J[:, 0, 0], J[:, 0, 1] = -L1 * s1 - L2 * s12, -L2 * s12
    J[:, 1, 0], J[:, 1, 1] = L1 * c1 + L2 * c12, L2 * c12
    qd = np.linalg.solve(J, pd[:, :, None])[:, :, 0]
    w1, w12 = qd[:, 0], qd[:, 0] + qd[:, 1]
    Jd = np.empty_like(J)
    Jd[:, 0, 0], Jd[:, 0, 1] = -L1 * c1 * w1 - L2 * c12 * w12, -L2 * c12 * w12
    Jd[:, 1, 0], Jd[:, 1, 1] = -L1 * s1 * w1 - L2 * s12 * w12, -L2 * s12 * w12
    qdd = np.linalg.solve(J, (pdd - np.einsum("nij,nj->ni", Jd, qd))[:, :, None])[:, :, 0]
    return np.column_stack([q1, q2]), qd, qdd


def _joint_ptp(q0: np.ndarray, q1: np.ndarray, vmax: np.ndarray, amax: np.ndarray, dt: float, dwell: float):
    """Synchronised joint-space S-curve move ``q0 -> q1`` (the slowest joint sets the time)."""
    d = q1 - q0
    L = float(np.max(np.abs(d) / vmax))
    ratio = np.max(np.abs(d) / amax)
    # one normalised profile s in [0, 1]: speed 1/L, acceleration from the most limited joint
    prof = scurve(1.0, 1.0 / L if L > 0 else 1.0, 1.0 / ratio, 8.0 / ratio, dt, t_after=dwell)
    return (q0 + prof.s[:, None] * d, prof.sd[:, None] * d, prof.sdd[:, None] * d)


# --------------------------------------------------------------------------- results

@dataclass(frozen=True)
class ScenarioResult:
    """Outcome of one scenario: the JSON values, the runs (for plots) and the identification."""

    name: str
    values: dict
    runs: dict = field(repr=False)
    identification: Identification = field(repr=False)
    thresholds: DerivedThresholds | None = field(default=None, repr=False)
    setup: dict = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        ident = self.identification
        out = {"scenario": self.name, **self.values,
               "source": source_results().get(self.name, {}),
               "identification": {"model": ident.plant.model.name, "success": ident.success,
                                  "max_relative_error": ident.errors.max_relative.tolist(),
                                  "cutoff_hz": ident.cond.cutoff_hz,
                                  "parameters": dict(zip(ident.plant.param_names, ident.theta.tolist()))},
               "setup": self.setup}
        if self.thresholds is not None:
            out["thresholds"] = self.thresholds.to_dict()
        return out


def source_results() -> dict[str, dict[str, Any]]:
    """The source's reported numbers (spec/units-and-runtime.md §6), for side-by-side output."""
    return {
        "scara-move": {"settling_time_without_model_s": 0.300, "settling_time_with_model_s": 0.260,
                       "ratio": 0.867, "pesettle": 0.001},
        "delta-move": {"settling_time_without_model_s": 0.268, "settling_time_with_model_s": 0.044,
                       "ratio": 0.164, "pesettle": 0.05},
        "puma-hold": {"p2p_error_without_model": 1.04e-3, "p2p_error_with_model": 0.627e-3, "ratio": 0.603,
                      "units": "as printed by the source (softMC user units, deg)"},
    }


@dataclass(frozen=True)
class _Degraded:
    """An identification result with its model parameters scaled by ``1 + model_error·u``, u ~ U(−1, 1)."""

    plant: Plant
    theta: np.ndarray


def _degrade(ident: Identification, model_error: float, seed: int):
    if model_error == 0:
        return ident
    rng = np.random.default_rng(1000 + seed)
    theta = ident.theta.copy()
    k = ident.plant.n_model
    theta[:k] *= 1.0 + model_error * rng.uniform(-1.0, 1.0, k)
    return _Degraded(ident.plant, theta)


def _with_without(spec: RobotSpec, ident: Identification, cmd: Command, *, payload_mass: float = 0.0,
                  seed: int = 1, substeps: int | None = None, model_error: float = 0.0,
                  progress: ProgressCallback | None = None):
    plant, theta = spec.true_plant(payload_mass=payload_mass)
    ff = FeedForward.from_result(_degrade(ident, model_error, seed), delay_cycles=3, payload_mass=payload_mass)
    gains, drive = spec.gains(), spec.drive(substeps=substeps)
    without = run_closed_loop(plant, theta, cmd, gains, drive, seed=seed,
                              progress=part(progress, 0.0, 0.5, "run without the model: "))
    with_ = run_closed_loop(plant, theta, cmd, gains, drive, feedforward=ff, seed=seed,
                            progress=part(progress, 0.5, 1.0, "run with the model: "))
    return without, with_, gains, drive


def _user_units(spec: RobotSpec, value: float) -> np.ndarray:
    """softMC user units (deg, mm) value per joint, in SI."""
    plant = spec.ident_plant()
    return np.array([value * (_DEG if k == "rotary" else 1e-3) for k in plant.model.joint_kinds])


def _setup(spec: RobotSpec, gains: ServoGains, drive: DriveOptions, **extra) -> dict[str, Any]:
    return {"robot": spec.to_dict(), "servo": gains.to_dict(), "drive": drive.to_dict(),
            "additive_torque_delay_cycles": 3, **extra}


# --------------------------------------------------------------------------- the scenarios

def _move_result(name, spec, ident, cmd, pesettle, payload_mass, extra, model_error=0.0, seed=0, progress=None):
    without, with_, gains, drive = _with_without(spec, ident, cmd, payload_mass=payload_mass,
                                                 model_error=model_error, seed=seed + 1, progress=progress)
    pe = _user_units(spec, pesettle)
    s_without = settling_time(without.t, without.position_error, cmd.t_end, pe, TIMESETTLE_S)
    s_with = settling_time(with_.t, with_.position_error, cmd.t_end, pe, TIMESETTLE_S)
    values = {
        "settling_time_with_model_s": s_with,
        "settling_time_without_model_s": s_without,
        "settling_ratio": s_with / s_without if s_without > 0 else float("nan"),
        "pesettle": pesettle, "pesettle_units": "deg (rotary axes) / mm (linear axes), every axis",
        "timesettle_s": TIMESETTLE_S,
        "profile_end_s": cmd.t_end,
        "max_following_error_with_model": np.abs(with_.position_error).max(axis=0).tolist(),
        "max_following_error_without_model": np.abs(without.position_error).max(axis=0).tolist(),
        "peak_torque": np.abs(without.tfb).max(axis=0).tolist(),
        "feedforward_threshold_exceeded": bool(np.any(with_.ff_status == 1)),
    }
    setup = _setup(spec, gains, drive, payload_mass_kg=payload_mass, model_error=model_error, **extra)
    return ScenarioResult(name, values, {"without model": without, "with model": with_}, ident, None, setup)


def _line_move(start_m, end_m, *, speed: float, acceleration: float, jerk: float, Ts: float = 1e-3):
    """S-curve straight line (1 ms cycle, 50 ms before, 800 ms after): the profile, Cartesian
    position/velocity/acceleration, and the move's description for the scenario's setup."""
    distance = float(np.linalg.norm(np.subtract(end_m, start_m)))
    prof = scurve(distance, speed, acceleration, jerk, Ts, t_before=0.05, t_after=0.8)
    info = {"move": {"from_m": list(start_m), "to_m": list(end_m), "speed_m_s": speed,
                     "acceleration_m_s2": acceleration, "jerk_m_s3": jerk}}
    return prof, line_path(start_m, end_m, prof), info


def scara_move(*, seed: int = 0, model_error: float = 0.0, progress: ProgressCallback | None = None) -> ScenarioResult:
    """600 mm straight line at 900 mm/s with a 1 kg payload (PESETTLE 0.001)."""
    spec = _SCARA
    ident, _ = identify_robot(spec, seed=seed, progress=part(progress, 0.0, 0.6))
    prof, (p, pd, pdd), move = _line_move([0.42, -0.30], [0.42, 0.30], speed=0.9, acceleration=8.0, jerk=160.0)
    q, qd, qdd = scara_ik(spec.config["L1"], spec.config["L2"], p, pd, pdd)
    z = np.zeros((prof.t.size, 1))
    cmd = Command(prof.t, np.hstack([q, z + 0.05, z]), np.hstack([qd, z, z]), np.hstack([qdd, z, z]), prof.t_end)
    move["move"]["z_m"] = 0.05
    return _move_result("scara-move", spec, ident, cmd, 0.001, 1.0, move, model_error, seed, part(progress, 0.6, 1.0))


def delta_move(*, seed: int = 0, model_error: float = 0.0, progress: ProgressCallback | None = None) -> ScenarioResult:
    """550 mm straight line at 3000 mm/s (PESETTLE 0.05)."""
    from ..models.delta import cartesian_to_joint

    spec = _DELTA
    ident, _ = identify_robot(spec, seed=seed, progress=part(progress, 0.0, 0.6))
    prof, (p, pd, pdd), move = _line_move([-0.275, 0.0, -0.8], [0.275, 0.0, -0.8], speed=3.0, acceleration=50.0,
                                          jerk=2500.0)
    q, qd, qdd = cartesian_to_joint(spec.ident_plant().model.geometry, p, pd, pdd)
    cmd = Command(prof.t, q, qd, qdd, prof.t_end)
    return _move_result("delta-move", spec, ident, cmd, 0.05, 0.0, move, model_error, seed, part(progress, 0.6, 1.0))


def puma_hold(*, seed: int = 0, model_error: float = 0.0, progress: ProgressCallback | None = None) -> ScenarioResult:
    """Axis 3 oscillates (SineWave 0..90 deg at 0.5 Hz), axis 2 holds 0: axis-2 peak-to-peak error."""
    spec = _PUMA
    ident, _ = identify_robot(spec, seed=seed, progress=part(progress, 0.0, 0.6))
    Ts = 1e-3
    n = 6
    start = np.zeros(n)
    target = np.zeros(n)
    target[2] = 90 * _DEG
    motion = SineMotion(start, target, np.full(n, 0.5), record_s=6.0, settle_s=0.0)
    t = np.arange(int(round(motion.duration / Ts)) + 1) * Ts
    q, qd, qdd = motion.command(t)
    hold = np.ones(n, dtype=bool)
    hold[2] = False
    q[:, hold], qd[:, hold], qdd[:, hold] = start[hold], 0.0, 0.0
    cmd = Command(t, q, qd, qdd, None)
    without, with_, gains, drive = _with_without(spec, ident, cmd, model_error=model_error, seed=seed + 1,
                                                 progress=part(progress, 0.6, 1.0))
    t_from = 2.0                                   # after the start transient: two full oscillations
    p2p_without = float(peak_to_peak(without.position_error[:, 1], without.t, t_from)[0])
    p2p_with = float(peak_to_peak(with_.position_error[:, 1], with_.t, t_from)[0])
    values = {
        "p2p_error_with_model": p2p_with,
        "p2p_error_without_model": p2p_without,
        "p2p_error_units": "rad",
        "p2p_error_with_model_deg": p2p_with / _DEG,
        "p2p_error_without_model_deg": p2p_without / _DEG,
        "p2p_ratio": p2p_with / p2p_without if p2p_without > 0 else float("nan"),
        "measured_from_s": t_from,
        "axis3_motion": {"start_deg": 0.0, "target_deg": 90.0, "freq_hz": 0.5},
    }
    setup = _setup(spec, gains, drive, other_axes="held at 0 rad", model_error=model_error)
    return ScenarioResult("puma-hold", values, {"without model": without, "with model": with_}, ident, None, setup)


def _pick_and_place(spec: RobotSpec, duration: float, dt: float) -> Command:
    """Repeated joint-space moves between four poses with short dwells, ``duration`` [s] long."""
    poses = np.array([[-60, 90, 0.02, 0], [30, -80, 0.12, 90], [70, 40, 0.05, -45], [-20, -100, 0.10, 180]], float)
    poses[:, [0, 1, 3]] *= _DEG
    vmax = np.array([3.0, 3.5, 0.8, 6.0])
    amax = np.array([12.0, 15.0, 6.0, 30.0])
    qs, qds, qdds = [], [], []
    k = 0
    total = 0.0
    while total < duration:
        a, b = poses[k % 4], poses[(k + 1) % 4]
        q, qd, qdd = _joint_ptp(a, b, vmax, amax, dt, 0.15)
        if qs:
            q, qd, qdd = q[1:], qd[1:], qdd[1:]
        qs.append(q)
        qds.append(qd)
        qdds.append(qdd)
        total += q.shape[0] * dt
        k += 1
    q, qd, qdd = (np.vstack(x) for x in (qs, qds, qdds))
    n = int(round(duration / dt)) + 1
    q, qd, qdd = q[:n], qd[:n], qdd[:n]
    return Command(np.arange(q.shape[0]) * dt, q, qd, qdd, None)


def _replay_run(monitor, run: ClosedLoopRun, delay: int):
    """The monitor replayed over a run's log (the command velocity aligned with the applied Taddcmd)."""
    vcmd = np.vstack([np.repeat(run.vcmd[:1], delay, axis=0), run.vcmd[: run.vcmd.shape[0] - delay]])
    return replay(monitor, run.t, run.taddcmd, run.tfb, run.vfb, vcmd)


def scara_collision(*, seed: int = 0, duration_s: float = 60.0, collision_joint: int = 0,
                    step_fraction: float = 0.2, collision_s: float = 0.3,
                    progress: ProgressCallback | None = None) -> ScenarioResult:
    """False alarms over ``duration_s`` of collision-free pick-and-place moves, then the same moves with
    an external torque step of ``step_fraction`` × the joint's peak torque (in the collision-free run),
    opposing the joint's motion, lasting ``collision_s`` (the robot would be stopped by then)."""
    spec = _SCARA
    ident, _ = identify_robot(spec, seed=seed, progress=part(progress, 0.0, 0.25))
    thr = thresholds_from_identification(ident)
    monitor = thr.monitor
    Ts = 1e-3
    cmd = _pick_and_place(spec, duration_s, Ts)
    plant, theta = spec.true_plant()
    ff = FeedForward.from_result(ident, delay_cycles=3)
    gains, drive = spec.gains(), spec.drive()
    free = run_closed_loop(plant, theta, cmd, gains, drive, feedforward=ff, monitor=monitor, seed=seed + 11,
                           progress=part(progress, 0.25, 0.85, "collision-free run: "))
    free_events = _replay_run(monitor, free, ff.delay_cycles).detections
    peak = float(np.abs(free.tfb[:, collision_joint]).max())
    # the collision: during the third move, when the joint moves fastest
    short = int(round(6.0 / Ts))
    c_cmd = Command(cmd.t[:short], cmd.q[:short], cmd.qd[:short], cmd.qdd[:short], None)
    v = np.abs(c_cmd.qd[:, collision_joint])
    window = (c_cmd.t > 1.5) & (c_cmd.t < 4.5)
    k_on = int(np.argmax(np.where(window, v, -1.0)))
    t_on = float(c_cmd.t[k_on])
    direction = -np.sign(c_cmd.qd[k_on, collision_joint]) or -1.0
    step = ExternalStep(t_on, collision_joint, float(direction * step_fraction * peak), t_on + collision_s)
    hit = run_closed_loop(plant, theta, c_cmd, gains, drive, feedforward=ff, monitor=monitor,
                          external_torque=step, seed=seed + 12, progress=part(progress, 0.85, 1.0, "collision run: "))
    rows = np.nonzero(hit.alarm.any(axis=1) & (hit.t >= t_on))[0]
    # the controller learns the alarm of cycle k at the next cycle: + Ts
    delay = float(hit.t[rows[0]] - t_on + Ts) if rows.size else float("nan")
    joint_hit = int(np.argmax(hit.alarm[rows[0]])) if rows.size else -1
    before = int(np.sum(np.diff(np.concatenate([[False], hit.alarm[hit.t < t_on].any(axis=1)]).astype(int)) == 1))
    values = {
        "detection_delay_s": delay,
        "false_alarms": len(free_events),
        "false_alarm_check_duration_s": float(free.t[-1] - free.t[0]),
        "detected": bool(rows.size),
        "detected_joint": joint_hit + 1 if rows.size else None,
        "collision_joint": collision_joint + 1,
        "collision_time_s": t_on,
        "collision_torque": step.value,
        "collision_torque_fraction_of_peak": step_fraction,
        "collision_duration_s": collision_s,
        "joint_peak_torque": peak,
        "alarms_before_collision": before,
        "false_alarm_events": [d.to_dict() for d in free_events][:20],
        "max_error_to_threshold_collision_free": np.max(np.abs(free.te) / free.limit, axis=0).tolist(),
        "expected_false_alarms_per_hour": float(np.sum(thr.expected_false_alarms_per_hour)),
        "observed_alarms_on_identification_data": thr.observed_alarms,
        "torque_error_max": monitor.temax.tolist(),
        "torque_error_max_low_velocity": monitor.temax_lowvel.tolist(),
        "velocity_gate": monitor.v_gate.tolist(),
        "torque_error_filter": monitor.tef.tolist(),
    }
    setup = _setup(spec, gains, drive, motion="pick-and-place: joint-space S-curve moves between 4 poses, 150 ms "
                   "dwell", threshold_rule=thr.to_dict()["rule"])
    return ScenarioResult("scara-collision", values, {"collision-free": free, "collision": hit}, ident, thr, setup)


SCENARIOS: dict[str, Callable[..., ScenarioResult]] = {
    "scara-move": scara_move,
    "delta-move": delta_move,
    "puma-hold": puma_hold,
    "scara-collision": scara_collision,
}
"""Built-in scenarios by name (interfaces.md §5)."""


def run_scenario(name: str, *, seed: int = 0, **kwargs) -> ScenarioResult:
    """Run a built-in scenario by name (see :data:`SCENARIOS`).

    ``kwargs`` go to the scenario function, e.g. ``model_error=0.2`` for the moves (the identified model
    parameters scaled by a seeded random factor in [0.8, 1.2] before use: a deliberately worse model), or
    ``progress`` (a ``progress(stage, fraction)`` callback: the identification run, the fit, the servo runs).
    """
    try:
        fn = SCENARIOS[name]
    except KeyError:
        raise ConfigError(f"unknown scenario {name!r}", hint=f"choose one of: {', '.join(SCENARIOS)}") from None
    return fn(seed=seed, **kwargs)
