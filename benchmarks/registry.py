"""Write and read rate of the identification registry (issue 16): SQLite file and PostgreSQL.

    python benchmarks/registry.py [--runs 300] [--workers 4] [--no-postgresql]

One simulated SCARA identification (scara4, 16 parameters; its result.json, ~10 kB, is stored with each
run) is recorded ``--runs`` times: by one process, then by ``--workers`` processes at once (each
records runs/workers; the pool is started and warm before the clock starts). Then the history of one
robot and its drift are read back. SQLite: a file in a temporary folder (WAL, synchronous=FULL: every
commit reaches the disk). PostgreSQL: a server started for the benchmark from the machine's binaries
with its default durability (fsync on), over TCP on 127.0.0.1; skipped with the reason when none can
be started. The table shows runs/s (and ms per run) and the read times.
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))


def sample_result(folder: Path) -> Path:
    """The result.json of one simulated SCARA identification."""
    import dynid
    import numpy as np
    from dynid.models import Plant, make_model
    from dynid.sim import SimOptions, SineMotion, simulate
    from dynid.sim.scenarios import _SCARA as S

    plant = Plant(make_model("scara4", dict(S.config, friction="viscous+coulomb")))
    theta = np.concatenate([S.params, np.column_stack([S.friction["viscous"], S.friction["coulomb"]]).ravel()])
    rec = simulate(plant, theta, SineMotion(S.ident_start, S.ident_target, S.ident_freqs_hz, record_s=8),
                   SimOptions(noise=0.005), seed=0)
    return dynid.Identifier("scara4", config=dict(S.config)).fit(rec).model_.save(folder)


def _record(url: str, result: str, robot: str, n: int) -> float:
    """Record ``n`` runs; returns the seconds it took (the registry opened before the clock starts)."""
    import dynid
    from dynid.fleet.registry import Registry

    fitted = dynid.load(result)
    with Registry(url) as reg:
        t0 = time.perf_counter()
        for _ in range(n):
            reg.record(fitted, robot=robot, recording="bench.csv")
        return time.perf_counter() - t0


def _warm(_: int) -> int:
    import dynid.fleet.registry  # noqa: F401
    import dynid.models  # noqa: F401
    return 0


def measure(name: str, url: str, result: Path, runs: int, workers: int, pool) -> list[tuple[str, ...]]:
    from dynid.fleet.registry import Registry

    Registry(url).close()                                  # schema created outside the clock
    single = _record(url, str(result), "single", runs)
    per = runs // workers
    t0 = time.perf_counter()
    list(pool.map(_record, [url] * workers, [str(result)] * workers, [f"w{k}" for k in range(workers)],
                  [per] * workers))
    parallel = time.perf_counter() - t0
    with Registry(url) as reg:
        t0 = time.perf_counter()
        hist = reg.history("single")
        t_hist = time.perf_counter() - t0
        t0 = time.perf_counter()
        reg.drift("single")
        t_drift = time.perf_counter() - t0
        total = len(reg.history())
    expected = runs + per * workers
    lost = "none" if total == expected else f"{expected - total} LOST"
    return [(name, "1 process", f"{runs / single:.0f}", f"{1000 * single / runs:.2f}", "", "", lost),
            (name, f"{workers} processes", f"{per * workers / parallel:.0f}", f"{1000 * parallel / (per * workers):.2f}",
             "", "", ""),
            (name, f"read {len(hist)} runs", "", "", f"{1000 * t_hist:.0f}", f"{1000 * t_drift:.0f}", "")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--no-postgresql", action="store_true")
    args = ap.parse_args()
    from dynid.cli._common import table

    rows = []
    notes = []
    with tempfile.TemporaryDirectory() as tmp, \
            ProcessPoolExecutor(args.workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        tmp = Path(tmp)
        result = sample_result(tmp)
        notes.append(f"result.json stored per run: {result.stat().st_size / 1000:.1f} kB")
        list(pool.map(_warm, range(args.workers)))
        rows += measure("SQLite file", f"sqlite:///{tmp / 'fleet.db'}", result, args.runs, args.workers, pool)
        if not args.no_postgresql:
            from tests.fleet._postgres import Unavailable, start_server

            try:
                server = start_server(durable=True)
            except Unavailable as err:
                notes.append(f"PostgreSQL skipped: {err}")
            else:
                try:
                    rows += measure("PostgreSQL", server.create_database(), result, args.runs, args.workers, pool)
                finally:
                    server.stop()
    print(table(rows, ["registry", "writers", "runs/s", "ms/run", "history [ms]", "drift [ms]", "lost"]))
    for n in notes:
        print(n)


if __name__ == "__main__":
    main()
