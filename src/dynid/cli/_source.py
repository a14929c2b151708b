"""The identified model a command reads: ``RESULT.json`` (or its folder) or a softMC ``IDNT<g>.PRG`` with
``--model`` / ``--config`` / ``--urdf`` (spec/interfaces.md §5 "softMC files in"). One loader,
:func:`dynid.fitted.load`, for every command that takes an identified model."""

from __future__ import annotations

from ..fitted import FittedModel, is_prg, load

__all__ = ["add_model_source", "load_model", "is_prg_source"]

ON_THRESHOLD_HELP = ("what exceeding TorqueThreshold does: 'error' (softMC's behaviour: stop with an error naming the "
                     "axis, sample and value; the default) or 'clamp' (clamp to +-TorqueThreshold and flag the cycles)")


def add_model_source(parser) -> None:
    """The positional ``RESULT.json`` and the ``--model``, ``--config``, ``--urdf`` a PRG needs."""
    parser.add_argument("result", metavar="RESULT.json",
                        help="result.json written by 'dynid identify' (or its folder), or a softMC parameter program "
                             "IDNT<g>.PRG (dynid's or the controller's) with --model and --config")
    parser.add_argument("--model", metavar="NAME", help="model of an IDNT<g>.PRG (see 'dynid models'); a PRG names only "
                        "softMC's element and DynamicModel number")
    parser.add_argument("--config", metavar="FILE", help="configuration (JSON, YAML or TOML) for what an IDNT<g>.PRG "
                        "does not hold: geometry, transmission, friction_sign; parameters, friction, payload and "
                        "TorqueThreshold come from the PRG in softMC's units and signs")
    parser.add_argument("--urdf", metavar="FILE", help="URDF of a 'serial' model, with an IDNT<g>.PRG")


def load_model(args) -> FittedModel:
    """The :class:`~dynid.fitted.FittedModel` of the command line's ``result``, ``--model``, ``--config``, ``--urdf``."""
    return load(args.result, getattr(args, "model", None), config=getattr(args, "config", None),
                urdf=getattr(args, "urdf", None))


def is_prg_source(args) -> bool:
    """The command reads a softMC parameter program (not a result.json)."""
    return is_prg(args.result)
