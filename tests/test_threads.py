"""Thread settings are scoped (a context), never process-global: two workers in one process keep their own."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from dynid.models import _rnea, make_model
from dynid.threads import limit_threads, num_threads


def test_a_limit_holds_inside_its_block_only(monkeypatch):
    monkeypatch.delenv("DYNID_NUM_THREADS", raising=False)
    outside = num_threads()
    with limit_threads(1):
        assert num_threads() == 1
        with limit_threads(3):
            assert num_threads() == 3
        assert num_threads() == 1
    assert num_threads() == outside
    with pytest.raises(ValueError):
        with limit_threads(0):
            pass


def test_a_limit_in_one_thread_does_not_reach_another():
    seen = {}
    inside = threading.Event()
    release = threading.Event()

    def limited():
        with limit_threads(1):
            seen["limited"] = num_threads()
            inside.set()
            release.wait(5)

    t = threading.Thread(target=limited)
    t.start()
    inside.wait(5)
    with limit_threads(2):
        seen["other"] = num_threads()
    release.set()
    t.join()
    assert seen == {"limited": 1, "other": 2}


def test_the_kernel_follows_the_scoped_limit_with_identical_results(rng):
    if not _rnea.kernel_available():
        pytest.skip("the compiled kernel is not built here (no C compiler)")
    model = make_model("serial", {"dh": [{"a": 0.3, "alpha": 1.2, "d": 0.1}] * 6, "friction": "none"})
    q, qd, qdd = (rng.uniform(-1, 1, (4 * _rnea._MIN_SAMPLES_PER_THREAD, 6)) for _ in range(3))
    with limit_threads(1):
        assert _rnea._kernel_threads(q.shape[0]) == 1
        one = model.regressor(q, qd, qdd)
    with limit_threads(2):
        assert _rnea._kernel_threads(q.shape[0]) == 2
        two = model.regressor(q, qd, qdd)
    np.testing.assert_array_equal(one, two)
