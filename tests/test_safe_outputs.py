"""Issue 26, "nothing silently wrong, nothing lost": outputs never overwrite inputs; an interrupted or failed run
leaves its output folder as it was, a finished one leaves exactly its own outputs beside the folder's other files;
a full disk or a read-only folder ends in one line naming the path.

The Ctrl-C tests run ``dynid identify`` in a process of its own on a recording long enough to take more than a
second and press Ctrl-C (SIGINT to its process group, as a terminal does) — at a moment the run reports (paused
there by a wrapper the driver installs: the diagnoses of the fit, the report's rendering, the final renames) or
after a delay.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dynid import _atomic
from dynid._atomic import Staging, commit_files
from dynid.cli.main import main
from dynid.errors import OutputError
from dynid.io.readers import write_recording_csv
from dynid.recording import Recording

RUN = {"IDNT1.PRG", "IDNT1.REC", "result.json"}
FOREIGN = {"notes.txt": b"my notes\n", "IDNT2.PRG": b"' the controller's program\n", "data/x.csv": b"t,q1\n"}


def write_crank(path: Path, seconds: float, seed: int = 0) -> Path:
    """A rotary3 recording (a crank arm under gravity, viscous + Coulomb friction, 0.5 % noise) at 1 kHz."""
    t = np.arange(0.0, seconds, 1e-3)
    w1, w2 = 2 * np.pi * 0.37, 2 * np.pi * 0.83
    q = 1.2 * np.sin(w1 * t) + 0.6 * np.sin(w2 * t + 0.3)
    qd = 1.2 * w1 * np.cos(w1 * t) + 0.6 * w2 * np.cos(w2 * t + 0.3)
    qdd = -1.2 * w1**2 * np.sin(w1 * t) - 0.6 * w2**2 * np.sin(w2 * t + 0.3)
    tau = 0.3 * qdd - 10.0 * np.sin(q) + 0.5 * qd + 1.0 * np.sign(qd)
    tau += np.random.default_rng(seed).normal(size=t.size) * 0.005 * np.abs(tau).max()
    write_recording_csv(path, Recording(t, q[:, None], tau[:, None]))
    return path


def snapshot(folder: Path) -> dict[str, bytes] | None:
    """Every file under ``folder`` (hidden ones too) by relative path, with its bytes; None: no folder."""
    if not folder.exists():
        return None
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def staging_left(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".*")) if folder.exists() else []


def run_cli(argv, capsys) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def recordings(tmp_path_factory):
    """``long.csv`` (200 s: identify takes over a second), ``short.csv`` (20 s) and an earlier run of short.csv."""
    d = tmp_path_factory.mktemp("recordings")
    write_crank(d / "long.csv", 200.0)
    write_crank(d / "short.csv", 20.0, seed=1)
    assert main(["identify", str(d / "short.csv"), "--model", "rotary3", "--out", str(d / "earlier"), "--quiet"]) == 0
    return d


def prepared(kind: str, recordings: Path, tmp_path: Path) -> Path:
    """The output folder of a test: ``new`` (absent), ``earlier`` (an earlier run with its report), ``foreign``
    (that earlier run and files that are not a run's: notes, another group's PRG, a subfolder)."""
    out = tmp_path / "out"
    if kind in ("earlier", "foreign"):
        shutil.copytree(recordings / "earlier", out)
        assert {p.name for p in out.iterdir()} == RUN | {"report.html"}
    if kind == "foreign":
        for name, data in FOREIGN.items():
            (out / name).parent.mkdir(parents=True, exist_ok=True)
            (out / name).write_bytes(data)
    return out


# ------------------------------------------------------------------------------------------ outputs vs inputs

@pytest.fixture()
def made(recordings, tmp_path, monkeypatch):
    """A working folder holding a result folder ``res`` (the earlier run), ``run.csv`` and a configuration."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(recordings / "earlier", "res")
    shutil.copy(recordings / "short.csv", "run.csv")
    shutil.copy(recordings / "short.csv", "res/run.csv")
    Path("cfg.json").write_text(json.dumps({"friction": "viscous+coulomb"}))
    os.symlink("run.csv", "link.csv")
    os.link("run.csv", "hard.csv")
    return tmp_path


