"""Identify a 6-axis serial robot described by a URDF, then write the softMC outputs.

    python examples/serial_robot_from_urdf.py [path/to/robot.urdf]

Uses the UR5 URDF bundled beside this file (examples/ur5.urdf: link masses and inertias, no meshes)
when no file is given. The recording is simulated with dynid's own model of the URDF (no third-party
engine needed); with a real robot, read it with dynid.read_recording instead.
"""

import sys
import tempfile
from pathlib import Path

import numpy as np

from dynid import Plant, identify, make_model
from dynid.io.outputs import write_outputs
from dynid.recording import Recording

urdf = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent / "ur5.urdf"
if not urdf.is_file():
    print(f"serial_robot_from_urdf.py: error: no URDF at {urdf}: give the path of a robot's URDF", file=sys.stderr)
    sys.exit(2)

plant = Plant(make_model("serial", {"friction": "viscous+coulomb+offset"}, urdf=urdf))
t = np.arange(0.0, 20.0, 2e-3)
w = 2 * np.pi * np.array([[0.11, 0.23, 0.37], [0.13, 0.29, 0.41], [0.17, 0.31, 0.43],
                          [0.19, 0.33, 0.47], [0.21, 0.37, 0.53], [0.23, 0.39, 0.59]])
q = np.stack([0.5 * np.sin(w[j][None, :] * t[:, None]).sum(axis=1) for j in range(6)], axis=1)
qd = np.gradient(q, t, axis=0)
qdd = np.gradient(qd, t, axis=0)
theta = np.concatenate([plant.model.prior_parameters(), np.tile([2.0, 1.0, 0.1], 6)])
tau = plant.torque(theta, q, qd, qdd)
tau += np.random.default_rng(0).normal(size=tau.shape) * 0.005 * np.abs(tau).max(axis=0)

result = identify(Recording(t, q, tau, qd, qdd), plant)
print(result.message, f"({result.base.n_base} base parameters, condition number {result.lsq.condition_number:.0f})")
out = Path(tempfile.mkdtemp()) / urdf.stem
files = write_outputs(result, out)
print("wrote", ", ".join(str(p) for p in files.values()))
