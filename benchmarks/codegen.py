"""Symbolic derivation and generated code: derivation times, code size, per-call torque timings (issue 14).

    python benchmarks/codegen.py [--calls 2000000]

Derivation (``dynid.symbolic.derive``, best of 3) for a 2-joint arm (point masses), a spatial 3-joint arm
(tests/data/spatial3.urdf) and a 6-joint arm (tests/data/ur5.urdf): Newton–Euler with symbolic
parameters, with the URDF's values, and the Lagrange trace form; plus the JSON printing of the 6-joint one.
Code generation for the identified 6-joint arm (URDF inertias + viscous/Coulomb/offset friction + payload):
size of the C, ST and Python. Per-call torque of that arm:
- the generated C, called in a C loop (gcc -O2, inputs changing every call, ``clock_gettime``);
- the generated C through ctypes from Python (``GeneratedDynamics``);
- dynid's per-cycle feed-forward step (the compiled trigonometric form, Python);
- dynid's compiled Newton–Euler regressor kernel (batch of 100 000 samples, per sample, ``Y @ p``);
- Pinocchio's ``rnea`` called from Python (per call) and over a batch in a Python loop.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "tests" / "data"

TWO_LINK = """<?xml version="1.0"?><robot name="two_link"><link name="base"/>
<link name="l1"><inertial><origin xyz="1 0 0"/><mass value="2"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
<link name="l2"><inertial><origin xyz="1 0 0"/><mass value="4"/><inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="1 0 0"/><axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""

HARNESS = r"""
#include <stdio.h>
#include <time.h>
#include "dynid_model.h"
int main(int argc, char **argv) {
    long calls = argc > 1 ? atol(argv[1]) : 1000000;
    double q[DYNID_N_JOINTS], dq[DYNID_N_JOINTS], ddq[DYNID_N_JOINTS], tau[DYNID_N_JOINTS], acc = 0.0;
    for (int j = 0; j < DYNID_N_JOINTS; j++) { q[j] = 0.1 * j; dq[j] = 0.3 - 0.1 * j; ddq[j] = 1.0 + j; }
    struct timespec a, b;
    for (long k = 0; k < calls / 10; k++) { q[k % DYNID_N_JOINTS] += 1e-7; dynid_torque(q, dq, ddq, tau); acc += tau[0]; }
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long k = 0; k < calls; k++) {
        q[k % DYNID_N_JOINTS] += 1e-7; dq[(k + 1) % DYNID_N_JOINTS] -= 1e-7;
        dynid_torque(q, dq, ddq, tau);
        acc += tau[k % DYNID_N_JOINTS];
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    printf("%.3f %g\n", ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / calls, acc);
    return 0;
}
"""


sys.path.insert(0, str(HERE))
from parallel import best_of as best  # noqa: E402


