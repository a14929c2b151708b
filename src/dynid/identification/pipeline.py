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
from typing import Callable

from ..models.base import Plant
from ..recording import Recording
from .consistent import link_groups
from .fit import Fit, fit_once
from .options import ESTIMATORS, IdentifyOptions, ParameterStatus
from .result import Identification
from .robust import robust
from .select import aligned, select_cutoff, select_friction

__all__ = ["IdentifyOptions", "Identification", "identify", "ParameterStatus", "ESTIMATORS"]


def identify(rec: Recording, plant: Plant, options: IdentifyOptions = IdentifyOptions(), *,
             progress: Callable[[str, float], None] | None = None) -> Identification:
    """Identify the parameters of ``plant`` from a recording.

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
    # the estimator the selections score candidates with, and the final fit (with the delay alignment,
    # which the robust estimator repeats inside each of its refits)
    estimator: Fit = robust(fit_once) if options.estimator == "irls" else fit_once
    inner: Fit = aligned(fit_once) if options.align_torque else fit_once
    final: Fit = robust(inner) if options.estimator == "irls" else inner
    notes: list[str] = []
    selections: dict = {}

    def chosen_friction(rec_, plant_, options_, progress=None) -> tuple[Plant, str | None]:
        """The plant with the friction model the data choose, when it asks for one (``friction: auto``)."""
        if not plant_.auto_friction:
            return plant_, None
        sel = select_friction(rec_, plant_, options_, progress=progress, fit=estimator)
        return Plant(plant_.model.with_config(friction=sel.chosen)), sel.note()

    def with_friction_choice(rec_, plant_, options_, progress=None):
        """The estimator, after choosing the friction model when the plant asks for it."""
        chosen, note = chosen_friction(rec_, plant_, options_, progress)
        res = estimator(rec_, chosen, options_, progress=progress)
        return res if note is None else replace(res, notes=res.notes + (note,))

    if options.select_cutoff:
        csel = select_cutoff(rec, plant, replace(options, select_cutoff=False), progress=progress,
                             fit=with_friction_choice)
        options = replace(options, select_cutoff=False,
                          conditioning=replace(options.conditioning, cutoff_hz=csel.chosen_hz))
        notes.append(csel.note())
        selections["cutoff_selection"] = csel.to_dict()
    plant, fnote = chosen_friction(rec, plant, options, progress)
    if fnote is not None:
        notes.insert(0, fnote)
    res = final(rec, plant, options, progress=progress)
    if notes or selections:
        res = replace(res, notes=res.notes + tuple(notes), selections={**res.selections, **selections})
    return res
