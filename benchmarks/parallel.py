"""Speed of the 6-UPRU hexapod next to a 6-joint serial robot (issue 13).

    python benchmarks/parallel.py [--samples 10000 50000] [--repeat 3]

For each size, two recordings of the same length are written as CSV: the example hexapod (``6upru``,
legs oscillating about home, forces from dynid's model + viscous/Coulomb friction + 0.5 % noise, leg
lengths quantised to 1 µm) and a 6-joint serial arm (``serial`` from the Stäubli TX40 URDF in
../shared/data/real, or the built-in PUMA 560 DH table when that folder is absent; multi-sine joint
motion). Each ``dynid identify --no-report`` runs in its own process, alternating, after one uncounted
warm-up; the table shows medians of wall time, the time per 10 000 samples and the peak resident
memory. Then the building blocks of the hexapod on 10 000 samples: forward kinematics, the regressor
(including it), one Fourier excitation design (home ± 5 cm, 20 s, the CLI's defaults) and one
per-cycle feed-forward step, beside the serial model's regressor.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from speed import run_measured  # noqa: E402

URDF = HERE.parent.parent / "shared" / "data" / "real" / "staubli_tx40_figaroh" / "tx40.urdf"


def hexapod_recording(path: Path, n: int, seed: int = 0) -> None:
    import dynid
    from dynid.models import Plant
    from dynid.models.hexapod import Hexapod
    from dynid.recording import Recording

    model = Hexapod.example()
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 1e-3
    f, a, ph = rng.uniform(0.3, 1.2, (3, 6)), rng.uniform(0.005, 0.015, (3, 6)), rng.uniform(0, 6.3, (3, 6))
    arg = 2 * np.pi * f[None] * t[:, None, None] + ph[None]
    w = 2 * np.pi * f
    q = model.home_positions() + (a * np.sin(arg)).sum(axis=1)
    qd = (a * w * np.cos(arg)).sum(axis=1)
    qdd = -(a * w**2 * np.sin(arg)).sum(axis=1)
    theta = np.concatenate([model.example_parameters(), np.tile([40.0, 12.0], 6)])
    tau = Plant(model).torque(theta, q, qd, qdd)
    tau += rng.normal(size=tau.shape) * 0.005 * np.abs(tau).max(axis=0)
    dynid.write_recording_csv(path, Recording(t, np.round(q / 1e-6) * 1e-6, tau))


def serial_model():
    from dynid.models import make_model

    return make_model("serial", urdf=URDF) if URDF.is_file() else make_model("serial")


def serial_recording(path: Path, n: int, seed: int = 0) -> None:
    import dynid
    from dynid.models import Plant
    from dynid.recording import Recording

    model = serial_model()
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 1e-3
    f, a = rng.uniform(0.1, 0.6, (6, 3)), rng.uniform(0.2, 0.6, (6, 3))
    w = 2 * np.pi * f
    q = np.einsum("jh,njh->nj", a, np.sin(w[None] * t[:, None, None]))
    qd = np.einsum("jh,jh,njh->nj", a, w, np.cos(w[None] * t[:, None, None]))
    qdd = -np.einsum("jh,jh,njh->nj", a, w**2, np.sin(w[None] * t[:, None, None]))
    theta = np.concatenate([model.example_parameters(), np.tile([2.0, 1.5], 6)])
    tau = Plant(model).torque(theta, q, qd, qdd)
    tau += rng.normal(size=tau.shape) * 0.005 * np.abs(tau).max(axis=0)
    dynid.write_recording_csv(path, Recording(t, q, tau))


def best_of(fn, repeat: int = 3) -> float:
    t = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - t0)
    return t


def building_blocks() -> list[tuple[str, str]]:
    from dynid.excite import FourierOptions, JointLimits, choose_periods, optimize_fourier, plan_sine
    from dynid.models import Plant
    from dynid.models.closed_chain import solve_task
    from dynid.models.hexapod import Hexapod
    from dynid.runtime import FeedForward

    hexa = Hexapod.example()
    q, qd, qdd = hexa.sample_states(np.random.default_rng(1), 10_000)
    order = np.argsort(q[:, 0])                      # a continuous sweep, as a recording is
    q, qd, qdd = q[order], qd[order], qdd[order]
    rows = [("forward kinematics, 10 000 samples", f"{best_of(lambda: solve_task(hexa.chain, q)):.3f} s")]
    rows.append(("6upru regressor (incl. forward kinematics), 10 000 samples",
                 f"{best_of(lambda: Hexapod.example().regressor(q, qd, qdd)):.3f} s"))
    ser = serial_model()
    qs, qds, qdds = (np.random.default_rng(2).uniform(-1, 1, (10_000, 6)) for _ in range(3))
    rows.append((f"serial regressor ({'TX40 URDF' if URDF.is_file() else 'PUMA 560 DH'}), 10 000 samples",
                 f"{best_of(lambda: ser.regressor(qs, qds, qdds)):.3f} s"))
    home = hexa.home_positions()
    sine = plan_sine(home - 0.05, home + 0.05, np.array([1.0, 1.27, 1.43, 1.13, 1.37, 1.19]), factor=0.5, record_s=20)
    lim = JointLimits.create(6, position=np.column_stack([home - 0.05, home + 0.05]), velocity=sine.peak_velocity,
                             acceleration=sine.peak_acceleration)
    t0 = time.perf_counter()
    d = optimize_fourier(Plant(hexa), lim, 20.0, FourierOptions(periods=choose_periods(lim, 20.0, 5), dopt_weight=0.0),
                         strict=False)
    rows.append(("Fourier design, 5 harmonics, home ± 5 cm, 20 s",
                 f"{time.perf_counter() - t0:.1f} s (cond {d.condition_number:.0f}, limits ok {d.limits_ok})"))
    theta = np.concatenate([hexa.example_parameters(), np.tile([40.0, 12.0], 6)])
    ff = FeedForward(Plant(hexa), theta, delay_cycles=0)
    st = ff.new_state()
    _, qq, vv, aa = sine.sample(1e-3)
    ff.step(st, qq[0], vv[0], aa[0])
    t0 = time.perf_counter()
    for k in range(1, 1001):
        ff.step(st, qq[k], vv[k], aa[k])
    rows.append(("feed-forward step (per cycle, Python)", f"{(time.perf_counter() - t0):.3f} ms"))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--samples", type=int, nargs="+", default=[10_000, 50_000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    py = sys.executable
    table = []
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "hexapod.json").write_text(json.dumps(__import__("dynid.models.hexapod", fromlist=["x"]).EXAMPLE_GEOMETRY))
        for n in args.samples:
            hexapod_recording(tmp / f"hex{n}.csv", n)
            serial_recording(tmp / f"ser{n}.csv", n)
            cmds = {
                "6upru": [py, "-m", "dynid.cli.main", "identify", str(tmp / f"hex{n}.csv"), "--model", "6upru",
                          "--config", str(tmp / "hexapod.json"), "--out", str(tmp / "oh"), "--no-report", "--quiet"],
                "serial (6 joints)": [py, "-m", "dynid.cli.main", "identify", str(tmp / f"ser{n}.csv"), "--model",
                                      "serial", *(["--urdf", str(URDF)] if URDF.is_file() else []), "--out",
                                      str(tmp / "os"), "--no-report", "--quiet"],
            }
            for cmd in cmds.values():   # warm-up (byte-compilation, page cache)
                run_measured(cmd)
            times: dict[str, list] = {k: [] for k in cmds}
            for _ in range(args.repeat):
                for k, cmd in cmds.items():
                    times[k].append(run_measured(cmd))
            for k, v in times.items():
                wall = statistics.median(x[0] for x in v)
                mem = statistics.median(x[1] for x in v)
                table.append((k, n, wall, wall / n * 10_000, mem))
    print("dynid identify --no-report (median of %d, each in its own process)" % args.repeat)
    print(f"{'model':<20} {'samples':>8} {'wall [s]':>9} {'s / 10k':>8} {'peak MiB':>9}")
    for k, n, wall, per, mem in table:
        print(f"{k:<20} {n:>8} {wall:>9.2f} {per:>8.2f} {mem:>9.0f}")
    print()
    print("building blocks (best of 3)")
    for name, value in building_blocks():
        print(f"  {name:<62} {value}")


if __name__ == "__main__":
    main()
