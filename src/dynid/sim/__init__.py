"""Built-in simulator: a robot model under a servo following an identification motion."""

from .closed_loop import forward_dynamics_terms
from .motion import Motion, SineMotion, TrajectoryMotion
from .simulator import SimOptions, simulate

__all__ = ["Motion", "SineMotion", "TrajectoryMotion", "SimOptions", "simulate", "forward_dynamics_terms"]