@pytest.mark.parametrize("argv, message", [
    (["predict", "res/result.json", "run.csv", "--out", "run.csv"], "--out run.csv would write over the input REC run.csv"),
    (["predict", "res/result.json", "run.csv", "--out", "link.csv"],
     "--out link.csv would write over the input REC run.csv (the same file)"),                 # a symbolic link
    (["predict", "res/result.json", "hard.csv", "--out", "run.csv"],
     "--out run.csv would write over the input REC hard.csv (the same file)"),                 # a hard link
    (["predict", "res", "run.csv", "--out", "res/result.json"],
     "--out res/result.json would write over the input RESULT.json res (res/result.json)"),   # a result folder
    (["predict", "res/result.json", "run.csv", "--report", "./run.csv"], "--report ./run.csv would write over"),
    (["feedforward", "res/result.json", "run.csv", "--out", "run.csv"], "--out run.csv would write over the input TRAJ"),
    (["identify", "res/IDNT1.REC", "--model", "rotary3", "--out", "res"],
     "--out res (IDNT1.REC in it) would write over the input REC res/IDNT1.REC"),
    (["identify", "res/IDNT1.REC", "--model", "rotary3", "--out", "res", "--group", "2"],  # the earlier run's REC:
     "--out res (IDNT1.REC in it) would write over the input REC res/IDNT1.REC"),          # replaced by this run's
    (["identify", "run.csv", "--model", "rotary3", "--payload-of", "res/result.json", "--out", "res"],
     "--out res (result.json in it) would write over the input --payload-of res/result.json"),
    (["identify", "run.csv", "--model", "rotary3", "--config", "res/report.html", "--out", "res", "--no-report"],
     "--out res (report.html in it) would write over the input --config"),                 # removed as stale
    (["report", "res", "--out", "res/IDNT1.REC"], "--out res/IDNT1.REC would write over the input RESULT_DIR res"),
    (["excite", "--model", "rotary3", "--config", "cfg.json", "--start=-1", "--target=1", "--freqs", "0.5",
      "--mcbasic", "cfg.json"], "--mcbasic cfg.json would write over the input --config cfg.json"),
    (["batch", "run.csv", "--model", "rotary3", "--config", "out/summary.csv", "--out", "out"],
     "--out out (summary.csv in it) would write over the input --config out/summary.csv"),
    (["derive", "--model", "rotary3", "--config", "res/derivation.json", "--out", "res"],
     "--out res (derivation.json in it) would write over the input --config res/derivation.json"),
])
def test_issue_26_no_command_writes_over_its_own_inputs(made, capsys, argv, message):
    Path("out").mkdir()
    Path("out/summary.csv").write_text("an input, for once\n")
    Path("res/report.html").write_text("{}")
    Path("res/derivation.json").write_text("{}")
    before = snapshot(made)
    code, out, err = run_cli(argv, capsys)
    assert code == 2, err
    assert message in err and "Traceback" not in err
    assert err.count("dynid: error:") == 1 and "choose another" in err
    assert snapshot(made) == before                                  # before any work: nothing written


def test_outputs_beside_the_inputs_that_do_not_collide_are_written(made, capsys):
    code, _, err = run_cli(["report", "res"], capsys)                # re-render into the result folder it reads
    assert code == 0, err
    code, _, err = run_cli(["identify", "res/run.csv", "--model", "rotary3", "--out", "res", "--quiet"], capsys)
    assert code == 0, err                                            # a recording in its own output folder
    assert json.loads(Path("res/result.json").read_text())["source"]["recording"] == str(made / "res" / "run.csv")


# ------------------------------------------------------------------------------------------ Staging

def test_staging_open_writes_progressively_and_commits_with_the_others(tmp_path):
    out = tmp_path / "out"
    with Staging() as staging:
        with staging.open(out / "big.rec") as fh:
            for k in range(5):
                fh.write(b"block %d\n" % k)
        staging.write(out / "small.txt", b"small")
        assert not (out / "big.rec").exists()                       # nothing under a final name yet
        assert staging.staged(out / "big.rec").read_bytes().count(b"\n") == 5
        staging.commit()
    assert (out / "big.rec").read_bytes() == b"".join(b"block %d\n" % k for k in range(5))
    assert sorted(p.name for p in out.iterdir()) == ["big.rec", "small.txt"]
    with Staging() as staging:                                      # left open: closed and committed
        fh = staging.open(out / "open.rec")
        fh.write(b"abc")
        staging.commit()
    assert (out / "open.rec").read_bytes() == b"abc"
    with Staging() as staging:                                      # not committed: nothing left
        staging.open(tmp_path / "new" / "x.rec").write(b"x")
    assert not (tmp_path / "new").exists()


