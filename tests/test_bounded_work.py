"""Bounded work with progress (issue 26): ``--fourier N`` has a measured upper bound and a time budget that
ends the search with its best design (and says so); every command that can take seconds on realistic input
reports progress — the library through its ``progress(stage, fraction)`` callback, the command line as a bar."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from dynid.bounds import MAX_HARMONICS, TIME_BUDGET_S
from dynid.cli import _common
from dynid.cli.main import main
from dynid.errors import ConfigError
from dynid.excite import FourierOptions, JointLimits, optimize_fourier
from dynid.excite.limits import check_limits
from dynid.models import Plant, make_model

DEG = np.pi / 180
PUMA_RANGE = ("--units", "softmc", "--start=-100,-170,100,-60,-60,-100", "--target=100,-40,235,60,60,100")


class Calls(list):
    """A progress callback that keeps ``(stage, fraction)`` (true even when empty, as a callback is)."""

    def __bool__(self) -> bool:
        return True

    def __call__(self, stage: str, fraction: float) -> None:
        assert isinstance(stage, str) and 0.0 <= fraction <= 1.0, (stage, fraction)
        self.append((stage, float(fraction)))

    @property
    def fractions(self) -> list[float]:
        return [f for _, f in self]

    def stages(self, text: str) -> list[str]:
        return [s for s, _ in self if text in s]


@pytest.fixture
def bars(monkeypatch) -> Calls:
    """Every call of the command line's progress bars (drawn or not: stderr is no terminal here)."""
    calls = Calls()
    original = _common.Progress.__call__

    def record(self, stage, fraction):
        calls(stage, min(max(float(fraction), 0.0), 1.0))
        return original(self, stage, fraction)

    monkeypatch.setattr(_common.Progress, "__call__", record)
    return calls


# ---------------------------------------------------------------------------------------------- --fourier N

def test_issue_26_fourier_harmonics_have_a_measured_bound(capsys):
    """--fourier 50 ran for more than 10 minutes without a word: now exit 2 at once, saying the bound and why."""
    assert MAX_HARMONICS == 20
    with pytest.raises(ConfigError, match=f"50 harmonics: at most {MAX_HARMONICS}. The optimiser's work grows"):
        FourierOptions(harmonics=50)
    FourierOptions(harmonics=MAX_HARMONICS)
    t0 = time.perf_counter()
    code = main(["excite", "--model", "puma", "--fourier", "50", *PUMA_RANGE, "--out", "never.csv", "--json"])
    out, err = capsys.readouterr()
    assert code == 2 and time.perf_counter() - t0 < 10 and out == ""
    assert err.startswith(f"dynid: error: --fourier 50: give 1 to {MAX_HARMONICS} harmonics. The optimiser's work "
                          "grows about as N^5")
    assert "Traceback" not in err and "dynid: hint: --fourier 5" in err


def test_issue_26_fourier_search_stops_at_its_time_budget_with_the_best_design():
    """The PUMA design takes ~9 s; with a 1.5 s budget the search stops, says so, and returns the best design it
    had: feasible on the 1 ms grid, no worse than the start that imitates the sine program."""
    plant = Plant(make_model("puma"))
    lim = JointLimits.create(6, position=np.column_stack([[-100, -170, 100, -60, -60, -100],
                                                          [100, -40, 235, 60, 60, 100]]) * DEG,
                             velocity=np.full(6, 1.5), acceleration=np.full(6, 4.0))
    ref = [1.56, 1, 1.31, 1.47, 1.21, 1.17]
    calls = Calls()
    d = optimize_fourier(plant, lim, 20.0, FourierOptions(harmonics=5, periods=2, time_budget_s=1.5), strict=False,
                         reference_hz=np.array(ref) * 0.15, progress=calls)
    assert d.stopped_early and "stopped at the time budget of 1.5 s" in d.message
    assert d.run_time_s < 1.5 + 10.0                      # the budget, one SLSQP step and the final 1 ms check
    assert d.limits_ok and d.to_dict()["stopped_early"] is True
    assert d.restarts[-1]["success"] is False and "time budget" in d.restarts[-1]["message"]
    t, q, qd, qdd = d.trajectory.sample(20.0, 1e-3)
    assert check_limits(lim, t, q, qd, qdd).ok
    assert d.objective_value <= min(r["objective"] for r in d.restarts)   # the best of what the search saw
    assert calls.fractions[-1] == 1.0 and calls.fractions == sorted(calls.fractions)
    unbounded = FourierOptions(harmonics=5, time_budget_s=None)
    assert unbounded.time_budget_s is None and FourierOptions().time_budget_s == TIME_BUDGET_S == 120.0
    with pytest.raises(ConfigError, match="time_budget_s must be positive"):
        FourierOptions(time_budget_s=0)


