"""Physically consistent identification of the Franka Panda on the Gaz et al. (2019) recording.

    PYTHONPATH=src python benchmarks/consistent_panda.py [--data DIR] [--repeat K]

Model ``serial`` from the shipped ``panda.urdf`` (its inertial values are the prior), friction
viscous + Coulomb + offset (the paper's), measured dq (as recorded), time on a uniform 1 kHz grid
(the README: the stamps jitter). Prints, for WLS and the consistent estimator at several prior
weights: the fit relative error ``||tau - W x|| / ||tau||`` over the full record (against the
filtered torque the fit uses, and against the raw torque), the held-out relative error (fit on the
first 70 %, validate on the last 30 %), the links whose pseudo-inertia is not positive
semidefinite, and run times (median of ``--repeat``). Gaz et al. report 1.41 % for classical LS.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from dynid.signal.conditioning import condition
from dynid.identification.consistent import ConsistentOptions, physical_consistency
from dynid.identification import IdentifyOptions, identify
from dynid.models import Plant, make_model
from dynid.recording import Recording

DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "data" / "real" / "panda_gaz2019"


def load(folder: Path) -> Recording:
    t = np.loadtxt(folder / "exciting_traj_time.txt")
    q = np.loadtxt(folder / "exciting_traj_positions.txt").reshape(-1, 7)
    dq = np.loadtxt(folder / "exciting_traj_velocity.txt").reshape(-1, 7)
    tau = np.loadtxt(folder / "exciting_traj_torques.txt").reshape(-1, 7)
    return Recording(np.arange(t.size) * 1e-3, q, tau, dq, source=str(folder))


def fit_error(res) -> float:
    """``||tau - W x|| / ||tau||`` over every conditioned sample: the fit's own regressor (low-pass
    filtered Coulomb sign) against the filtered torque it was fitted to."""
    return float(np.linalg.norm(res.tcmd - res.cond.tau) / np.linalg.norm(res.cond.tau))


def raw_error(plant, res, rec) -> float:
    """The physical model (sharp Coulomb step) against the unfiltered measured torque of ``rec``."""
    cond = condition(rec, replace(res.cond.options, velocity_threshold=None), plant.model.joint_kinds,
                     require_motion=False)
    pred = plant.torque(res.theta, cond.q, cond.qd, cond.qdd)
    return float(np.linalg.norm(pred - cond.tau_raw) / np.linalg.norm(cond.tau_raw))


class StageClock:
    """Progress callback that records when each stage of ``identify`` starts."""

    def __init__(self) -> None:
        self.marks: list[tuple[str, float]] = []

    def __call__(self, stage: str, fraction: float) -> None:
        self.marks.append((stage, time.perf_counter()))

    def span(self, first: str, until: str) -> float:
        t = dict(self.marks)
        return t[until] - t[first]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rec = load(args.data)
    plant = Plant(make_model("serial", {"friction": "viscous+coulomb+offset"}, urdf=args.data / "panda.urdf"))
    n = rec.n_samples
    cut = int(0.7 * n)
    print(f"Panda, {n} samples, {plant.n_params} parameters ({plant.n_model} inertial); Gaz et al. 2019: "
          f"classical LS fit relative error 1.41 %")
    print(f"{'estimator':>31} {'fit err (filt)':>14} {'fit err (raw)':>13} {'held-out (raw)':>14} "
          f"{'LS-inconsistent links':>22} {'inconsistent links':>18} {'identify [s]':>12} {'fit stage [s]':>13} "
          f"{'iterations':>10}")
    runs = [("wls", None)] + [("consistent", w) for w in (1e-3, 1e-2, 1e-1, 1.0)]
    for est, w in runs:
        opts = IdentifyOptions(estimator=est) if w is None else \
            IdentifyOptions(estimator=est, consistent=ConsistentOptions(prior_weight=w))
        times, stage = [], []
        for _ in range(args.repeat):
            clock = StageClock()
            t0 = time.perf_counter()
            res = identify(rec, plant, opts, progress=clock)
            times.append(time.perf_counter() - t0)
            stage.append(clock.span("physically consistent fit" if w is not None else "least squares", "evaluation"))
        e_f, e_r = fit_error(res), raw_error(plant, res, rec)
        held = identify(rec.slice(0, cut), plant, opts)
        h_r = raw_error(plant, held, rec.slice(cut, n))
        links = res.theta[: plant.n_model].reshape(-1, 10)
        bad = physical_consistency(links).violations
        lin_bad = res.consistent.linear_consistency.violations if res.consistent else bad
        label = est if w is None else f"{est} (prior_weight {w:g})"
        iters = res.consistent.iterations if res.consistent else "-"
        print(f"{label:>31} {100 * e_f:13.3f}% {100 * e_r:12.3f}% {100 * h_r:13.3f}% {len(lin_bad):>22d} "
              f"{len(bad):>18d} {np.median(times):12.2f} {np.median(stage):13.3f} {iters!s:>10}")
    res = identify(rec, plant, IdentifyOptions(estimator="consistent"))
    print("\nconsistent (default prior weight): masses [kg]", np.round(res.theta[9:plant.n_model:10], 3))
    print("URDF prior masses [kg]            ", np.round(plant.model.prior_parameters()[9::10], 3))
    print("friction:", {k: np.round(v, 4).tolist() for k, v in plant.friction.values_by_term(res.friction_values).items()})
    for note in res.notes:
        print("note:", note)


if __name__ == "__main__":
    main()