def test_staging_open_names_the_output_when_the_disk_is_full(tmp_path, monkeypatch):
    with Staging() as staging:
        fh = staging.open(tmp_path / "IDNT1.REC")
        monkeypatch.setattr(fh, "_fh", _Full())
        with pytest.raises(OutputError) as info:
            fh.write(b"row\n")
    assert info.value.path == str(tmp_path / "IDNT1.REC") and info.value.errno == errno.ENOSPC
    assert str(info.value).startswith(f"{tmp_path / 'IDNT1.REC'}: No space left on device; free space")
    assert list(tmp_path.iterdir()) == []


class _Full:
    closed = False

    def write(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    def close(self):
        self.closed = True


def test_commit_replaces_removes_what_it_was_told_and_keeps_the_rest(tmp_path):
    for name, data in {"a": b"old a", "b": b"old b", "stale": b"old", "mine.txt": b"keep"}.items():
        (tmp_path / name).write_bytes(data)
    os.symlink("mine.txt", tmp_path / "c")                          # a symbolic link replaced, not its target
    commit_files({tmp_path / "a": b"new a", tmp_path / "c": b"new c", tmp_path / "d": b"new d"},
                 remove=[tmp_path / "stale", tmp_path / "b", tmp_path / "absent"])
    assert snapshot(tmp_path) == {"a": b"new a", "c": b"new c", "d": b"new d", "mine.txt": b"keep"}
    assert not (tmp_path / "c").is_symlink()


def test_a_folder_named_like_an_output_is_neither_replaced_nor_removed(tmp_path):
    (tmp_path / "a").write_bytes(b"old a")
    for name in ("result.json", "report.html"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "inside.txt").write_bytes(b"mine")
    before = snapshot(tmp_path)
    with pytest.raises(OutputError, match="result.json: a folder has that name"):
        commit_files({tmp_path / "a": b"new a", tmp_path / "result.json": b"{}"})
    assert snapshot(tmp_path) == before
    commit_files({tmp_path / "a": b"new a"}, remove=[tmp_path / "report.html"])   # (an earlier run's: not a folder)
    assert snapshot(tmp_path) == {**before, "a": b"new a"}


def test_a_commit_failing_half_way_puts_everything_back(tmp_path, monkeypatch):
    for name in ("a", "b", "stale"):
        (tmp_path / name).write_bytes(b"old " + name.encode())
    (tmp_path / "mine.txt").write_bytes(b"keep")
    before = snapshot(tmp_path)
    inodes = {p.name: p.stat().st_ino for p in tmp_path.iterdir()}
    real, calls = os.replace, []

    def third_fails(src, dst):
        calls.append(dst)
        if len(calls) == 3:
            raise OSError(errno.EIO, "Input/output error")
        return real(src, dst)

    monkeypatch.setattr(_atomic.os, "replace", third_fails)
    with pytest.raises(OutputError, match=r"/c: Input/output error"):
        commit_files({tmp_path / "a": b"new a", tmp_path / "b": b"new b", tmp_path / "c": b"new c"},
                     remove=[tmp_path / "stale"])
    monkeypatch.undo()
    assert snapshot(tmp_path) == before                             # a and b back, c not made, stale kept
    assert {p.name: p.stat().st_ino for p in tmp_path.iterdir()} == inodes     # the very same files


def test_ctrl_c_during_the_renames_waits_for_them(tmp_path, monkeypatch):
    """SIGINT arriving between two renames: the commit completes, then KeyboardInterrupt is raised."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    real = _atomic._set_aside

    def interrupted(final, stage, keep):
        if final.name == "a":
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)                                        # (delivered here, were it not held back)
        return real(final, stage, keep=keep)

    monkeypatch.setattr(_atomic, "_set_aside", interrupted)
    mark = _atomic.commits_so_far()
    (tmp_path / "stale").write_bytes(b"old")
    try:
        with pytest.raises(KeyboardInterrupt):
            commit_files({tmp_path / "a": b"a", tmp_path / "b": b"b"}, remove=[tmp_path / "stale"])
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, previous)
    assert snapshot(tmp_path) == {"a": b"a", "b": b"b"}
    assert _atomic.committed_since(mark) == [tmp_path / "a", tmp_path / "b"]


# ------------------------------------------------------------------------------------------ full disk, read-only

def test_issue_26_a_full_disk_names_the_file_and_changes_nothing(recordings, tmp_path, capsys, monkeypatch):
    out = prepared("foreign", recordings, tmp_path)
    before = snapshot(out)

    def full(fd, size):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(_atomic, "PREALLOCATE", 0)                  # every file's blocks allocated first: all fail
    monkeypatch.setattr(_atomic, "_preallocate", full)
    code, _, err = run_cli(["identify", str(recordings / "short.csv"), "--model", "rotary3", "--out", str(out),
                            "--quiet"], capsys)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 2 and "Traceback" not in err
    assert lines[0].startswith(f"dynid: error: {out}/IDNT1.") and lines[0].endswith(": No space left on device")
    assert lines[1] == ("dynid: hint: free space on the disk that holds it (or raise the quota), or write the "
                        "outputs to another folder (--out)")
    assert snapshot(out) == before and staging_left(out) == []


def _mount_tmpfs(folder: Path, options: str) -> bool:
    folder.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True)
    except OSError:
        return False
    return done.returncode == 0


def test_issue_26_a_full_tmpfs_ends_in_one_line_naming_the_file(recordings, tmp_path):
    """A real full disk: a 64 KiB tmpfs (needs root; skipped elsewhere — the test above fakes it)."""
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "size=64k"):
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        (disk / "notes.txt").write_bytes(b"kept\n")
        done = subprocess.run([sys.executable, "-m", "dynid.cli.main", "identify", str(recordings / "long.csv"),
                               "--model", "rotary3", "--out", str(disk), "--quiet"], capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 2 and lines[0].startswith(f"dynid: error: {disk}/") and "No space left" in lines[0]
        assert "(--out)" in lines[1]
        assert snapshot(disk) == {"notes.txt": b"kept\n"} and staging_left(disk) == []
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_issue_26_a_read_only_file_system_names_the_file(tmp_path):
    disk = tmp_path / "ro"
    if not _mount_tmpfs(disk, "ro,size=64k"):
        pytest.skip("cannot mount a read-only tmpfs here (needs root)")
    try:
        with pytest.raises(OutputError) as info:
            commit_files({disk / "result.json": b"{}"})
        assert info.value.errno == errno.EROFS and str(disk) in info.value.message
        assert "make that folder writable" in info.value.hint
    finally:
        subprocess.run(["umount", str(disk)], check=False)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes into read-only folders")
def test_issue_26_a_read_only_folder_names_the_file(tmp_path):
    (tmp_path / "old.txt").write_bytes(b"old")
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(OutputError) as info:
            commit_files({tmp_path / "result.json": b"{}"})
        assert info.value.errno == errno.EACCES and str(tmp_path) in info.value.message
    finally:
        tmp_path.chmod(0o755)
    assert snapshot(tmp_path) == {"old.txt": b"old"}


# ------------------------------------------------------------------------------------------ finished runs

@pytest.mark.parametrize("report", [True, False])
def test_issue_26_a_finished_run_leaves_its_outputs_only_and_every_foreign_file(recordings, tmp_path, capsys, report):
    out = prepared("foreign", recordings, tmp_path)
    (out / "result.json").write_text(json.dumps({**json.loads((out / "result.json").read_text()), "group": 3}))
    (out / "IDNT3.PRG").write_bytes(b"the earlier run's (group 3)")  # named by the earlier result.json: its output
    (out / "report.validation.npz").write_bytes(b"an earlier validation")
    argv = ["identify", str(recordings / "short.csv"), "--model", "rotary3", "--out", str(out), "--quiet"]
    code, _, err = run_cli(argv + ([] if report else ["--no-report"]), capsys)
    assert code == 0, err
    files = snapshot(out)
    assert set(files) == RUN | set(FOREIGN) | ({"report.html"} if report else set())
    assert all(files[name] == data for name, data in FOREIGN.items())


def test_issue_26_a_batch_keeps_the_foreign_files_of_a_run_folder(recordings, tmp_path, capsys):
    """A batch used to replace ``OUTDIR/<stem>/`` as a whole: a file the user kept there was deleted."""
    runs = tmp_path / "runs"
    runs.mkdir()
    shutil.copy(recordings / "short.csv", runs / "a.csv")
    out = tmp_path / "out"
    shutil.copytree(recordings / "earlier", out / "a")
    (out / "a" / "notes.txt").write_bytes(b"my notes\n")
    code, _, err = run_cli(["batch", str(runs), "--model", "rotary3", "--out", str(out), "--no-report", "--quiet"],
                           capsys)
    assert code == 0, err
    assert snapshot(out / "a").keys() == RUN | {"notes.txt"}          # the earlier report: removed
    assert (out / "a" / "notes.txt").read_bytes() == b"my notes\n"
    assert json.loads((out / "a" / "result.json").read_text())["source"]["recording"] == str(runs / "a.csv")
    assert staging_left(out) == []


# ------------------------------------------------------------------------------------------ Ctrl-C

DRIVER = r"""
import os, signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)    # (even where the test runner ignores SIGINT)
where = os.environ.get("PAUSE_AT")
if where:                                                   # pause at the first call of module.function
    import importlib
    module, name = where.rsplit(".", 1)
    mod = importlib.import_module(module)
    real, seconds = getattr(mod, name), float(os.environ["PAUSE_S"])
    def paused(*args, **kwargs):
        if not paused.done:
            paused.done = True
            sys.stderr.write("PAUSED\n"); sys.stderr.flush()
            time.sleep(seconds)
        return real(*args, **kwargs)
    paused.done = False
    setattr(mod, name, paused)
