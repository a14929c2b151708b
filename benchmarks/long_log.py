"""Long logs: time and peak memory of ``dynid identify --no-report`` on recordings of 0.1 to 16 M rows.

    python benchmarks/long_log.py                      # 1 and 6 joints, 0.1 / 1 / 4 / 16 M rows (about 30 min)
    python benchmarks/long_log.py --rows 0.1,1,4 --joints 1
    python benchmarks/long_log.py --keep DIR           # keep the CSV files in DIR (reused by the next run)

Each recording is what a production log of a repeating cycle looks like — the case that made more data give a
worse fit before issue 26: the one-joint crank arm (``rotary3``: I = 0.5 kg m², M·g·A = 4 N m, viscous 0.3,
Coulomb 0.2) on one 2.5 Hz sine, and a PUMA 560 as a serial chain (model ``serial`` with its DH table and link
inertias in a configuration file — the path every URDF/DH arm takes —, viscous and Coulomb friction) repeating a
5 s multi-sine cycle; 1 kHz, 0.5 % torque noise, 20-bit encoders. The CSV is written in
blocks. Then ``dynid identify`` runs as a user types it (with its defaults: cutoff, friction model and
regularisation chosen by held-out error), in its own process; wall time and peak resident memory come from
``os.wait4``. The table gives the relative error of the identified parameters the recording determines (I and
M·g·A for the crank; for the PUMA the torque the identified model predicts for one cycle, NRMSE against the true
model's).

Targets (issue 26): the crank at 1 M and 4 M rows identified with I and M·g·A within 1 %; peak memory at most
400 MiB, and at 4 M rows at most 1.3 × that at 1 M; time linear in the rows.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from speed import run_process

ROWS_PER_WRITE = 500_000


def crank_rows(start: int, stop: int, rng: np.random.Generator) -> np.ndarray:
    t = np.arange(start, stop) * 1e-3
    w = 2 * np.pi * 2.5
    q = 1.5 * np.sin(w * t)
    qd, qdd = 1.5 * w * np.cos(w * t), -1.5 * w * w * np.sin(w * t)
    tau = 0.5 * qdd - 4.0 * np.sin(q) + 0.3 * qd + 0.2 * np.sign(qd)
    tau += rng.normal(size=t.size) * 0.005 * 13.0
    q = np.round(q * 2**20 / (2 * np.pi)) * (2 * np.pi) / 2**20
    return np.column_stack([t, q, tau])


def puma_config() -> dict:
    """The PUMA 560 as a DH chain (Corke's mdl_puma560 values) with its link inertias."""
    from dynid.models.serial import _PUMA560_LINKS, PUMA560_DH

    return {"dh": [dict(row) for row in PUMA560_DH], "links": [dict(link) for link in _PUMA560_LINKS],
            "friction": "viscous+coulomb"}


def puma_plant():
    from dynid.models import Plant, make_model

    plant = Plant(make_model("serial", puma_config()))
    theta = np.concatenate([np.asarray(plant.model.prior_parameters(), float), np.tile([2.0, 1.5], 6)])
    return plant, theta


def puma_motion(t: np.ndarray):
    """A 5 s cycle: per joint three harmonics of 0.2 Hz (periodic: the log repeats it)."""
    amp = np.array([0.8, 0.5, 0.6, 1.0, 0.8, 1.2])
    harm = np.array([[1, 2, 3], [1, 3, 4], [2, 3, 5], [1, 2, 4], [1, 3, 5], [2, 4, 5]]) * 2 * np.pi * 0.2
    phase = np.linspace(0, 2, 18).reshape(6, 3)
    s = np.sin(harm[None] * t[:, None, None] + phase[None])
    c = np.cos(harm[None] * t[:, None, None] + phase[None])
    a = amp[:, None] / 3.0
    q = np.einsum("jh,njh->nj", np.broadcast_to(a, harm.shape), s)
    qd = np.einsum("jh,jh,njh->nj", np.broadcast_to(a, harm.shape), harm, c)
    qdd = -np.einsum("jh,jh,njh->nj", np.broadcast_to(a, harm.shape), harm**2, s)
    return q, qd, qdd


def puma_rows(start: int, stop: int, rng: np.random.Generator, plant, theta, peak) -> np.ndarray:
    t = np.arange(start, stop) * 1e-3
    q, qd, qdd = puma_motion(t)
    tau = plant.torque(theta, q, qd, qdd)
    tau += rng.normal(size=tau.shape) * 0.005 * peak
    q = np.round(q * 2**20 / (2 * np.pi)) * (2 * np.pi) / 2**20
    return np.column_stack([t, q, tau])


def write_csv(path: Path, rows: int, joints: int) -> None:
    from dynid.io._fastcsv import format_rows

    rng = np.random.default_rng(0)
    names = ["t"] + [f"q{j + 1}" for j in range(joints)] + [f"tau{j + 1}" for j in range(joints)]
    plant = theta = peak = None
    if joints == 6:
        plant, theta = puma_plant()
        q, qd, qdd = puma_motion(np.arange(5000) * 1e-3)
        peak = np.abs(plant.torque(theta, q, qd, qdd)).max(axis=0)
    tmp = path.with_suffix(".partial")
    with open(tmp, "wb") as fh:
        fh.write((",".join(names) + "\n").encode())
        for s in range(0, rows, ROWS_PER_WRITE):
            e = min(rows, s + ROWS_PER_WRITE)
            data = crank_rows(s, e, rng) if joints == 1 else puma_rows(s, e, rng, plant, theta, peak)
            fh.write(format_rows(data))
    tmp.replace(path)


def quality(out: Path, joints: int) -> str:
    result = json.loads((out / "result.json").read_text())
    values = dict(zip(result["parameters"]["names"], result["parameters"]["values"]))
    if joints == 1:
        return (f"I {100 * (values['I'] / 0.5 - 1):+.3f} %, M*g*A {100 * (values['M*g*A'] / 4.0 - 1):+.3f} %")
    from dynid.fitted import load

    model = load(out)
    plant, theta = puma_plant()
    q, qd, qdd = puma_motion(np.arange(5000) * 1e-3)
    true = plant.torque(theta, q, qd, qdd)
    pred = model.torque(q, qd, qdd)
    nrmse = np.sqrt(np.mean((pred - true) ** 2, axis=0)) / np.sqrt(np.mean(true**2, axis=0))
    return f"cycle torque NRMSE max {100 * nrmse.max():.3f} %"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", default="0.1,1,4,16", help="millions of rows, comma-separated")
    ap.add_argument("--joints", default="1,6", help="1 (crank arm) and/or 6 (PUMA 560, serial chain)")
    ap.add_argument("--keep", metavar="DIR", help="write (and reuse) the recordings here instead of a temporary folder")
    args = ap.parse_args(argv)
    sizes = [int(round(float(x) * 1e6)) for x in args.rows.split(",")]
    joint_counts = [int(x) for x in args.joints.split(",")]
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="dynid-long-log-"))
    work.mkdir(parents=True, exist_ok=True)
    print(f"{'rows':>10} {'joints':>6} {'CSV MB':>8} {'time s':>8} {'us/row':>8} {'peak MiB':>9}  result")
    config = work / "puma560.json"
    config.write_text(json.dumps(puma_config()))
    for joints in joint_counts:
        model = ["--model", "rotary3"] if joints == 1 else ["--model", "serial", "--config", str(config)]
        for rows in sizes:
            path = work / f"log_{joints}j_{rows}.csv"
            if not path.exists():
                write_csv(path, rows, joints)
            out = work / f"out_{joints}j_{rows}"
            code, wall, peak, err = run_process([sys.executable, "-m", "dynid.cli.main", "identify", str(path),
                                                 *model, "--no-report", "--quiet", "--out", str(out)])
            verdict = ("SUCCEEDED" if code == 0 else "FAILED") + ("; " + quality(out, joints) if code in (0, 1) else
                                                                 f"; exit {code}: {err.strip()[-200:]}")
            print(f"{rows:>10} {joints:>6} {path.stat().st_size / 1e6:>8.0f} {wall:>8.1f} {1e6 * wall / rows:>8.2f} "
                  f"{peak:>9.0f}  {verdict}", flush=True)
            if not args.keep:
                path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
