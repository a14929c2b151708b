"""Excitation design: softMC SineWave planning and rating, predicted identifiability, optimised
Fourier trajectories, and their exports (trajectory CSV, MC-Basic identification program, plot).

>>> from dynid.excite import rate_frequencies
>>> rate_frequencies([1.1, 1.3, 1.5], record_s=20).rating
'good'
"""

from .export import mcbasic_program, plot_motion, trajectory_csv, write_mcbasic, write_trajectory_csv
from .fourier import FourierDesign, FourierMotion, FourierOptions, FourierTrajectory, choose_periods, optimize_fourier
from .identifiability import Identifiability, condition_numbers, observation_matrix, predict_identifiability
from .limits import JointLimits, LimitCheck, LimitViolationError, check_limits
from .programs import SOURCE_PROGRAMS, SourceProgram, model_program, source_program
from .sine import (
    FrequencyChoice, Rating, Repetition, SinePlan, analyse_repetition, choose_frequencies, plan_sine, rate_frequencies,
    rate_plan,
)

__all__ = [
    "SinePlan", "plan_sine", "Repetition", "analyse_repetition", "Rating", "rate_frequencies", "rate_plan",
    "FrequencyChoice", "choose_frequencies",
    "Identifiability", "predict_identifiability", "observation_matrix", "condition_numbers",
    "FourierTrajectory", "FourierMotion", "FourierOptions", "FourierDesign", "optimize_fourier", "choose_periods",
    "JointLimits", "LimitCheck", "LimitViolationError", "check_limits",
    "trajectory_csv", "write_trajectory_csv", "mcbasic_program", "write_mcbasic", "plot_motion",
    "SourceProgram", "SOURCE_PROGRAMS", "source_program", "model_program",
]