from dynid.cli.main import main
sys.stderr.write("STARTED\n"); sys.stderr.flush()
code = main()
signal.signal(signal.SIGINT, signal.SIG_IGN)                # (a Ctrl-C after the command: not its business)
sys.exit(code)
"""

STAGES = {  # where to pause: (function, seconds paused; a Ctrl-C meanwhile ends a sleep, unless it is held back)
    "fit": ("dynid.identification.fit.assess", 30.0),                # the diagnoses; the REC written beside them
    "report": ("dynid.report._report.render_html", 30.0),             # the report, rendered from the staged files
    "commit": ("dynid._atomic._set_aside", 1.0),                      # the final renames: SIGINT held back
}


def interrupt(argv: list[str], marker: str, delay: float = 0.0, pause: tuple | None = None) -> tuple[int, str]:
    """Run ``dynid argv`` in its own process group; once ``marker`` is on its stderr (and ``delay`` later), press
    Ctrl-C."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "PYTHONUNBUFFERED": "1"}
    if pause is not None:
        env.update(PAUSE_AT=pause[0], PAUSE_S=str(pause[1]))
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=env, start_new_session=True)
    seen = []
    while True:
        line = proc.stderr.readline()
        seen.append(line)
        if not line or marker in line:
            break
    time.sleep(delay)
    try:
        os.killpg(proc.pid, signal.SIGINT)
    except ProcessLookupError:
        pass
    _, err = proc.communicate(timeout=120)
    return proc.returncode, "".join(seen) + err