def fitted_arm():
    from dynid.fitted import FittedModel
    from dynid.models import Plant, make_model

    model = make_model("serial", {"friction": "viscous+coulomb+offset", "payload": {"mass": 1.5, "inertia": 0.02}},
                       urdf=DATA / "ur5.urdf")
    plant = Plant(model)
    theta = np.concatenate([model.prior_parameters(), np.tile([2.0, 1.5, 0.2], 6)])
    return FittedModel(plant, theta)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=2_000_000)
    args = ap.parse_args()
    from dynid.models import make_model
    from dynid.symbolic import GeneratedDynamics, derive, generate_code

    tmp = Path(tempfile.mkdtemp())
    (tmp / "two.urdf").write_text(TWO_LINK)
    arms = {"2 joints (point masses)": tmp / "two.urdf", "3 joints (spatial3.urdf)": DATA / "spatial3.urdf",
            "6 joints (ur5.urdf)": DATA / "ur5.urdf"}
    print("derivation [s], best of 3")
    print(f"  {'arm':<26} {'NE symbolic':>12} {'NE numeric':>11} {'Lagrange num.':>14} {'JSON (num.)':>12}")
    for name, urdf in arms.items():
        m = make_model("serial", urdf=urdf)
        t_sym = best(lambda: derive(m))
        t_num = best(lambda: derive(m, numeric=True))
        t_lag = best(lambda: derive(m, numeric=True, method="lagrange"), repeat=1)
        d = derive(m, numeric=True)
        t_json = best(lambda: d.to_json(), repeat=1)
        print(f"  {name:<26} {t_sym:>12.2f} {t_num:>11.2f} {t_lag:>14.2f} {t_json:>12.2f}")
    fitted = fitted_arm()
    print("\ngenerated code, identified 6-joint arm (UR5 inertias, viscous/Coulomb/offset friction, payload)")
    codes = {}
    for lang in ("c", "st", "python"):
        t0 = time.perf_counter()
        code = generate_code(fitted, lang)
        codes[lang] = code
        size = sum(len(v) for v in code.files.values())
        print(f"  {lang:<7} {size / 1024:7.1f} kB  {code.operations:5d} operations  {code.intermediates:4d} common "
              f"sub-expressions  {time.perf_counter() - t0:5.1f} s")
    rows = []
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc:
        out = tmp / "c"
        codes["c"].write(out)
        (out / "bench.c").write_text(HARNESS)
        subprocess.run([cc, "-O2", "-std=c99", "-D_POSIX_C_SOURCE=199309L", "-include", "stdlib.h", str(out / "bench.c"),
                        str(out / "dynid_model.c"), "-o", str(out / "bench"), "-lm"], check=True)
        ns = min(float(subprocess.run([str(out / "bench"), str(args.calls)], capture_output=True, text=True,
                                      check=True).stdout.split()[0]) for _ in range(3))
        rows.append(("generated C, called from C (gcc -O2)", ns / 1000))
        gd = GeneratedDynamics.from_fitted(fitted)
        ws, o = gd.new_workspace(), np.empty(6)
        q, qd, qdd = np.full(6, 0.3), np.full(6, 0.2), np.full(6, 1.0)
        k = 100_000
        t = best(lambda: [gd.full_torque_into(ws, q, qd, qdd, o) for _ in range(k)])
        rows.append(("generated C through ctypes, from Python", t / k * 1e6))
        from dynid.runtime import FeedForward

        ffg = FeedForward.from_result(fitted, delay_cycles=0, dynamics=gd)
        sg = ffg.new_state()
        t = best(lambda: [ffg.step(sg, q, qd, qdd) for _ in range(20_000)])
        rows.append(("dynid feed-forward step on the generated C, Python", t / 20_000 * 1e6))
    from dynid.runtime import FeedForward

    ff = FeedForward.from_result(fitted, delay_cycles=0)
    st = ff.new_state()
    q, qd, qdd = np.full(6, 0.3), np.full(6, 0.2), np.full(6, 1.0)
    k = 20_000
    t = best(lambda: [ff.step(st, q, qd, qdd) for _ in range(k)])
    rows.append((f"dynid feed-forward step ({ff.dynamics.kind}), Python", t / k * 1e6))
    model, theta = fitted.model, fitted.theta
    rng = np.random.default_rng(0)
    Q, QD, QDD = (rng.uniform(-1, 1, (100_000, 6)) for _ in range(3))
    t = best(lambda: model.regressor(Q, QD, QDD) @ theta[:model.n_params])
    rows.append(("dynid compiled RNEA regressor kernel, batch, per sample", t / Q.shape[0] * 1e6))
    try:
        import pinocchio as pin

        pm = pin.buildModelFromUrdf(str(DATA / "ur5.urdf"))
        pd = pm.createData()
        k = 50_000
        t = best(lambda: [pin.rnea(pm, pd, q, qd, qdd) for _ in range(k)])
        rows.append(("Pinocchio rnea, one call from Python", t / k * 1e6))
    except ImportError:
        rows.append(("Pinocchio rnea (not installed)", float("nan")))
    print("\nper-call torque, 6-joint arm [µs]")
    for name, us in rows:
        print(f"  {name:<62} {us:8.3f}")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