def test_issue_26_fourier_progress_follows_the_iterations(bars, capsys):
    """The bar moves with the optimiser's iterations (it sat on 'start 1/4' for the whole search), through
    the design's checks to the end; a budget that stops the search is said on stderr and in the JSON."""
    code = main(["excite", "--model", "puma", "--fourier", "5", *PUMA_RANGE, "--json", "--time-budget", "2"])
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert code == 0 and data["stopped_early"] is True and data["time_budget_s"] == 2.0 and data["limits_ok"]
    assert "dynid: note: optimised 5-harmonic trajectory; every limit holds on the 1 ms grid; stopped at the time " \
           "budget of 2 s" in err
    iterations = bars.stages(", iteration ")
    assert len(iterations) >= 3 and bars.stages("the design's parameter uncertainty")
    assert bars.fractions == sorted(bars.fractions) and bars.stages("the reference sine program")


# ---------------------------------------------------------------------------------------------- the other commands

def test_issue_26_excite_sine_and_report_show_a_bar(bars, capsys, tmp_path):
    """Two commands without a bar (excite's sine plan with a model, ~2 s; report, 2 s on 50k samples)."""
    assert main(["excite", "--model", "puma", "--json"]) == 0
    assert bars.stages("observation matrix")
    bars.clear()
    assert main(["demo", "--out", str(tmp_path / "demo"), "--json"]) == 0
    bars.clear()
    assert main(["report", str(tmp_path / "demo"), "--quiet"]) == 0
    assert [s for s, _ in bars] == ["reading the result and the REC", "the figures", "the page"]
    capsys.readouterr()


def test_issue_26_closed_loop_and_scenarios_report_progress():
    """The servo simulation reports about every 2 % of its cycles; a scenario its identification run, the fit
    and both servo runs (it sat on one stage for 10-40 s)."""
    from dynid.sim.scenarios import run_scenario
    from dynid.sim.closed_loop import Command, DriveOptions, ServoGains, run_closed_loop

    plant = Plant(make_model("rotary3"))
    t = np.arange(2001) * 1e-3
    q = 0.5 * np.sin(2 * np.pi * t)
    cmd = Command(t, q[:, None], np.gradient(q, t)[:, None], np.gradient(np.gradient(q, t), t)[:, None])
    calls = Calls()
    run_closed_loop(plant, [0.5, 0.0, 20.0, 0.0, 0.8, 1.5], cmd, ServoGains.tune([0.5], 20.0), DriveOptions(),
                    progress=calls)
    assert 45 <= len(calls) <= 55 and calls[0] == ("cycle 0 of 2001", 0.0) and calls.fractions == sorted(calls.fractions)
    calls = Calls()
    run_scenario("scara-move", progress=calls)
    for stage in ("identification run: cycle", "identifying: ", "run without the model: cycle",
                  "run with the model: cycle"):
        assert calls.stages(stage), stage
    assert calls.fractions == sorted(calls.fractions) and calls.fractions[-1] > 0.95


def test_issue_26_derive_and_codegen_report_progress(bars, capsys, tmp_path):
    """derive of a 6-joint URDF spends minutes printing its expressions in one stage: the library reports the
    derivation's steps and the printing by tree nodes; codegen its symbolic torque and the printing."""
    pytest.importorskip("sympy")
    from dynid.symbolic import derive, generate_code

    model = make_model("scara4", {"L1": 0.325, "L2": 0.275})
    calls = Calls()
    d = derive(model, progress=calls)
    assert calls[0][0] == "torques (newton-euler)" and calls.stages("reading off") and calls[-1] == ("derived", 1.0)
    printed = Calls()
    data = d.to_json(progress=printed)
    assert printed.stages("printing the mass matrix") and printed[-1] == ("printed", 1.0)
    assert printed.fractions == sorted(printed.fractions) and data["mass_matrix"][0][0]
    assert main(["derive", "--model", "scara4", "--config", _write(tmp_path, "scara.json", {"L1": 0.325, "L2": 0.275}),
                 "--out", str(tmp_path / "d"), "--json"]) == 0
    assert bars.stages("printing the") and bars.stages("the mass matrix") and bars.fractions == sorted(bars.fractions)
    capsys.readouterr()
    from dynid.fitted import FittedModel

    fitted = FittedModel(Plant(make_model("rotary3")), [0.5, 0.0, 20.0, 0.0, 0.8, 1.5])
    calls = Calls()
    generate_code(fitted, "python", progress=calls)
    assert [s for s, _ in calls] == ["the symbolic torque", "common sub-expressions and python source", "generated"]


def _write(folder, name: str, data) -> str:
    path = folder / name
    path.write_text(json.dumps(data))
    return str(path)

