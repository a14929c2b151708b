"""Sine program vs optimised Fourier excitation on the PUMA: conditioning, limits, identification quality.

    PYTHONPATH=src python benchmarks/excitation.py [--seed K] [--harmonics N] [--record-s S] [--noise F]

Three motions: the source's PUMA SineWave program (0.15*{1.56,1,1.31,1.47,1.21,1.17} Hz between
{-100,-170,100,-60,-60,-100} and {100,-40,235,60,60,100} deg) and two optimised 5-harmonic Fourier
trajectories: the default objective (log cond(W) - 3 mean log sigma(W): the condition number with its
D-optimal term) and the pure condition number (``dopt_weight=0``). The Fourier designs stay inside the sine program's box and within its own peak velocity
and acceleration per joint; all three are recorded for the same time after the same settling (20 s
after 2 s).

The built-in simulator (closed-loop servo, 1 kHz, 20-bit encoder) runs the AKB PUMA 560 with Corke's
viscous and Coulomb friction and rotor inertias; the model identified (and optimised for) is ``puma``
with ``friction: viscous+coulomb+armature``, so it is exact. The torque noise is the same for every
run: white, with a standard deviation of ``--noise`` (0.5 %) of each joint's peak torque in the sine
run. Each recording is identified with ``dynid.identification`` twice: with its defaults, and with a velocity
threshold of ``--threshold`` (0.05 rad/s, inside softMC's example thresholds 0.031-0.063 rad/s), which
drops the near-standstill samples where the simulator's smoothed Coulomb step and servo differ most
from the model.

Validation: the identified model predicts the torque of a third motion (a multi-sine inside the same
box, 15 s at 1 ms); validation NRMSE per joint = RMS(tau_identified - tau_true) / RMS(tau_true), with
``tau_true`` the true robot's torque on that motion (model error alone). ``--simulate-validation`` also
runs that motion in the simulator and compares ``dynid.predict`` with its recorded torque, as a user
would; that number has a floor of several percent set by the simulated servo (encoder quantisation
through the velocity loop), the same for every motion.

Prints one table; nothing is written. Takes a few minutes (the simulator is a Python loop).
"""

from __future__ import annotations

import argparse
import os
import time
from dataclasses import dataclass

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # small matrices: one BLAS thread is fastest

import numpy as np  # noqa: E402

from dynid.excite import FourierOptions, JointLimits, optimize_fourier, plan_sine, predict_identifiability  # noqa: E402
from dynid.signal.conditioning import ConditioningOptions  # noqa: E402
from dynid.identification import IdentifyOptions, identify  # noqa: E402
from dynid.metrics import nrmse  # noqa: E402
from dynid.models import Plant, make_model  # noqa: E402
from dynid.fitted import predict  # noqa: E402
from dynid.recording import Recording  # noqa: E402
from dynid.sim import SimOptions, simulate  # noqa: E402

DEG = np.pi / 180
START = np.array([-100, -170, 100, -60, -60, -100]) * DEG
TARGET = np.array([100, -40, 235, 60, 60, 100]) * DEG
BASE = np.array([1.56, 1, 1.31, 1.47, 1.21, 1.17])
FACTOR = 0.15
FV = np.array([5.8, 9.5, 4.0, 0.41, 0.43, 0.22])   # viscous [N m s/rad] (Corke's PUMA B*G^2)
FC = np.array([24.7, 13.6, 7.1, 0.85, 0.67, 0.30])  # Coulomb [N m] (Corke's PUMA Tc*|G|)
ROTOR = np.array([291e-6, 409e-6, 299e-6, 35e-6, 35e-6, 35e-6]) * np.array(
    [-62.6111, 107.815, -53.7063, 76.0364, 71.923, 76.686]) ** 2          # Corke's Jm G^2 [kg m^2]


@dataclass(frozen=True)
class MultiSine:
    """Validation motion: four sines per joint at f0 (l + 0.13 j) Hz, random phases, inside the box."""

    record_s: float = 15.0
    settle_s: float = 2.0
    f0: float = 0.12
    seed: int = 4

    @property
    def n_joints(self) -> int:
        return 6

    @property
    def duration(self) -> float:
        return self.record_s + self.settle_s

    def command(self, t):
        t = np.asarray(t, dtype=float)[:, None]
        rng = np.random.default_rng(self.seed)
        q = np.tile((START + TARGET) / 2, (t.shape[0], 1))
        qd, qdd = np.zeros_like(q), np.zeros_like(q)
        for j in range(6):
            for h in range(1, 5):
                w = 2 * np.pi * self.f0 * (h + 0.13 * j)
                a = (TARGET[j] - START[j]) / 2 / 4 * rng.uniform(0.5, 1.0)
                ph = rng.uniform(0, 2 * np.pi)
                q[:, j] += a * np.sin(w * t[:, 0] + ph)
                qd[:, j] += a * w * np.cos(w * t[:, 0] + ph)
                qdd[:, j] -= a * w**2 * np.sin(w * t[:, 0] + ph)
        return q, qd, qdd


