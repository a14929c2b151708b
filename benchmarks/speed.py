"""Speed and memory of a whole identification, beside a plain Pinocchio pipeline.

    python benchmarks/speed.py [--samples 50000] [--repeat 5] [--other-python PATH]

A 6-joint recording (Stäubli TX40 URDF from ../shared/data/real, multi-sine motion, torques from
Pinocchio's RNEA + viscous/Coulomb friction + 0.5 % noise) is written as CSV. Then, after one
uncounted warm-up run of each, alternating, each in its own process: ``dynid identify --no-report`` with
dynid's defaults, as a user types it (read; choose cutoff, friction model and prior regularisation by held-out
error; condition, regress, fit, diagnose; write PRG/REC/JSON) and ``_pinocchio_pipeline.py`` (read, filter,
differentiate, stacked ``computeJointTorqueRegressor`` + friction columns, pivoted QR, lstsq). Medians of wall time and
peak resident memory. Also dynid's regressor throughput alone (compiled kernel on all cores and on
one, and the numpy fallback) against Pinocchio's per-sample loop.
Targets: regressor >= 1 M samples/s (issue 4); identify with dynid's defaults (cutoff, friction model and
prior regularisation chosen by held-out error) >= 5x faster than the Pinocchio pipeline and dynid peak
memory <= 250 MiB (issue 15). ``--other-python`` times the same ``dynid identify`` of another
installation (e.g. a virtual environment with the previous release: ``python -m venv v && v/bin/pip
install <checkout of 0.1.0>``) in the same alternation, for a before/after comparison (issue 12: within 5 %).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
URDF = HERE.parent.parent / "shared" / "data" / "real" / "staubli_tx40_figaroh" / "tx40.urdf"


def make_recording(path: Path, n: int, dt: float = 1e-3, seed: int = 0) -> None:
    import pinocchio as pin

    from dynid.io._fastcsv import format_rows

    model = pin.buildModelFromUrdf(str(URDF))
    data = model.createData()
    nj = model.nv
    t = np.arange(n) * dt
    rng = np.random.default_rng(seed)
    f = rng.uniform(0.1, 0.6, (nj, 3))
    a = rng.uniform(0.2, 0.6, (nj, 3))
    w = 2 * np.pi * f
    q = np.einsum("jh,njh->nj", a, np.sin(w[None] * t[:, None, None]))
    qd = np.einsum("jh,jh,njh->nj", a, w, np.cos(w[None] * t[:, None, None]))
    qdd = -np.einsum("jh,jh,njh->nj", a, w**2, np.sin(w[None] * t[:, None, None]))
    tau = np.array([pin.rnea(model, data, q[k], qd[k], qdd[k]) for k in range(n)])
    tau += 2.0 * qd + 1.5 * np.sign(qd)
    tau += rng.normal(size=tau.shape) * 0.005 * np.abs(tau).max(axis=0)
    header = ",".join(["t"] + [f"q{j + 1}" for j in range(nj)] + [f"tau{j + 1}" for j in range(nj)]) + "\n"
    path.write_bytes(header.encode() + format_rows(np.column_stack([t, q, tau])))


def run_process(cmd: list[str]) -> tuple[int, float, float, str]:
    """Exit status, wall time [s], peak resident memory [MiB] and standard error of ``cmd`` (via os.wait4)."""
    # as an installed package runs: byte-compiled modules (pip compiles them at install), so a
    # PYTHONDONTWRITEBYTECODE of the developer's shell is not inherited
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode() if proc.stderr else ""
    return os.waitstatus_to_exitcode(status), wall, usage.ru_maxrss / 1024.0, err


def run_measured(cmd: list[str]) -> tuple[float, float]:
    """Wall time [s] and peak resident memory [MiB] of ``cmd``, which must end with status 0 or 1."""
    code, wall, peak, err = run_process(cmd)
    if code not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)} failed: {err[-800:]}")
    return wall, peak


def regressor_throughput(n: int) -> dict[str, float]:
    """Samples/s of ``model.regressor`` (fresh output each call, best of 3): compiled kernel on all
    cores and on one, the numpy path, and Pinocchio's per-sample loop."""
    import pinocchio as pin

    from dynid.models import _rnea, make_model

    model = make_model("serial", {"friction": "none"}, urdf=URDF)
    rng = np.random.default_rng(1)
    q, qd, qdd = (rng.uniform(-1, 1, (n, model.n_joints)) for _ in range(3))

    def best() -> float:
        t = np.inf
        for _ in range(3):
            t0 = time.perf_counter()
            model.regressor(q, qd, qdd)
            t = min(t, time.perf_counter() - t0)
        return n / t

    rates = {}
    if _rnea.kernel_available():
        rates[f"compiled kernel, {_rnea._kernel_threads(n)} thread(s)"] = best()
        os.environ["DYNID_NUM_THREADS"] = "1"
        rates["compiled kernel, 1 thread"] = best()
        del os.environ["DYNID_NUM_THREADS"]
    load = _rnea._load_kernel
    _rnea._load_kernel = lambda: None
    rates["numpy path"] = best()
    _rnea._load_kernel = load
    pm = pin.buildModelFromUrdf(str(URDF))
    pd = pm.createData()
    m = min(n, 20000)
    t0 = time.perf_counter()
    for k in range(m):
        pin.computeJointTorqueRegressor(pm, pd, q[k], qd[k], qdd[k])
    rates["Pinocchio computeJointTorqueRegressor loop"] = m / (time.perf_counter() - t0)
    puma = make_model("puma")   # the catalogue's closed form (28 columns); was a timed unit test (>= 50 000/s)
    qp, qdp, qddp = (rng.uniform(-1, 1, (n, 6)) for _ in range(3))
    t = np.inf
    for _ in range(3):
        t0 = time.perf_counter()
        puma.regressor(qp, qdp, qddp)
        t = min(t, time.perf_counter() - t0)
    rates["closed form, model puma"] = n / t
    return rates


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--other-python", metavar="PATH",
                    help="python of another dynid installation to time beside this one (before/after)")
    args = ap.parse_args()
    if not URDF.is_file():
        sys.exit(f"skipped: {URDF} not found (../shared/data/real beside the repository)")
    env_py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        csv = tmp / "run.csv"
        make_recording(csv, args.samples)
        cutoff = 10.0
        # exactly what a user types: dynid's defaults (cutoff, friction model and prior regularisation
        # chosen by held-out error); the Pinocchio pipeline gets a fixed 10 Hz cutoff
        dynid_cmd = [env_py, "-m", "dynid.cli.main", "identify", str(csv), "--model", "serial", "--urdf", str(URDF),
                     "--out", str(tmp / "out"), "--no-report", "--quiet"]
        pin_cmd = [env_py, str(HERE / "_pinocchio_pipeline.py"), str(URDF), str(csv), str(tmp / "pin.npz"), str(cutoff)]
        other_cmd = None
        if args.other_python:
            other_cmd = [args.other_python, *dynid_cmd[1:]]
            other_cmd[other_cmd.index(str(tmp / "out"))] = str(tmp / "out_other")
        d_times, d_mem, p_times, p_mem, o_times, o_mem = [], [], [], [], [], []
        run_measured(dynid_cmd)  # warm-up, not counted: byte-compilation and the disk cache
        run_measured(pin_cmd)
        if other_cmd:
            run_measured(other_cmd)
        for _ in range(args.repeat):  # alternate so all see the same machine load
            w, m = run_measured(dynid_cmd)
            d_times.append(w)
            d_mem.append(m)
            w, m = run_measured(pin_cmd)
            p_times.append(w)
            p_mem.append(m)
            if other_cmd:
                w, m = run_measured(other_cmd)
                o_times.append(w)
                o_mem.append(m)
        rates = regressor_throughput(args.samples)
    d, p = float(np.median(d_times)), float(np.median(p_times))
    print(f"speed benchmark: 6-joint TX40 (URDF), {args.samples} samples, median of {args.repeat} alternating runs")
    rows = [
        ("dynid identify --no-report, defaults (process)", f"{d:.2f} s", f"{np.median(d_mem):.0f} MiB"),
        ("Pinocchio pipeline, 10 Hz cutoff (process)", f"{p:.2f} s", f"{np.median(p_mem):.0f} MiB"),
        ("speed-up (issue 15 target >= 5x, with the defaults)", f"{p / d:.1f} x", ""),
    ]
    if o_times:
        o = float(np.median(o_times))
        rows += [(f"dynid identify of {args.other_python}", f"{o:.2f} s", f"{np.median(o_mem):.0f} MiB"),
                 ("this / other (target <= 1.05)", f"{d / o:.3f}", "")]
    first = True
    for name, rate in rates.items():
        label = name if name.startswith("Pinocchio") else f"dynid regressor, {name}"
        if first:
            label += " (target >= 1 M samples/s)"
            first = False
        rows.append((label, f"{rate / 1e6:.2f} M samples/s", ""))
    w = max(len(r[0]) for r in rows)
    print(f"{'':<{w}}  {'time / rate':>18}  {'peak memory':>12}")
    for name, a, b in rows:
        print(f"{name:<{w}}  {a:>18}  {b:>12}")
    print(f"memory target (issue 15: dynid peak <= 250 MiB): {'met' if np.median(d_mem) <= 250 else 'MISSED'}")
    print(f"speed target (issue 15: >= 5x the Pinocchio pipeline): {'met' if p / d >= 5 else 'MISSED'}")


if __name__ == "__main__":
    main()
