"""Every generated MC-Basic identification program against the source's examples, line by line (issue 17.7).

The source's examples (spec/identification.md §1, §7) fix, per robot, the points and frequencies
(``startPoint``, ``sineTarget``, ``SWfreq = factor*{...}``), the element, ``DynamicModel``, the
``Move startPoint Abs = 1`` / ``SineWave`` / ``sleep 2000`` / ``IdentificationStart IdentFilterFreq = 80`` /
``sleep <record>`` / ``IdentificationFinish`` sequence, and the single axis's ``SineWave ... Abs = 1``. The
values below are typed from the spec, not taken from dynid; the frame around them (``Dim Shared``, the
``While ... End While`` waits) is dynid's documented reconstruction.
"""

from __future__ import annotations

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.excite import SOURCE_PROGRAMS, mcbasic_program, plan_sine
from dynid.models import model_class
from dynid.units import to_si

SINGLE = dict(element="A1", decl="Double", start="-350", target="350", freq="1.5", abs_sine=True)
SCARA = dict(element="SCARA", start="{-160,-160,0,-350}", target="{160,160,150,350}", freq="0.3*{1,1.27,1.43,1.13}")
DELTA = dict(element="DELTA", start="{-30,-30,-30,-200}", target="{70,70,70,200}", freq="0.3*{1,1.27,1.43,1.13}")
PUMA = dict(element="PUMA", decl="Joint Of XYZYPR", start="{-100,-170,100,-60,-60,-100}",
            target="{100,-40,235,60,60,100}")

# model: (the source's example as dynid's programs must write it, DynamicModel, record [ms])
EXAMPLES = {
    "rotary1": ({**SINGLE}, 1, 20000),
    "rotary2": ({**SINGLE}, 2, 20000),
    "rotary3": ({**SINGLE}, 3, 20000),
    "linear1": ({**SINGLE}, 1, 20000),
    "linear2": ({**SINGLE}, 2, 20000),
    "linear3": ({**SINGLE}, 3, 20000),
    "scara4": ({**SCARA, "decl": "Joint Of XYZR"}, 1, 20000),
    "scara3": ({**SCARA, "decl": "Joint Of XYZ", "start": "{-160,-160,0}", "target": "{160,160,150}",
                "freq": "0.3*{1,1.27,1.43}"}, 1, 20000),
    "delta4": ({**DELTA, "decl": "Joint Of XYZR"}, 1, 20000),
    "delta3": ({**DELTA, "decl": "Joint Of XYZ", "start": "{-30,-30,-30}", "target": "{70,70,70}",
                "freq": "0.3*{1,1.27,1.43}"}, 1, 20000),
    "puma": ({**PUMA, "freq": "0.15*{1.56,1,1.31,1.47,1.21,1.17}"}, 1, 20000),
    # semi-static: same points, 0.02*{...}, 2-3 minutes; the PRG says DynamicModel = 2 (identification.md §7)
    "puma-gravity": ({**PUMA, "freq": "0.02*{1.56,1,1.31,1.47,1.21,1.17}"}, 2, 150000),
}


def expected_lines(ex: dict, model_no: int, record_ms: int) -> list[str]:
    """The program's statements in order (comments and blank lines aside), indentation stripped."""
    e = ex["element"]
    wait = lambda cond: [f"While {cond}", "sleep 10", "End While"]  # noqa: E731
    return [
        f"Dim Shared startPoint As {ex['decl']}", f"Dim Shared sineTarget As {ex['decl']}",
        f"Dim Shared SWfreq As {ex['decl']}",
        "Program",
        f"startPoint = {ex['start']}", f"sineTarget = {ex['target']}", f"SWfreq = {ex['freq']}",
        f"Attach {e}", f"{e}.En = 0", *wait(f"{e}.En = 1"), f"{e}.DynamicModel = {model_no}", f"{e}.En = 1",
        *wait(f"{e}.En = 0"),
        "Move startPoint Abs = 1", *wait(f"{e}.IsMoving"),
        "SineWave sineTarget SineWaveFreq = SWfreq" + (" Abs = 1" if ex.get("abs_sine") else ""),
        "sleep 2000", "IdentificationStart IdentFilterFreq = 80", f"sleep {record_ms}", "IdentificationFinish",
        "stop", *wait(f"{e}.IsMoving"), "proceed", f"{e}.En = 0", f"Detach {e}",
        "End Program",
    ]


def statements(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("'")]


def source_program_text(name: str) -> str:
    """dynid's program for the model's source example (what ``dynid excite --model NAME --mcbasic`` writes)."""
    model = model_class(name).example()
    src = SOURCE_PROGRAMS[name]
    kinds = model.joint_kinds
    plan = plan_sine(to_si(np.array(src.start), kinds, "softmc"), to_si(np.array(src.target), kinds, "softmc"),
                     src.base, factor=src.factor, record_s=src.record_s, settle_s=src.settle_s)
    return mcbasic_program(plan, element=model.element, dynamic_model=model.softmc_model, kinds=kinds,
                           filter_hz=src.filter_hz)


def test_every_source_program_is_covered():
    assert set(EXAMPLES) == set(SOURCE_PROGRAMS)


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_program_matches_the_source_line_by_line(name):
    ex, model_no, record_ms = EXAMPLES[name]
    got = statements(source_program_text(name))
    want = expected_lines(ex, model_no, record_ms)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g == w, f"{name}, statement {i + 1}: {g!r} != {w!r}"
    assert len(got) == len(want), (name, got[len(want):], want[len(got):])


def test_issue_17_single_axis_sinewave_is_absolute():
    """The single-axis example's SineWave target is absolute (``Abs = 1``); the robots' examples have none."""
    single = [s for s in statements(source_program_text("rotary3")) if s.startswith("SineWave")]
    robot = [s for s in statements(source_program_text("scara4")) if s.startswith("SineWave")]
    assert single == ["SineWave sineTarget SineWaveFreq = SWfreq Abs = 1"]
    assert robot == ["SineWave sineTarget SineWaveFreq = SWfreq"]


@pytest.mark.parametrize("name", ["linear1", "delta4", "puma-gravity"])
def test_cli_writes_the_same_program(name, tmp_path, capsys):
    """``dynid excite --model NAME --mcbasic FILE`` writes exactly the library's program of the source example."""
    out = tmp_path / "IDENT.PRG"
    assert main(["excite", "--model", name, "--mcbasic", str(out), "--quiet"]) == 0
    capsys.readouterr()
    ex, model_no, record_ms = EXAMPLES[name]
    assert statements(out.read_text()) == expected_lines(ex, model_no, record_ms)
