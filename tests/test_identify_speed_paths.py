"""The fast paths of a default identification give what the direct computations give (issue 15, speed).

- the blocked QR (TSQR) of the tall per-joint rows: the R factor of one LAPACK QR (``RᵀR = AᵀA``); each joint's
  factor from the columns its rows touch only: still a factor of all of them;
- the physically consistent continuation from the linear fit's weighted R factor: the estimate of a fresh
  QR of all its columns (the former path, still used without the factor);
- the selection's conditionings on a second thread: the same walk, scores and choice as on one thread;
- the REC rows formatted on a second thread during the diagnoses: the same file, byte for byte; the REC written
  on a second thread while the PRG and result.json are rendered: a failure leaves the earlier files as they were;
- the structural base analysed once per matrix (the selection's and the final fit's);
- BLAS on one thread inside :func:`identify`; the quadratic forms of the uncertainty.

Small simulated recordings (the PUMA arm of tests/test_consistent.py); no timing here (benchmarks/speed.py).
"""

from __future__ import annotations

import dataclasses
import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import dynid.identification.fit as fit_module
from dynid import Identifier
from dynid.identification import IdentifyOptions, identify
from dynid.identification.diagnostics import _quadratic_forms
from dynid.identification.select import select_auto
from dynid.identification.solve import QR_BLOCK, tall_r_factor
from dynid.threads import limit_threads

from .test_consistent import arm, perturbed_truth, simulate


@pytest.fixture(scope="module")
def run():
    """8 s of the PUMA arm at 500 Hz (4000 samples, 6 joints), 1 % torque noise, links 20 % off the prior."""
    plant = arm()
    theta = perturbed_truth(plant, seed=3)
    rec, _ = simulate(plant, theta, seed=5, base_hz=0.2, harmonics=[1, 2, 3], duration_s=8.0, share=0.3, noise=0.01)
    return plant, rec


@pytest.mark.parametrize("n", [40, QR_BLOCK + 3, 3 * QR_BLOCK, 5 * QR_BLOCK + 777])
@pytest.mark.parametrize("dependent", [False, True])
def test_blocked_qr_gives_the_r_factor_of_one_qr(rng, n, dependent):
    A = rng.normal(size=(n, 31)) * np.logspace(-3, 3, 31)          # badly scaled columns
    if dependent:
        A[:, 9] = A[:, 2] - 2 * A[:, 5]                               # a column earlier ones give
    R = tall_r_factor(A)
    R0 = np.linalg.qr(A, mode="r")                                    # one LAPACK QR
    assert R.shape == R0.shape == (31, 31)
    assert np.allclose(np.tril(R, -1), 0.0)
    np.testing.assert_allclose(R.T @ R, A.T @ A, rtol=0, atol=1e-12 * np.abs(A.T @ A).max())
    if dependent:   # the factor is unique only up to the dependent column: its diagonal is round-off
        assert abs(R[9, 9]) < 1e-12 * np.abs(R).max()
        np.testing.assert_allclose(np.abs(R[:9]), np.abs(R0[:9]), rtol=0, atol=1e-10 * np.abs(R0).max())
    else:           # unique up to the signs of its rows
        np.testing.assert_allclose(np.abs(R), np.abs(R0), rtol=0, atol=1e-10 * np.abs(R0).max())


@pytest.mark.parametrize("joint_major", [False, True])
def test_per_joint_factors_from_the_columns_a_joint_touches_are_factors_of_all(rng, joint_major):
    from dynid.identification.solve import _joint_factors, joint_rows

    n, k = 9000, 12
    W = rng.normal(size=(n, k)) * np.logspace(-2, 2, k)
    joint = rng.integers(0, 4, n)
    for j in range(3):
        W[joint == j, : 2 * j] = 0.0            # joint j's rows: no torque from the links before it
    W[:, 7] = 0.0                               # a column no row touches
    joint[joint == 3] = 0
    joint[:4] = 3                               # a joint with fewer rows than columns
    if joint_major:
        order = np.argsort(joint, kind="stable")
        W, joint = W[order], joint[order]
    y = rng.normal(size=n)
    columns = np.array([0, 1, 2, 3, 5, 6, 7, 8, 9, 11])  # two columns left out
    scale = np.linalg.norm(W[:, columns], axis=0)
    scale = np.where(scale > 0, scale, 1.0)
    rows_of = joint_rows(joint, 5)
    assert all(isinstance(r, slice) for r in rows_of) == joint_major          # views where joint-major
    F = _joint_factors(W, y, rows_of, columns, scale)
    kk = columns.size
    assert F.shape == (5, kk + 1, kk + 1) and not F[4].any()                  # joint 5 has no rows
    for j in range(4):
        A = np.column_stack([W[joint == j][:, columns] / scale, y[joint == j]])
        assert np.allclose(np.tril(F[j], -1), 0.0)
        np.testing.assert_allclose(F[j].T @ F[j], A.T @ A, rtol=0, atol=1e-12 * np.abs(A.T @ A).max())


