"""The search of :func:`~dynid.excite.fourier.optimize_fourier`: SLSQP from each start, the best polished,
within a time budget that reports progress (:class:`Clock`).

``prob`` is the optimiser's problem (``fun``, ``grad``, ``constraints``, ``feasible``: see
:mod:`dynid.excite.fourier`). A search the budget stops returns the best iterate that keeps every
constraint found so far.
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np
from scipy.optimize import minimize

__all__ = ["Clock", "OutOfTime", "search", "slsqp"]


class OutOfTime(Exception):
    """The time budget is used up (raised inside SLSQP's callbacks, caught around it)."""


class Clock:
    """The optimisation's time budget and progress: SLSQP iterations done against those planned (screened starts,
    then the polish), or the time used against the budget, whichever is further (never going back)."""

    def __init__(self, t0: float, budget_s: float | None, step: Callable[[str, float], None], planned: int) -> None:
        self.t0, self.budget_s, self.step = t0, budget_s, step
        self.planned = max(int(planned), 1)
        self.done = 0
        self.stage = ""
        self.stopped = ""
        self._shown = 0.0

    def tick(self) -> None:
        """An objective evaluation: raises :class:`OutOfTime` once the budget is used up."""
        if self.budget_s is not None and time.perf_counter() - self.t0 > self.budget_s:
            self.stopped = (f"stopped at the time budget of {self.budget_s:g} s ({self.stage}): the best design found "
                            "by then is returned")
            raise OutOfTime

    def iteration(self) -> None:
        """An SLSQP iteration finished."""
        self.done += 1
        self._show(f"{self.stage}, iteration {self.done}")

    def begin(self, stage: str) -> None:
        self.stage = stage
        self._show(stage)

    def _show(self, stage: str) -> None:
        used = self.done / self.planned
        if self.budget_s is not None:
            used = max(used, (time.perf_counter() - self.t0) / self.budget_s)
        self._shown = max(self._shown, min(0.05 + 0.8 * used, 0.85))     # (0.85: the fine grid's check next)
        self.step(stage, self._shown)


def search(prob, starts: list, labels: list, screen: int, polish: int, tol: float, clock: Clock):
    """Screen every start for ``screen`` SLSQP iterations, polish the best for ``polish`` (0: none);
    ``(u, objective, runs)`` — within the clock's budget (a search it stops keeps the best iterate found)."""
    runs: list[dict] = []
    best_u, best_f = starts[0], np.inf
    try:
        for k, u0 in enumerate(starts):  # independent starts (sequential: the regressor is the cost)
            clock.begin(f"start {k + 1}/{len(starts)}")
            u, f, res = slsqp(prob, u0, screen, tol, clock)
            runs.append({"start": labels[k], "objective": f, "iterations": int(res.nit), "success": bool(res.success),
                         "message": str(res.message)})
            if f < best_f:
                best_u, best_f = u, f
        if polish:
            clock.begin("polishing the best start")
            u, f, res = slsqp(prob, best_u, polish, tol, clock)
            if f <= best_f:
                best_u, best_f = u, f
            runs.append({"start": "polish", "objective": best_f, "iterations": int(res.nit),
                         "success": bool(res.success), "message": str(res.message)})
    except OutOfTime as stop:
        u, f = stop.args if stop.args else (None, np.inf)
        if u is not None and f < best_f:
            best_u, best_f = u, f
        runs.append({"start": labels[len(runs)] if len(runs) < len(starts) else "polish", "objective": f,
                     "iterations": None, "success": False, "message": clock.stopped})
    if not np.isfinite(best_f):   # stopped before any start was evaluated: the first start, as it is
        best_f = prob.fun(best_u)
    return best_u, best_f, runs


def slsqp(prob, u0: np.ndarray, max_iter: int, tol: float, clock: Clock | None = None):
    """SLSQP from ``u0``; returns ``(u, objective, result)`` with ``u`` the best iterate that keeps every
    constraint (to 1e-6): SLSQP's iterates may leave the constraints on the way (its last one too, when the
    iteration limit stops it), and a screened start must not fall back to where it began for that. When the
    ``clock``'s budget runs out, :class:`OutOfTime` carries ``(u, objective)`` of that best iterate."""
    best = [prob.fun(u0) if prob.feasible(u0, 1e-6) else np.inf, u0]

    def keep(xk):
        if prob.feasible(xk, 1e-6):
            f = prob.fun(xk)
            if f < best[0]:
                best[0], best[1] = f, np.array(xk, dtype=float)

    def fun(u):
        if clock is not None:
            clock.tick()
        return prob.fun(u)

    def callback(xk):
        keep(xk)
        if clock is not None:
            clock.iteration()

    try:
        res = minimize(fun, u0, jac=prob.grad, method="SLSQP", constraints=prob.constraints(),
                       options={"maxiter": max_iter, "ftol": tol}, callback=callback)
    except OutOfTime:
        raise OutOfTime(best[1], best[0]) from None
    keep(res.x)
    if not np.isfinite(best[0]):   # nothing feasible seen: the start (SLSQP could not repair it either)
        return u0, prob.fun(u0), res
    return best[1], best[0], res