def with_noise(rec: Recording, sigma: np.ndarray, seed: int) -> Recording:
    tau = rec.tau + np.random.default_rng(seed).normal(size=rec.tau.shape) * sigma
    return Recording(rec.t, rec.q, tau, meta=rec.meta, source=rec.source)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=0, help="seed of the Fourier optimiser")
    ap.add_argument("--harmonics", type=int, default=5)
    ap.add_argument("--record-s", type=float, default=20.0)
    ap.add_argument("--noise", type=float, default=0.005)
    ap.add_argument("--threshold", type=float, default=0.05,
                    help="velocity threshold [rad/s] of the second identification setting (softMC's examples: 0.031-0.063)")
    ap.add_argument("--simulate-validation", action="store_true", help="also simulate the validation motion")
    args = ap.parse_args()

    plant = Plant(make_model("puma", {"friction": "viscous+coulomb+armature"}))
    theta = np.concatenate([plant.model.example_parameters(), np.column_stack([FV, FC, ROTOR]).ravel()])
    sine = plan_sine(START, TARGET, BASE, factor=FACTOR, record_s=args.record_s, settle_s=2.0)
    limits = JointLimits.create(6, position=np.column_stack([START, TARGET]), velocity=sine.peak_velocity,
                                acceleration=sine.peak_acceleration)
    designs, t_opt = {}, {}
    for key, kappa in (("default", 3.0), ("pure", 0.0)):
        t0 = time.perf_counter()
        designs[key] = optimize_fourier(plant, limits, args.record_s,
                                        FourierOptions(harmonics=args.harmonics, seed=args.seed, dopt_weight=kappa))
        t_opt[key] = time.perf_counter() - t0
    ts, qs, qds, qdds = sine.sample(1e-3)
    sine_pred = predict_identifiability(plant, qs, qds, qdds, record_s=args.record_s)
    cols = ["sine program", "Fourier", "Fourier (pure)"]

    sim = SimOptions(sample_period=1e-3, noise=0.0)
    t1 = time.perf_counter()
    motions = {cols[0]: sine.motion(), cols[1]: designs["default"].trajectory.motion(args.record_s, settle_s=2.0),
               cols[2]: designs["pure"].trajectory.motion(args.record_s, settle_s=2.0)}
    clean = {k: simulate(plant, theta, m, sim, seed=0) for k, m in motions.items()}
    vmotion = MultiSine()
    tv = np.arange(int(round(vmotion.record_s / 1e-3))) * 1e-3 + vmotion.settle_s
    qv, qdv, qddv = vmotion.command(tv)
    tau_true = plant.torque(theta, qv, qdv, qddv)
    val = None
    if args.simulate_validation:
        val_clean = simulate(plant, theta, vmotion, sim, seed=0)
        val = with_noise(val_clean, args.noise * np.abs(val_clean.tau).max(axis=0), seed=99)
    t_sim = time.perf_counter() - t1
    sigma = args.noise * np.abs(clean[cols[0]].tau).max(axis=0)      # equal absolute noise for every run
    settings = {"defaults": IdentifyOptions(),
                f"threshold {args.threshold:g} rad/s": IdentifyOptions(
                    conditioning=ConditioningOptions(velocity_threshold=args.threshold))}
    res = {}
    for k, (name, rec) in enumerate(clean.items()):
        noisy = with_noise(rec, sigma, seed=10 + k)
        for sname, opts in settings.items():
            ident = identify(noisy, plant, opts)
            r = {"cond": ident.lsq.condition_number, "success": ident.success,
                 "nrmse": nrmse(plant.torque(ident.theta, qv, qdv, qddv), tau_true)}
            if val is not None:
                idm = ident.model
                r["nrmse_sim"] = predict(idm, val).nrmse()
            res[name, sname] = r

    print(f"PUMA (AKB 560 + Corke friction and rotors), record {args.record_s:g} s after 2 s, 1 kHz; torque noise "
          f"{100 * args.noise:g} % of the sine run's peak torque (the same sigma for every run)")
    print(f"optimiser ({args.harmonics} harmonics, seed {args.seed}): {t_opt['default']:.2f} s with the default "
          f"objective (log cond - 3 mean log sigma), {t_opt['pure']:.2f} s for the pure condition number; "
          f"simulation {t_sim:.0f} s\n")
    w = 16
    head = f"{'':34s}" + "".join(f"{c:>{w}s}" for c in cols)
    print(head)
    print("-" * len(head))

    def line(label, vals):
        print(f"{label:34s}" + "".join(f"{v:>{w}s}" for v in vals))

    planned = [sine_pred, designs["default"], designs["pure"]]
    line("planned cond(W), base params", [f"{p.condition_number:.4g}" for p in planned])
    line("planned cond, unit columns", [f"{p.condition_number_scaled:.4g}" for p in planned])
    line("limits ok (1 ms grid)", ["by design", str(designs["default"].limits_ok), str(designs["pure"].limits_ok)])
    for sname in settings:
        print(f"identification, {sname}:")
        line("  identified cond(W)", [f"{res[c, sname]['cond']:.4g}" for c in cols])
        line("  softMC 50 % rule", [str(res[c, sname]["success"]) for c in cols])
        for j in range(6):
            line(f"  validation NRMSE A{j + 1}", [f"{res[c, sname]['nrmse'][j]:.5f}" for c in cols])
        line("  validation NRMSE, mean", [f"{np.mean(res[c, sname]['nrmse']):.5f}" for c in cols])
        if val is not None:
            for j in range(6):
                line(f"  vs simulated run A{j + 1}", [f"{res[c, sname]['nrmse_sim'][j]:.4f}" for c in cols])


if __name__ == "__main__":
    main()
