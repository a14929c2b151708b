"""Throughput of ``dynid batch``: serial against a local Dask cluster with 1 and 2 workers (issue 16).

    python benchmarks/batch.py [--n 200] [--samples 50000] [--workers 1 2] [--data DIR] [--keep]

Generates N recordings of a 6-joint robot (``speed.py``'s: Stäubli TX40 URDF from ../shared/data/real,
multi-sine motion, Pinocchio RNEA torques + viscous/Coulomb friction + 0.5 % noise; a different seed
each), written as CSV into ``--data`` (default: a temporary folder; files already there are reused).
Then times, each in its own process, ``dynid batch DATA --model serial --urdf TX40 --cutoff 10 --friction
viscous+coulomb+offset --no-report`` with ``--scheduler serial`` and ``--scheduler local --workers k``
(the cluster start is included; every run single-threaded, as the batch does by default). The table gives
recordings/s, seconds per recording, the ratio to serial, the throughput per worker, the mean time of one
identification inside the batch (from summary.csv: how much each run slows down when runs share the
machine), the CPU time (user + system, the whole process tree) per recording and the peak resident memory of the largest process of the tree (client or worker) and of the
whole tree, sampled every 0.1 s. The parameters of every mode are compared with the serial ones bit for bit.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from speed import URDF, make_recording  # noqa: E402


def generate(folder: Path, n: int, samples: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    t0 = time.perf_counter()
    for k in range(n):
        p = folder / f"robot{k:04d}.csv"
        if not p.is_file():
            make_recording(p, samples, seed=1000 + k)
        paths.append(p)
    print(f"{n} recordings of {samples} x 6 in {folder} ({time.perf_counter() - t0:.0f} s to generate)", flush=True)
    return paths


class TreeMemory:
    """Peak RSS of a process and its descendants, sampled in a thread: (largest process, whole tree) [MiB]."""

    def __init__(self, pid: int, every_s: float = 0.1) -> None:
        import psutil

        self.proc = psutil.Process(pid)
        self.every_s = every_s
        self.peak_one = self.peak_tree = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        while not self._stop.wait(self.every_s):
            try:
                procs = [self.proc] + self.proc.children(recursive=True)
            except psutil.Error:
                continue
            rss = []
            for p in procs:
                try:
                    rss.append(p.memory_info().rss / 2**20)
                except psutil.Error:
                    pass
            if rss:
                self.peak_one = max(self.peak_one, max(rss))
                self.peak_tree = max(self.peak_tree, sum(rss))

    def stop(self) -> tuple[float, float]:
        self._stop.set()
        self._thread.join()
        return self.peak_one, self.peak_tree


def run_mode(paths: list[Path], out: Path, scheduler: str, workers: int | None) -> dict:
    cmd = [sys.executable, "-m", "dynid.cli.main", "batch", *map(str, paths), "--model", "serial", "--urdf", str(URDF),
           "--cutoff", "10", "--friction", "viscous+coulomb+offset", "--no-report", "--quiet", "--json",
           "--out", str(out), "--scheduler", scheduler]
    if workers is not None:
        cmd += ["--workers", str(workers)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryFile() as fout, tempfile.TemporaryFile() as ferr:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=fout, stderr=ferr, env=env)
        mem = TreeMemory(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)   # CPU time of the process and the workers it reaped
        wall = time.perf_counter() - t0
        peak_one, peak_tree = mem.stop()
        fout.seek(0)
        ferr.seek(0)
        stdout, stderr = fout.read(), ferr.read()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd)} failed ({code}): {stderr.decode()[-800:]}")
    runs = json.loads(stdout)["runs"]
    with open(out / "summary.csv", newline="") as fh:
        task_s = [float(r["elapsed_s"]) for r in csv.DictReader(fh) if r["elapsed_s"]]
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "runs": runs,
            "task_s": sum(task_s) / max(1, len(task_s)), "peak_one": peak_one, "peak_tree": peak_tree,
            "load": (load0 + os.getloadavg()[0]) / 2, "failed": sum(not r["success"] for r in runs),
            "errors": sum(r["status"] == "error" for r in runs)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=200, help="number of recordings")
    ap.add_argument("--samples", type=int, default=50_000, help="samples per recording")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2], help="worker counts of the local cluster")
    ap.add_argument("--data", type=Path, help="folder of the generated recordings (kept; reused when present)")
    ap.add_argument("--keep", action="store_true", help="keep the output folders (7.8 GB for 200 x 50k x 6)")
    args = ap.parse_args()
    if not URDF.is_file():
        sys.exit(f"skipped: {URDF} not found (../shared/data/real beside the repository)")
    tmp = Path(tempfile.mkdtemp(prefix="dynid-batch-bench-"))
    try:
        data = args.data or tmp / "data"
        paths = generate(data, args.n, args.samples)
        modes = [("serial", None)] + [("local", k) for k in args.workers]
        results = {}
        for scheduler, k in modes:
            name = "serial" if k is None else f"Dask local, {k} worker{'s' if k > 1 else ''}"
            out = tmp / f"out-{scheduler}-{k}"
            print(f"running {name} ...", flush=True)
            results[name] = run_mode(paths, out, scheduler, k)
            results[name]["workers"] = k or 1
            if not args.keep:
                shutil.rmtree(out)
        ref = {r["recording"]: r["parameters"] for r in results["serial"]["runs"]}
        identical = {name: all(ref[r["recording"]] == r["parameters"] for r in res["runs"])
                     for name, res in results.items()}
        base = args.n / results["serial"]["wall"]
        print(f"\ndynid batch: {args.n} recordings of {args.samples} x 6 (TX40 URDF, CSV), --no-report, one thread "
              f"per run, {os.cpu_count()} cores")
        head = ("mode", "wall", "rec/s", "s/rec", "ratio", "rec/s per worker", "one run (mean)", "CPU s/rec",
                "peak RSS largest", "peak RSS tree", "load avg", "identical")
        rows = []
        for name, res in results.items():
            rate = args.n / res["wall"]
            rows.append((name, f"{res['wall']:.1f} s", f"{rate:.3f}", f"{res['wall'] / args.n:.2f}",
                         f"{rate / base:.2f}", f"{rate / res['workers']:.3f}", f"{res['task_s']:.2f} s",
                         f"{res['cpu'] / args.n:.2f}",
                         f"{res['peak_one']:.0f} MiB", f"{res['peak_tree']:.0f} MiB", f"{res['load']:.1f}",
                         "yes" if identical[name] else "NO"))
        widths = [max(len(str(x)) for x in col) for col in zip(head, *rows)]
        for r in [head, tuple("-" * w for w in widths), *rows]:
            print("  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())
        failed = {name: (res["failed"], res["errors"]) for name, res in results.items() if res["failed"]}
        if failed:
            print("runs that did not pass the verdict (of which errors): "
                  + ", ".join(f"{k}: {a} ({b})" for k, (a, b) in failed.items()))
        print("load avg: the machine's 1-minute load average during the mode (2 cores: above 2, other work "
              "shares the cores); CPU s/rec: user + system time of the whole process tree per recording")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
