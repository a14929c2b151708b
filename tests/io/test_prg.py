"""IDNT<group>.PRG: the spec's example lines, a line-by-line grammar, and the write/read round trip."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from dynid.errors import FileFormatError
from dynid.io.prg import PrgContent, format_prg, parse_prg

# The PUMA example of spec/files.md §1 (values the spec prints; axes 2-5 of lines 3/4/7 are elided there)
EXAMPLE = PrgContent(
    element="PUMA", success=True, date=dt.datetime(2017, 3, 29, 8, 17, 8),
    max_error_percent=(13.86, 8.70, 10.0, 11.0, 12.0, 43.85), mean_error_percent=(3.18, 1.71, 2.0, 2.0, 2.0, 12.41),
    cutoff_hz=20.0, data_length=49876, raw_length=50000,
    moving_samples=(35998, 30000, 30000, 30000, 30000, 29759), thresholds=(0.038770, 0.05, 0.05, 0.05, 0.05, 0.062830),
    parameters={1: 87.59309007, 2: 1.0, 3: 2.0, 4: 3.0, 5: 0.0, 6: 0.0},
    axes=("A1", "A2", "A3", "A4", "A5", "A6"),
    viscous={"A1": -154.7427791, "A2": -1, "A3": -1, "A4": -1, "A5": -1, "A6": -1},
    coulomb={"A1": -20.18153298, "A2": -1, "A3": -1, "A4": -1, "A5": -1, "A6": -0.9724658207},
    dynamic_model=2)


def test_reproduces_the_spec_example_lines():
    lines = format_prg(EXAMPLE).split("\n")
    assert lines[0] == "'Dynamic parameter identification for PUMA succeeded!"
    assert lines[1] == "'Identification date and time: 29/03/17 08:17:08"
    assert lines[2].startswith("'Max relative torque error: axis 1 = 13.86 %; axis 2 = 8.70 %; ")
    assert lines[2].endswith("axis 6 = 43.85 %; (maximal allowed = 50.00 %)")
    assert lines[3].startswith("'Mean relative torque error: axis 1 = 3.18 %; axis 2 = 1.71 %; ")
    assert lines[3].endswith("axis 6 = 12.41 %; ")
    assert lines[4] == "'Signal filter cutoff frequency = 20.000 Hz"
    assert lines[5] == "'Signal data length = 49876 samples (raw record length = 50000 samples)"
    assert lines[6].startswith("'Moving data length: axis 1 = 35998 samples (threshold = 0.038770 rad/s); axis 2 = ")
    assert lines[6].endswith("axis 6 = 29759 samples (threshold = 0.062830 rad/s); ")
    assert lines[7:11] == ["", "PROGRAM CONTINUE", "ATTACH PUMA", ""]
    assert lines[11] == "PUMA.DynamicParameter[1] = 8.759309007e+01"
    assert lines[16] == "PUMA.DynamicParameter[6] = 0.000000000e+00"
    assert lines[17:20] == ["", "A1.ViscousFriction = -1.547427791e+02", "A1.CoulombFriction = -2.018153298e+01"]
    assert lines[20] == ""  # blank line between axes
    assert "A6.CoulombFriction = -9.724658207e-01" in lines
    assert lines[-6:] == ["", "PUMA.DynamicModel = 2", "", "DETACH PUMA", "TERMINATE PROGRAM", ""]


# A grammar of the file, written from spec/files.md §1 (independent of the writer)
AX = r"axis \d+ = \d+\.\d{2} %; "
GRAMMAR = [
    r"'Dynamic parameter identification for (\w+) (succeeded|failed)!",
    r"'Identification date and time: \d{2}/\d{2}/\d{2} \d{2}:\d{2}:\d{2}",
    rf"'Max relative torque error: ({AX})+\(maximal allowed = \d+\.\d{{2}} %\)",
    rf"'Mean relative torque error: ({AX})+",
    r"'Signal filter cutoff frequency = \d+\.\d{3} Hz",
    r"'Signal data length = \d+ samples \(raw record length = \d+ samples\)",
    r"'Moving data length: (axis \d+ = \d+ samples \(threshold = \d+\.\d{6} (rad/s|m/s)\); )+",
    r"", r"PROGRAM CONTINUE", r"ATTACH (\w+)", r"",
]
E9 = r"-?\d\.\d{9}e[+-]\d{2,3}"


def check_prg_grammar(text: str, n_axes: int, n_slots: int, model: int) -> None:
    """Assert ``text`` is a softMC PRG line by line (raises AssertionError with the offending line).

    softMC's lines exactly as spec/files.md §1; MC-Basic comment lines (``'...``, which softMC ignores) may
    follow the seven header lines and the DynamicParameter lines (dynid's notes), and an axis block may end
    with ``<axis>.TorqueThreshold`` (spec/units-and-runtime.md §3)."""
    lines = text.split("\n")
    for i, pattern in enumerate(GRAMMAR[:7]):
        assert re.fullmatch(pattern, lines[i]), f"line {i + 1}: {lines[i]!r} !~ {pattern}"
    k = 7
    while lines[k].startswith("'"):
        k += 1
    for i, pattern in enumerate(GRAMMAR[7:]):
        assert re.fullmatch(pattern, lines[k + i]), f"line {k + i + 1}: {lines[k + i]!r} !~ {pattern}"
    element = re.fullmatch(GRAMMAR[0], lines[0]).group(1)
    assert re.fullmatch(GRAMMAR[9], lines[k + 2]).group(1) == element
    k += 4
    for slot in range(1, n_slots + 1):
        assert re.fullmatch(rf"{element}\.DynamicParameter\[{slot}\] = {E9}", lines[k]), lines[k]
        k += 1
    while lines[k].startswith("'"):
        k += 1
    for _ in range(n_axes):
        assert lines[k] == ""
        axis = re.fullmatch(rf"(\w+)\.ViscousFriction = {E9}", lines[k + 1])
        assert axis, lines[k + 1]
        assert re.fullmatch(rf"{axis.group(1)}\.CoulombFriction = {E9}", lines[k + 2]), lines[k + 2]
        k += 3
        if re.fullmatch(rf"{axis.group(1)}\.TorqueThreshold = {E9}", lines[k]):
            k += 1
    assert lines[k:] == ["", f"{element}.DynamicModel = {model}", "", f"DETACH {element}", "TERMINATE PROGRAM", ""]


def test_example_satisfies_the_grammar():
    check_prg_grammar(format_prg(EXAMPLE), 6, 6, 2)


def test_round_trip():
    back = parse_prg(format_prg(EXAMPLE))
    assert back.element == "PUMA" and back.success and back.date == EXAMPLE.date
    assert back.parameters == pytest.approx(EXAMPLE.parameters, rel=1e-9)
    assert back.viscous == pytest.approx(EXAMPLE.viscous, rel=1e-9)
    assert back.coulomb == pytest.approx(EXAMPLE.coulomb, rel=1e-9)
    assert back.dynamic_model == 2 and back.axes == EXAMPLE.axes
    assert back.max_error_percent == pytest.approx(EXAMPLE.max_error_percent)
    assert back.moving_samples == EXAMPLE.moving_samples and back.thresholds == pytest.approx(EXAMPLE.thresholds)
    assert (back.data_length, back.raw_length, back.cutoff_hz) == (49876, 50000, 20.0)


def test_reader_accepts_case_spacing_and_wrapped_header():
    text = format_prg(EXAMPLE)
    text = text.replace("; axis 4 = 30000 samples", ";\n' axis 4 = 30000 samples")  # wiki-style wrap
    text = text.replace("PUMA.DynamicParameter[2] = ", "puma.dynamicparameter[2]   =   ").replace("A1.ViscousFriction", "a1.viscousfriction")
    back = parse_prg(text.replace("\n", "\r\n"))
    assert back.moving_samples[3] == 30000 and len(back.moving_samples) == 6
    assert back.parameters[2] == 1.0 and back.viscous["a1"] == pytest.approx(-154.7427791)


def test_failure_and_payload_properties():
    c = PrgContent(**{**EXAMPLE.__dict__, "success": False, "properties": {"PayloadMass": 2.5}})
    text = format_prg(c)
    assert text.startswith("'Dynamic parameter identification for PUMA failed!")
    assert "PUMA.PayloadMass = 2.500000000e+00" in text
    back = parse_prg(text)
    assert not back.success and back.properties["PayloadMass"] == 2.5


def test_not_a_prg():
    with pytest.raises(FileFormatError):
        parse_prg("hello\nworld\n")


def test_outputs_get_the_usual_file_mode(tmp_path):
    """Atomic writes go through mkstemp (mode 0600): the final files must have 0666 & ~umask."""
    import os
    import stat

    from dynid._atomic import atomic_write_text

    mask = os.umask(0o022)
    try:
        atomic_write_text(tmp_path / "x.txt", "hello")
    finally:
        os.umask(mask)
    assert stat.S_IMODE((tmp_path / "x.txt").stat().st_mode) == 0o644