def test_least_squares_on_joint_major_rows_and_a_column_subset_equals_the_plain_problem(rng):
    from dynid.identification.solve import weighted_lstsq

    n, k = 6000, 9
    W = rng.normal(size=(n, k)) * np.logspace(-1, 1, k)
    joint = rng.integers(0, 3, n)
    y = W @ rng.normal(size=k) + rng.normal(size=n) * np.array([0.1, 1.0, 3.0])[joint]
    columns = np.array([0, 2, 3, 4, 6, 7, 8])
    plain = weighted_lstsq(np.ascontiguousarray(W[:, columns]), y, joint, 3)
    order = np.argsort(joint, kind="stable")
    major = weighted_lstsq(W[order], y[order], joint[order], 3, columns=columns)
    for f in ("x", "std", "scale", "weights", "r_factor"):
        np.testing.assert_allclose(getattr(major, f), getattr(plain, f), rtol=1e-10, err_msg=f)
    assert major.rank == plain.rank and np.isclose(major.sigma2, plain.sigma2, rtol=1e-12)
    assert np.isclose(major.correlation_time, plain.correlation_time, rtol=1e-9)


def test_consistent_continuation_from_the_linear_factor_matches_a_fresh_qr(run, monkeypatch):
    plant, rec = run
    options = IdentifyOptions(estimator="consistent", select_cutoff=False)
    plant = type(plant)(plant.model.with_config(friction="viscous+coulomb"))
    fast = identify(rec, plant, options)
    linear = fit_module.lstsq_rows
    monkeypatch.setattr(fit_module, "lstsq_rows",
                        lambda *a, **k: dataclasses.replace(linear(*a, **k), weighted_factor=None))
    direct = identify(rec, plant, options)
    assert fast.consistent is not None and direct.consistent is not None
    assert fast.consistent.iterations == direct.consistent.iterations
    # what the data determine (the base parameters) agrees to round-off amplified by the fit's conditioning; every
    # parameter agrees far inside its uncertainty
    np.testing.assert_allclose(fast.base_values, direct.base_values, rtol=1e-7,
                               atol=1e-9 * np.abs(direct.base_values).max())
    std = np.where(np.isfinite(direct.std), direct.std, np.inf)
    assert np.all(np.abs(fast.theta - direct.theta) <= 1e-5 * std + 1e-9 * np.abs(direct.theta).max())
    np.testing.assert_allclose(fast.lsq.std, direct.lsq.std, rtol=1e-5)
    np.testing.assert_allclose(fast.tcmd, direct.tcmd, rtol=0, atol=1e-8 * np.abs(direct.tcmd).max())
    assert fast.success == direct.success
    assert [d.code for d in fast.diagnostics] == [d.code for d in direct.diagnostics]


def test_selection_on_two_threads_walks_and_scores_as_on_one(run):
    plant, rec = run
    with limit_threads(1):                     # no conditioning ahead
        one = select_auto(rec, plant, IdentifyOptions())
    two = select_auto(rec, plant, IdentifyOptions())
    assert list(one.scores) == list(two.scores)                        # the same cutoffs, in the same order
    np.testing.assert_allclose(list(two.scores.values()), list(one.scores.values()), rtol=1e-12)
    assert (one.cutoff_hz, one.friction, one.ridge) == (two.cutoff_hz, two.friction, two.ridge)
    assert len({c for c, _, _ in two.scores}) <= 3                    # the walk's at most three conditionings


