"""Identify a 6-UPRU hexapod (Stewart-Gough platform) from leg lengths and actuator forces.

    python examples/identify_hexapod.py

Plans a Fourier excitation in leg space (home ± 4 cm, under the U-joint and singularity limits), makes
the recording a controller would log for it (forces from the model with friction and noise, leg lengths
quantised to 1 µm; no hardware needed), identifies the hexapod with the Python API, predicts another
motion, and prints the platform poses the forward kinematics found.
"""

import numpy as np

import dynid
from dynid.excite import FourierOptions, JointLimits, optimize_fourier
from dynid.models import Plant
from dynid.models.hexapod import Hexapod
from dynid.recording import Recording

hexapod = Hexapod.example()                      # or dynid.models.make_model("6upru", your geometry)
plant = Plant(hexapod)
truth = np.concatenate([hexapod.example_parameters(), np.tile([40.0, 12.0], 6)])   # bodies, then friction

home = hexapod.home_positions()                  # leg lengths at the home pose [m]
limits = JointLimits.create(6, position=np.column_stack([home - 0.04, home + 0.04]), velocity=0.2, acceleration=1.5)
design = optimize_fourier(plant, limits, 12.0, FourierOptions(harmonics=4, periods=3, restarts=1, dopt_weight=0.0))
print(f"excitation: condition number {design.condition_number:.0f}, limits ok {design.limits_ok}")


def run(trajectory, seed):
    t, q, qd, qdd = trajectory.sample(12.0, 1e-3)
    tau = plant.torque(truth, q, qd, qdd)
    tau += np.random.default_rng(seed).normal(size=tau.shape) * 0.005 * np.abs(tau).max(axis=0)
    return Recording(t, np.round(q / 1e-6) * 1e-6, tau)


est = dynid.Identifier("6upru", config=dict(hexapod.config.options)).fit(run(design.trajectory, 1))
print("identification", "succeeded" if est.metrics_["success"] else "failed",
      f"(max relative error {100 * max(est.metrics_['max_relative_error']):.2f} %)")
print("grouped base parameters:", ", ".join(e for e in est.result_.base.expressions() if "+" in e or " - " in e))

other = FourierOptions(harmonics=4, periods=3, restarts=1, dopt_weight=0.0, seed=7)
check = run(optimize_fourier(plant, limits, 12.0, other).trajectory, 2)
p = est.predict(check)
rows = np.searchsorted(check.t, p.t)
err = np.sqrt(np.mean((p.tau - check.tau[rows]) ** 2, axis=0)) / np.std(check.tau[rows], axis=0)
print("another motion, NRMSE per leg [%]:", np.round(100 * err, 2))
print("platform pose at t = 0 (x, y, z [m], roll, pitch, yaw [rad]):", np.round(hexapod.poses(check.q[:1])[0], 4))
