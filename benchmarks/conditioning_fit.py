"""Time the identification path on a 50 000-sample recording and print a table.

    python benchmarks/conditioning_fit.py [--samples N] [--repeat K]

Stages: read CSV, condition (filter, differentiate, trim, gate), regressor, structural base,
least squares, diagnostics, and the whole ``identify``; plus ``dynid identify --no-report`` as a
user runs it (a separate process, so import and file writing are included). Medians over repeats.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dynid.identification.base_params import structural_base
from dynid.signal.conditioning import condition
from dynid.identification.diagnostics import diagnose
from dynid.identification.solve import weighted_lstsq
from dynid.identification import identify
from dynid.io.readers import read_recording, write_recording_csv
from dynid.models import Plant, make_model
from dynid.recording import Recording


def make_recording(n: int, dt: float = 1e-3, seed: int = 0) -> Recording:
    """Vertical crank arm (rotary3) on a two-sine motion, exact torque + 0.5 % noise, 20-bit encoder."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) * dt
    w1, w2 = 2 * np.pi * 0.37, 2 * np.pi * 0.83
    q = 1.2 * np.sin(w1 * t) + 0.6 * np.sin(w2 * t)
    qd = 1.2 * w1 * np.cos(w1 * t) + 0.6 * w2 * np.cos(w2 * t)
    qdd = -1.2 * w1**2 * np.sin(w1 * t) - 0.6 * w2**2 * np.sin(w2 * t)
    tau = 0.5 * qdd - 20.0 * np.sin(q) + 0.8 * qd + 1.5 * np.sign(qd)
    tau += rng.normal(size=n) * 0.005 * np.abs(tau).max()
    res = 2 * np.pi / 2**20
    return Recording(t, np.round(q / res) * res, tau)


def timed(fn, repeat):
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    n = args.samples
    rec = make_recording(n)
    plant = Plant(make_model("rotary3"))
    with tempfile.TemporaryDirectory() as tmp:
        csv = Path(tmp) / "run.csv"
        write_recording_csv(csv, rec)
        rows = []
        t_read, rec2 = timed(lambda: read_recording(csv, n_joints=1), args.repeat)
        rows.append(("read CSV", t_read))
        t_cond, cond = timed(lambda: condition(rec2), args.repeat)
        rows.append(("condition (filter, derivatives, trim, gate)", t_cond))
        t_reg, Y = timed(lambda: plant.regressor(cond.q, cond.qd, cond.qdd, sign=cond.sign), args.repeat)
        rows.append(("regressor", t_reg))
        t_base, base = timed(lambda: structural_base(plant), args.repeat)
        rows.append(("structural base parameters", t_base))
        m = cond.moving
        W = Y[m][:, base.independent]
        y = cond.tau[m]
        joint = np.nonzero(m)[1]
        t_ls, _ = timed(lambda: weighted_lstsq(W, y, joint, 1), args.repeat)
        rows.append(("weighted least squares (QR)", t_ls))
        t_id, ident = timed(lambda: identify(rec2, plant), args.repeat)
        t_diag, _ = timed(lambda: diagnose(ident), args.repeat)
        rows.append(("diagnostics", t_diag))
        rows.append(("identify() total (condition + fit + diagnostics)", t_id))
        cli = []
        for _ in range(max(3, args.repeat // 2)):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "dynid.cli.main", "identify", str(csv), "--model", "rotary3",
                            "--out", str(Path(tmp) / "out"), "--no-report", "--quiet"], check=True, capture_output=True)
            cli.append(time.perf_counter() - t0)
        rows.append(("dynid identify --no-report (process: read, fit, write PRG/REC/JSON)", float(np.median(cli))))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"dynid conditioning + fit benchmark: rotary3, {n} samples, 1 joint, median of {args.repeat}")
    w = max(len(r[0]) for r in rows)
    print(f"{'stage':<{w}}  {'time [ms]':>10}  {'samples/s':>12}")
    print("-" * (w + 26))
    for name, t in rows:
        print(f"{name:<{w}}  {1000 * t:10.1f}  {n / t:12.3g}")
    print(f"peak memory of this process: {peak:.0f} MiB; identified I = {ident.values['I']:.4f} (true 0.5), "
          f"max relative error {100 * ident.errors.max_relative[0]:.2f} %")


if __name__ == "__main__":
    main()