def test_a_rec_made_during_the_fit_gives_the_same_files_and_nothing_is_held_without_a_folder(run, tmp_path):
    plant, rec = run
    kw = dict(friction="viscous+coulomb", cutoff=None, regularize=0.0)
    est = Identifier(plant.model, **kw).fit(rec, out_dir=tmp_path / "a")
    assert est._rec.wait() is not None                               # written on a second thread ...
    a = est.write(tmp_path / "a", report=False)
    assert est._rec.wait() is None                                   # ... used once, then dropped
    b = est.write(tmp_path / "b", report=False)                      # made in write_run
    plain = Identifier(plant.model, **kw).fit(rec)
    assert plain._rec.wait() is None                                 # no folder given: no tens of MB held for write
    one = Identifier(plant.model, threads=1, **kw).fit(rec, out_dir=tmp_path / "c")
    assert one._rec.wait() is None                                   # one thread: nothing beside the fit
    c = one.write(tmp_path / "c", report=False)
    rec_a, rec_b, rec_c = (d["IDNT1.REC"].read_bytes() for d in (a, b, c))
    assert rec_a == rec_b == rec_c
    assert rec_a.startswith(b"# {") and rec_a.count(b"\n") == est.result_.cond.data_length + 2
    est._rec.finish(est.result_.cond, est.result_.tcmd)
    state = est.__getstate__()                                       # the thread's result is not pickled
    assert "_rec" not in state and state["model_"] is est.model_
    assert pickle.loads(pickle.dumps(Identifier("rotary1", threads=2))).threads == 2