def check_new_run(out: Path, before: dict | None, recordings: Path, report: bool) -> None:
    """``out`` holds the new run's outputs (of long.csv; no earlier report beside them) and every foreign file."""
    files = snapshot(out)
    foreign = {k: v for k, v in (before or {}).items() if k in FOREIGN}
    assert set(files) == RUN | ({"report.html"} if report else set()) | set(foreign)
    assert all(files[k] == v for k, v in foreign.items())
    assert json.loads(files["result.json"])["source"]["recording"] == str(recordings / "long.csv")


@pytest.mark.parametrize("stage", list(STAGES))
@pytest.mark.parametrize("kind", ["new", "earlier", "foreign"])
def test_issue_26_ctrl_c_at_each_stage_leaves_the_folder_as_it_was(recordings, tmp_path, kind, stage):
    out = prepared(kind, recordings, tmp_path)
    before = snapshot(out)
    report = stage != "commit"                                       # (the commit: an earlier report removed)
    argv = ["identify", str(recordings / "long.csv"), "--model", "rotary3", "--out", str(out), "--quiet"]
    code, err = interrupt(argv + ([] if report else ["--no-report"]), "PAUSED", pause=STAGES[stage])
    assert code == 130, err
    assert "Traceback" not in err
    assert staging_left(out) == []                                   # no temporary, no staging folder
    if stage == "commit":                                            # the renames completed first, and it says so
        assert "interrupted after the outputs were written (3 file(s) in" in err
        check_new_run(out, before, recordings, report=False)
    else:
        assert "dynid: interrupted; no output files were written" in err
        assert snapshot(out) == before                               # byte for byte; absent when it was new


@pytest.mark.parametrize("delay", [0.3, 0.7, 1.2])
def test_issue_26_ctrl_c_at_any_moment_leaves_the_old_folder_or_the_whole_new_run(recordings, tmp_path, delay):
    out = prepared("foreign", recordings, tmp_path)
    before = snapshot(out)
    argv = ["identify", str(recordings / "long.csv"), "--model", "rotary3", "--out", str(out), "--quiet"]
    code, err = interrupt(argv, "STARTED", delay=delay)
    assert code in (0, 130) and "Traceback" not in err, err
    assert staging_left(out) == []
    if code == 130 and "no output files were written" in err:
        assert snapshot(out) == before
    else:                                                            # finished (or interrupted after the renames)
        check_new_run(out, before, recordings, report=True)
