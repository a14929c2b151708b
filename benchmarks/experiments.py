"""The source's three experiments (spec/units-and-runtime.md §6), reproduced qualitatively in simulation.

    python benchmarks/experiments.py [--seed K] [--model-error 0.2]

For each robot: the source's identification program is simulated in closed loop, identified with dynid,
and the identified model drives the additive torque feed-forward. Printed beside the source's numbers:
settling time without/with the model (SCARA 600 mm at 900 mm/s, PESETTLE 0.001; Delta 550 mm at 3000 mm/s,
PESETTLE 0.05; softMC semantics, TIMESETTLE 10 ms) and the PUMA's axis-2 peak-to-peak error while axis 3
oscillates. With ``--model-error E`` each experiment is repeated with the identified model parameters
scaled by seeded random factors in [1 − E, 1 + E] (a worse model: the gain shrinks towards the source's).
"""

from __future__ import annotations

import argparse
import time

from dynid.sim.scenarios import run_scenario, source_results


def _row(label, without, with_, src_without, src_with, unit, scale):
    r = with_ / without if without else float("nan")
    sr = src_with / src_without
    return (f"{label:<34} {without * scale:>9.4g} {with_ * scale:>9.4g} {r:>7.3f}   "
            f"{src_without:>9.4g} {src_with:>9.4g} {sr:>7.3f}  {unit}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--model-error", type=float, default=0.2, help="also run with a degraded model (0: skip)")
    args = ap.parse_args()
    src = source_results()
    errors = [0.0] + ([args.model_error] if args.model_error > 0 else [])
    print(f"{'experiment':<34} {'without':>9} {'with':>9} {'ratio':>7}   {'src w/o':>9} {'src with':>9} "
          f"{'src rat':>7}  unit")
    for err in errors:
        tag = "" if err == 0 else f" (model ±{100 * err:.0f} %)"
        for name in ("scara-move", "delta-move"):
            t0 = time.perf_counter()
            v = run_scenario(name, seed=args.seed, model_error=err).values
            s = src[name]
            print(_row(f"{name} settling{tag}", v["settling_time_without_model_s"], v["settling_time_with_model_s"],
                       s["settling_time_without_model_s"] * 1e3, s["settling_time_with_model_s"] * 1e3, "ms", 1e3)
                  + f"   [{time.perf_counter() - t0:.0f} s]", flush=True)
        t0 = time.perf_counter()
        v = run_scenario("puma-hold", seed=args.seed, model_error=err).values
        s = src["puma-hold"]
        print(_row(f"puma-hold axis-2 p-p{tag}", v["p2p_error_without_model_deg"], v["p2p_error_with_model_deg"],
                   s["p2p_error_without_model"], s["p2p_error_with_model"], "deg (source: as printed)", 1.0)
              + f"   [{time.perf_counter() - t0:.0f} s]", flush=True)


if __name__ == "__main__":
    main()
