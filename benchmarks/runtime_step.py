"""Time one controller cycle of the runtime: feed-forward + collision monitor on a 6-joint PUMA.

    python benchmarks/runtime_step.py [--cycles N] [--model puma]

The cycle is what a controller task would call every 1 ms: ``FeedForward.step`` (AKB rigid-body model,
payload, friction with armature, TorqueThreshold check, 3-cycle delay line) then ``CollisionMonitor.step``
(TEF filter, velocity gate with hold-off). Prints the median, 90th and 99th percentile [µs], the evaluation
path used, and, for comparison, one batch-regressor call on a single sample (the path the compiled series
replaces). The budget of the issue is a median <= 50 µs per cycle in Python.

Path to generated code: the compiled series is two arrays, Ω (F × n integer frequencies) and K
(R × 2F coefficients), plus three small products; a C routine for the controller is a loop over F
sincos evaluations and one R × 2F matrix-vector product (see dynid/runtime/_compiled.py).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dynid.models import Plant, make_model
from dynid.runtime import CollisionMonitor, FeedForward


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=20000)
    ap.add_argument("--model", default="puma")
    args = ap.parse_args()
    model = make_model(args.model, {"friction": "viscous+coulomb+armature", "payload": {"mass": 1.0}})
    plant = Plant(model)
    n = plant.n_joints
    p = np.asarray(model.example_parameters(), dtype=float)
    theta = np.concatenate([p, np.tile([3.0, 4.0, 0.3], n)])
    ff = FeedForward(plant, theta, delay_cycles=3, torque_threshold=np.full(n, 200.0))
    mon = CollisionMonitor(np.full(n, 2.0), 0.25, 0.1, np.full(n, 6.0), hold_cycles=12)
    fs, ms = ff.new_state(), mon.new_state()
    rng = np.random.default_rng(0)
    q, qd, qdd = model.sample_states(rng, args.cycles)
    tfb = rng.normal(size=(args.cycles, n))
    ns = np.empty(args.cycles)
    clock = time.perf_counter_ns
    for k in range(args.cycles):  # the controller's cycle, one at a time
        t0 = clock()
        ff.step(fs, q[k], qd[k], qdd[k])
        mon.step(ms, fs.taddcmd, tfb[k], qd[k], qd[k])
        ns[k] = clock() - t0
    us = ns / 1e3
    batch = []
    for k in range(200):
        t0 = clock()
        plant.torque(theta, q[k:k + 1], qd[k:k + 1], qdd[k:k + 1])
        batch.append((clock() - t0) / 1e3)
    print(f"model {args.model} ({n} joints), evaluation: {ff.dynamics.kind}"
          + (f", {ff.dynamics.n_terms} Fourier terms" if hasattr(ff.dynamics, "n_terms") else ""))
    print(f"feed-forward + collision monitor step: median {np.median(us):.1f} µs, p90 {np.percentile(us, 90):.1f} µs, "
          f"p99 {np.percentile(us, 99):.1f} µs over {args.cycles} cycles (budget: median <= 50 µs)")
    print(f"for comparison, the batch regressor on one sample: median {np.median(batch):.0f} µs")


if __name__ == "__main__":
    main()
