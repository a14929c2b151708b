"""The identification, top to bottom: ``Recording → condition → regression → solve → select → FittedModel``.

Reading order of the package (each module imports only the ones before it):

1. :mod:`.options` — :class:`IdentifyOptions`, :class:`ParameterStatus`
2. :mod:`dynid.signal.conditioning` — filter, differentiate, gate (stage 2)
3. :mod:`.regression` — the stacked regressor rows, known parameters, base parameters (stage 3)
4. :mod:`.solve` — weighted least squares, or the physically consistent fit (stage 4)
5. :mod:`.fit` — one pass through stages 2–4, completion, evaluation, diagnoses → :class:`Identification`
6. :mod:`.robust`, :mod:`.select` — choices wrapped around a fit: outlier rejection, the friction model,
   the cutoff, the torque delay
7. :func:`identify` (here) — composes them; :attr:`Identification.model` is the
   :class:`~dynid.fitted.FittedModel` every writer and the runtime read.

>>> from dynid.models import make_model, Plant
>>> from dynid.sim import SineMotion, simulate
>>> plant = Plant(make_model("rotary1"))
>>> rec = simulate(plant, [0.02, 0.5, 0.3], SineMotion([-1.0], [1.0], [1.0], record_s=6.0), seed=1)
>>> res = identify(rec, plant)
>>> bool(res.success), round(res.values["I"], 2)
(True, 0.02)
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from typing import Callable

import numpy as np

from ..models.base import Plant
from ..recording import Recording
from ..signal.conditioning import Conditioned
from ..threads import blas_single_threaded
from .consistent import link_groups
from .fit import Fit, fit_once
from .options import ESTIMATORS, IdentifyOptions, ParameterStatus
from .result import Identification
from .robust import robust
from .select import aligned, select_auto

__all__ = ["IdentifyOptions", "Identification", "identify", "ParameterStatus", "ESTIMATORS"]


@blas_single_threaded
def identify(rec: Recording, plant: Plant, options: IdentifyOptions = IdentifyOptions(), *,
             progress: Callable[[str, float], None] | None = None,
             on_conditioned: Callable[[Conditioned], None] | None = None,
             on_evaluated: Callable[[Conditioned, np.ndarray], None] | None = None) -> Identification:
    """Identify the parameters of ``plant`` from a recording.

    BLAS runs on one thread inside: the identification's matrices are small (a few thousand rows by a few
    dozen columns), where BLAS threads mostly wait for each other — and on a busy machine much longer; the
    independent stages run on threads of their own instead (conditionings of the cutoff candidates).

    Parameters
    ----------
    rec : Recording
        SI units, joint side, with torques.
    plant : Plant
        Model + friction block; its configuration supplies payload, known parameters and limits. A
        plant built from ``friction: auto`` has its friction model chosen by the data.
    options : IdentifyOptions
        ``select_cutoff`` chooses the cutoff by the data; ``estimator``, ``align_torque`` as documented.
    progress : callable(stage, fraction), optional
        Called between stages (the command line draws a progress bar with it).
    on_conditioned : callable(conditioned), optional
        Called once the final fit's recording is conditioned and its regression built, before the solve
        (:func:`fit_once`).
    on_evaluated : callable(conditioned, model_torque), optional
        Called once the final fit's model torque is known, before its diagnoses (:func:`fit_once`). Neither is
        called by the ``irls`` estimator and the delay alignment, which fit several times.

    Returns
    -------
    Identification
        ``success`` follows softMC's 50 % rule; a failed rule is a result, not an exception.
        ``.model`` is the :class:`~dynid.fitted.FittedModel`.

    Raises
    ------
    InputDataError, IdentifiabilityError, ConfigError
        Unusable data (no motion, too few samples), or an estimator the model does not support.
    """
    if options.estimator == "consistent":
        link_groups(plant)  # fail early, before any work, for models without link-wise inertias
    # the final fit (with the delay alignment, which the robust estimator repeats inside each of its refits)
    inner: Fit = aligned(fit_once) if options.align_torque else fit_once
    final: Fit = robust(inner) if options.estimator == "irls" else inner
    notes: list[str] = []
    selections: dict = {}
    ridge = options.select_regularization and plant.model.prior_parameters() is not None
    if options.select_cutoff or plant.auto_friction or ridge:
        sel = select_auto(rec, plant, options, cutoff=options.select_cutoff, friction=plant.auto_friction,
                          ridge=ridge, progress=progress)
        plant, options = sel.applied(plant, options)
        notes.append(sel.note())
        selections["selection"] = sel.to_dict()
    if final is fit_once:
        if selections and sel.conditioned is not None:                  # the selection's conditioning, reused
            final = partial(final, conditioned=sel.conditioned)
        if on_conditioned is not None:
            final = partial(final, on_conditioned=on_conditioned)
        if on_evaluated is not None:
            final = partial(final, on_evaluated=on_evaluated)
    res = final(rec, plant, options, progress=progress)
    if notes or selections:
        res = replace(res, notes=res.notes + tuple(notes), selections={**res.selections, **selections})
    return res

