"""Built-in simulator: a robot model under a servo following an identification motion."""

from .motion import Motion, SineMotion, TrajectoryMotion
from .simulator import SimOptions, forward_dynamics_terms, simulate

__all__ = ["Motion", "SineMotion", "TrajectoryMotion", "SimOptions", "simulate", "forward_dynamics_terms"]
