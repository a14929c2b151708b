"""Throughput of the ``serial`` regressor against Pinocchio's per-sample loop, in the same run.

    PYTHONPATH=src python tests/models/bench_serial.py [URDF] [N]

Prints samples/s of ``model.regressor`` (fresh output, and into a preallocated buffer), of a Python
loop over ``pinocchio.computeJointTorqueRegressor``, and the largest deviation between the two.
Not collected by pytest (the file name does not start with ``test_``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from dynid.models import make_model
from dynid.models._rnea import chain_regressor

PIN_ORDER = [4, 5, 7, 6, 8, 9, 1, 2, 3, 0]


def best_of(f, repeat=5):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return min(times)


def main(argv):
    root = Path(__file__).resolve().parents[3]
    urdf = Path(argv[0]) if argv else root / "shared/data/real/staubli_tx40_figaroh/tx40.urdf"
    n_samples = int(argv[1]) if len(argv) > 1 else 50_000
    model = make_model("serial", urdf=urdf)
    n = model.n_joints
    rng = np.random.default_rng(0)
    q, qd, qdd = rng.uniform(-2, 2, (n_samples, n)), rng.normal(size=(n_samples, n)), rng.normal(size=(n_samples, n))
    t_fresh = best_of(lambda: model.regressor(q, qd, qdd))
    out = np.empty((n_samples, n, 10 * n))
    t_out = best_of(lambda: chain_regressor(model._compiled, q, qd, qdd, model._gravity_vec, out=out))
    print(f"{urdf.name}: {n} joints, N = {n_samples}")
    print(f"dynid regressor (fresh array)   {1e3 * t_fresh:8.1f} ms  {n_samples / t_fresh / 1e6:6.3f} M samples/s")
    print(f"dynid regressor (out= buffer)   {1e3 * t_out:8.1f} ms  {n_samples / t_out / 1e6:6.3f} M samples/s")
    try:
        import pinocchio as pin
    except ImportError:
        return 0
    pm = pin.buildModelFromUrdf(str(urdf))
    pm.gravity.linear = model._gravity_vec
    data = pm.createData()
    m = min(n_samples, 10_000)
    Yp = np.empty((m, n, 10 * n))
    t0 = time.perf_counter()
    for k in range(m):
        Yp[k] = pin.computeJointTorqueRegressor(pm, data, q[k], qd[k], qdd[k])
    t_pin = time.perf_counter() - t0
    print(f"pinocchio per-sample loop       {1e3 * t_pin * n_samples / m:8.1f} ms  {m / t_pin / 1e6:6.3f} M samples/s")
    cols = [10 * b + k for b in range(n) for k in PIN_ORDER]
    Y = model.regressor(q[:m], qd[:m], qdd[:m])
    print(f"max |Y - Y_pinocchio| = {np.abs(Y - Yp[:, :, cols]).max():.2e} (max |Y| = {np.abs(Y).max():.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
