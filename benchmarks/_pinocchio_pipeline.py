"""A plain Pinocchio identification pipeline, run as its own process by benchmarks/speed.py.

The same job as ``dynid identify``: read the CSV, zero-phase Butterworth filter, differentiate,
stack ``computeJointTorqueRegressor`` + viscous/Coulomb/offset columns, pivoted-QR base columns,
least squares, write the parameters. Usage: python _pinocchio_pipeline.py URDF CSV OUT.npz CUTOFF_HZ
"""

import sys

import numpy as np
import pinocchio as pin
from scipy import linalg, signal


def main(urdf: str, csv: str, out: str, cutoff: float) -> None:
    model = pin.buildModelFromUrdf(urdf)
    data = model.createData()
    n = model.nv
    raw = np.loadtxt(csv, delimiter=",", skiprows=1)
    t, q, tau = raw[:, 0], raw[:, 1:1 + n], raw[:, 1 + n:1 + 2 * n]
    dt = float(np.median(np.diff(t)))
    sos = signal.butter(4, cutoff, fs=1.0 / dt, output="sos")
    qf = signal.sosfiltfilt(sos, q, axis=0)
    tauf = signal.sosfiltfilt(sos, tau, axis=0)
    qd = np.gradient(qf, dt, axis=0)
    qdd = np.gradient(qd, dt, axis=0)
    N = q.shape[0]
    W = np.zeros((N, n, 10 * n + 3 * n))
    for k in range(N):  # Pinocchio computes one sample at a time
        W[k, :, :10 * n] = pin.computeJointTorqueRegressor(model, data, qf[k], qd[k], qdd[k])
    for j in range(n):
        W[:, j, 10 * n + 3 * j] = qd[:, j]
        W[:, j, 10 * n + 3 * j + 1] = np.sign(qd[:, j])
        W[:, j, 10 * n + 3 * j + 2] = 1.0
    W = W.reshape(-1, W.shape[2])
    y = tauf.reshape(-1)
    _, R, piv = linalg.qr(W, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    rank = int((d > max(W.shape) * np.finfo(float).eps * d[0]).sum())
    cols = np.sort(piv[:rank])
    x, *_ = linalg.lstsq(W[:, cols], y)
    np.savez(out, x=x, cols=cols)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]))
