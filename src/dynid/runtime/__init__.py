"""The runtime side of an identified model: drive torque units, additive feed-forward, collision
detection (spec/units-and-runtime.md §1–5).

Per-cycle objects follow style.md §4: immutable configuration (:class:`FeedForward`,
:class:`CollisionMonitor`), a small mutable state (``new_state()``), and a ``step()`` that allocates
nothing and returns a status enum.
"""

from .collision import (CollisionMonitor, DerivedThresholds, Detection, MonitorState, MonitorStatus, Replay,
                        ThresholdOptions, derive_thresholds, model_residuals, replay)
from .feedforward import (DEFAULT_DELAY_CYCLES, ON_THRESHOLD, FeedForward, FeedForwardBatch, FeedForwardState,
                          FeedForwardStatus, TorqueThresholdError, check_torque_threshold, estimate_delay_cycles,
                          feedforward_batch)
from .drive_units import (SoftmcUnitWarning, permille_from_rated_torque, permille_from_torque_factor, permille_to_torque,
                    pulley_lead, torque_factor_linear_motor, torque_factor_rotary, torque_factor_screw,
                    torque_factor_screw_softmc, torque_feedback, torque_threshold_continuous, torque_threshold_peak)

__all__ = [
    "FeedForward", "FeedForwardState", "FeedForwardStatus", "FeedForwardBatch", "feedforward_batch",
    "DEFAULT_DELAY_CYCLES", "estimate_delay_cycles", "ON_THRESHOLD", "TorqueThresholdError", "check_torque_threshold",
    "CollisionMonitor", "MonitorState", "MonitorStatus", "Detection", "Replay", "replay", "ThresholdOptions",
    "DerivedThresholds", "derive_thresholds", "model_residuals",
    "SoftmcUnitWarning", "torque_factor_rotary", "torque_factor_linear_motor", "torque_factor_screw",
    "torque_factor_screw_softmc", "pulley_lead", "torque_threshold_continuous", "torque_threshold_peak",
    "torque_feedback", "permille_from_torque_factor", "permille_from_rated_torque", "permille_to_torque",
]