def test_identify_calls_on_evaluated_once_with_the_final_signals_and_one_blas_thread(run):
    from threadpoolctl import threadpool_info

    plant, rec = run
    seen = []

    def hook(cond, tcmd):
        blas = [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"]
        seen.append((cond, tcmd, blas))

    res = identify(rec, plant, IdentifyOptions(), on_evaluated=hook)
    assert len(seen) == 1
    cond, tcmd, blas = seen[0]
    assert cond is res.cond and tcmd is res.tcmd
    assert blas and all(n == 1 for n in blas)


def test_quadratic_forms_match_a_loop(rng):
    Y = rng.normal(size=(7, 3, 5))
    B = rng.normal(size=(5, 5))
    C = B @ B.T
    expected = np.array([[Y[k, n] @ C @ Y[k, n] for n in range(3)] for k in range(7)])
    np.testing.assert_allclose(_quadratic_forms(Y, C), expected, rtol=1e-13)


def test_structural_base_is_analysed_once_per_matrix(run):
    from dynid.identification.base_params import find_base_parameters, preference_order, structural_base

    plant, _ = run
    a = type(plant)(plant.model.with_config(friction="viscous+coulomb"))
    b = type(plant)(plant.model.with_config(friction="viscous+coulomb"))          # another plant, the same matrix
    first, again = structural_base(a), structural_base(b)
    assert again is first
    assert not first.K.flags.writeable and not first.independent.flags.writeable   # shared: nobody changes it
    other = structural_base(type(plant)(plant.model.with_config(friction="viscous+coulomb+offset")))
    assert other is not first and other.independent.size > first.independent.size
    assert structural_base(a, seed=1) is not first
    rng = np.random.default_rng(0)                                                 # what structural_base analyses
    W = a.regressor(*a.model.sample_states(rng, 400)).reshape(-1, a.n_params)
    direct = find_base_parameters(W, a.param_names, preference_order(a.param_roles, a.param_names,
                                                                     a.model.prefer_dependent),
                                  a.model.structural_rtol)
    np.testing.assert_array_equal(direct.independent, first.independent)
    np.testing.assert_array_equal(direct.K, first.K)


def test_an_analysis_under_way_is_waited_for_not_repeated(run, monkeypatch):
    """analyse_ahead starts the selection's structural analysis while the file is read; a second caller meanwhile
    waits for it (one analysis, one shared answer), and an analysis that fails fails both callers."""
    import threading

    import dynid.identification.base_params as bp
    from dynid.identification.select import analyse_ahead

    plant, _ = run
    fresh = type(plant)(plant.model.with_config(friction="viscous+coulomb+offset+armature"))
    calls, gate = [], threading.Event()
    real = bp.find_base_parameters

    def slow(*args, **kwargs):
        calls.append(threading.current_thread().name)
        gate.wait(5.0)
        return real(*args, **kwargs)

    monkeypatch.setattr(bp, "find_base_parameters", slow)
    monkeypatch.setattr(bp, "_RECENT", {})
    with ThreadPoolExecutor(2) as ex:
        a, b = ex.submit(bp.structural_base, fresh), ex.submit(bp.structural_base, fresh)
        gate.set()
        assert a.result() is b.result() and len(calls) == 1

    def broken(*args, **kwargs):
        raise ValueError("no analysis")

    monkeypatch.setattr(bp, "find_base_parameters", broken)
    with pytest.raises(ValueError, match="no analysis"):
        bp.structural_base(type(plant)(plant.model.with_config(friction="viscous")))
    assert len(bp._RECENT) == 1                                  # the failed one is not remembered
    calls.clear()
    monkeypatch.setattr(bp, "find_base_parameters", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    auto = type(plant)(plant.model.with_config(friction="auto"))
    analyse_ahead(auto, IdentifyOptions())                      # on a thread: what the selection will ask for
    select_auto(run[1], auto, IdentifyOptions(), cutoff=False, ridge=False)
    assert len(calls) == 1                                      # the selection found it (done or under way)


def test_a_failed_write_leaves_the_earlier_outputs_and_no_temporaries(run, tmp_path, monkeypatch):
    from dynid.fitted import FittedModel

    plant, rec = run
    est = Identifier(plant.model, friction="viscous+coulomb", cutoff=None, regularize=0.0).fit(rec)
    written = est.write(tmp_path, report=False)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(before) == {"IDNT1.PRG", "IDNT1.REC", "result.json"} == set(written)

    def broken(self):
        raise RuntimeError("disk full")

    monkeypatch.setattr(FittedModel, "result_json", broken)
    with pytest.raises(RuntimeError, match="disk full"):          # the REC was being written on the other thread
        est.write(tmp_path, report=False)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before      # nothing new, nothing half


def _temporaries(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("mapped", [True, False])
def test_a_rec_staged_during_the_fit_is_renamed_in_by_write_and_is_the_same_file(run, tmp_path, monkeypatch, mapped):
    from dynid._atomic import Staging
    from dynid.io import outputs

    plant, rec = run
    kw = dict(friction="viscous+coulomb", cutoff=None, regularize=0.0)
    out = tmp_path / "out"
    out.mkdir()
    (out / "IDNT1.REC").write_bytes(b"the previous run's REC\n")
    calls = []
    real_begin, real_mapped = outputs.begin_staged_rec, Staging.mapped
    monkeypatch.setattr(outputs, "begin_staged_rec", lambda *a: (calls.append("begin"), real_begin(*a))[1])
    if not mapped:   # a file system that cannot preallocate: formatted in memory, then written
        monkeypatch.setattr(Staging, "mapped", lambda self, path, size: (calls.append("unmapped"),
                                                                          real_mapped(self, path, size), None)[2])
    est = Identifier(plant.model, threads=2, **kw).fit(rec, out_dir=out)
    est._rec.wait()                                                  # (the REC is written on the second thread)
    assert len(_temporaries(out)) == 1                               # written under a temporary name ...
    assert (out / "IDNT1.REC").read_bytes() == b"the previous run's REC\n"   # ... the earlier output untouched
    assert calls == (["begin"] if mapped else ["begin", "unmapped"])
    staged = est.write(out, report=False)
    assert _temporaries(out) == [] and sorted(p.name for p in out.iterdir()) == sorted(staged)
    plain = Identifier(plant.model, threads=1, **kw).fit(rec).write(tmp_path / "plain", report=False)
    for name in ("IDNT1.REC", "IDNT1.PRG"):
        a, b = staged[name].read_bytes(), plain[name].read_bytes()
        if name == "IDNT1.PRG":                                      # (the PRG's date line may differ by a second)
            a, b = (b"\n".join(x for x in v.splitlines() if b"date and time" not in x) for v in (a, b))
        assert a == b


def test_a_staged_rec_not_taken_leaves_no_temporary(run, tmp_path):
    plant, rec = run
    kw = dict(friction="viscous+coulomb", cutoff=None, regularize=0.0, threads=2)
    there, elsewhere = tmp_path / "there", tmp_path / "elsewhere"
    est = Identifier(plant.model, **kw).fit(rec, out_dir=there)     # the folder is created for the temporary
    written = est.write(elsewhere, report=False)                     # written elsewhere after all
    assert not there.exists()                                        # its temporary and the folder made for it gone
    assert _temporaries(elsewhere) == [] and written["IDNT1.REC"].read_bytes().count(b"\n") == est.result_.cond.data_length + 2
    there.mkdir()
    est.fit(rec, out_dir=there)
    est._rec.wait()
    assert len(_temporaries(there)) == 1
    est.fit(rec)                                                     # fitted again without writing: removed
    assert _temporaries(there) == []
    est.fit(rec, out_dir=there)
    est._rec.wait()
    del est                                                          # never written: removed when collected
    import gc

    gc.collect()
    assert list(there.iterdir()) == []


def test_a_fit_failing_after_its_rec_was_begun_leaves_no_temporary(run, tmp_path, monkeypatch):
    plant, rec = run
    est = Identifier(plant.model, friction="viscous+coulomb", cutoff=None, regularize=0.0, threads=2)
    begun = []

    def solve_fails(*a, **k):                   # the REC's file was begun when the regression was built
        begun.append(est._rec._begun[1].result())
        raise RuntimeError("solver broke")

    monkeypatch.setattr(fit_module, "solve", solve_fails)
    with pytest.raises(RuntimeError, match="solver broke"):
        est.fit(rec, out_dir=tmp_path)
    assert type(begun[0]).__name__ == "BegunRec"
    assert _temporaries(tmp_path) == []         # the failed fit removed it (issue 26: not left for the next fit)


def test_a_staging_removes_its_temporaries_and_the_folders_it_made(tmp_path):
    import subprocess
    import sys

    from dynid._atomic import Staging

    with Staging() as staging:
        staging.write(tmp_path / "a" / "b" / "x.txt", b"x")
        (tmp_path / "keep").mkdir()
        staging.write(tmp_path / "keep" / "y.txt", b"y")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep"]    # a/b made for it: gone; keep was there
    with Staging() as staging:
        staging.write(tmp_path / "c" / "x.txt", b"x")
        staging.commit()
    assert (tmp_path / "c" / "x.txt").read_bytes() == b"x"
    # a process that exits without committing or discarding leaves nothing either
    code = ("import sys; from pathlib import Path; from dynid._atomic import Staging; "
            "s = Staging(); s.write(Path(sys.argv[1]) / 'd' / 'x.txt', b'x')")
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "keep"]


def test_large_files_are_preallocated_written_exactly_and_a_full_disk_fails_cleanly(tmp_path, monkeypatch):
    import errno
    import os

    from dynid import _atomic

    data = np.random.default_rng(0).bytes(_atomic.PREALLOCATE + 12345)
    calls = []
    real = os.posix_fallocate
    monkeypatch.setattr(os, "posix_fallocate", lambda fd, off, size: (calls.append(size), real(fd, off, size))[1])
    _atomic.commit_files({tmp_path / "big.bin": memoryview(data), tmp_path / "small.bin": b"abc"})
    assert (tmp_path / "big.bin").read_bytes() == data and (tmp_path / "small.bin").read_bytes() == b"abc"
    assert calls == [len(data)]                                    # the large one only, to its exact size

    def unsupported(fd, off, size):
        raise OSError(errno.EOPNOTSUPP, "not supported")

    monkeypatch.setattr(os, "posix_fallocate", unsupported)        # a file system that cannot: written anyway
    _atomic.commit_files({tmp_path / "big2.bin": data})
    assert (tmp_path / "big2.bin").read_bytes() == data

    def full(fd, off, size):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "posix_fallocate", full)
    with pytest.raises(OSError, match="No space left"):
        _atomic.commit_files({tmp_path / "big.bin": b"new" + data})
    assert (tmp_path / "big.bin").read_bytes() == data              # the earlier file kept, no temporary left
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.bin", "big2.bin", "small.bin"]


def test_an_interrupted_fit_leaves_no_temporary_and_no_folder_it_made(run, tmp_path, monkeypatch):
    import gc

    plant, rec = run
    ests = [Identifier(plant.model, friction="viscous+coulomb", cutoff=None, regularize=0.0, threads=2)]
    real_assess = fit_module.assess

    def interrupted(ident):                     # Ctrl-C while the diagnoses run, the REC written beside them
        ests[0]._rec.wait()
        assert len(_temporaries(tmp_path / "new" / "out")) == 1
        raise KeyboardInterrupt

    monkeypatch.setattr(fit_module, "assess", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ests[0].fit(rec, out_dir=tmp_path / "new" / "out")
    monkeypatch.setattr(fit_module, "assess", real_assess)
    ests.clear()                                # the estimator collected
    gc.collect()
    assert list(tmp_path.iterdir()) == []       # the temporary and the two folders made for it are gone
