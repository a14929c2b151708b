"""The excitation rating includes identifiability: confounded or unexcited parameters are never "good".

A single sine on a mass-spring axis (linear3, ``tau = M (qdd + g) + K q - K*X0``) makes ``qdd = -w^2 (q - c)``:
``M (qdd + g) + K q - K*X0 = (K - w^2 M) q + (w^2 c + g) M - K*X0``, so the motion determines only
``K - w^2 M`` and ``K*X0 - (w^2 c + g) M``, never M, K and K*X0 themselves.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from dynid.cli.main import main
from dynid.excite import plan_sine, predict_identifiability, rate_plan
from dynid.excite.identifiability import CONFOUNDED_RTOL, Confounding, confounded_groups
from dynid.excite.sine import with_identifiability
from dynid.models import Plant, make_model


def coefficients(combination: str) -> dict[str, float]:
    """``"K - 39.48*M"`` -> ``{"K": 1.0, "M": -39.48}`` (names may contain ``*``, bracketed ones ``+``)."""
    out = {}
    for sign, term in re.findall(r"(^|[+-]) ?((?:[0-9.e+-]+\*)?(?:\([^)]*\)|[^ ]+))", combination):
        m = re.match(r"([0-9.]+(?:e[+-]?[0-9]+)?)\*(.+)$", term)
        coef, name = (float(m.group(1)), m.group(2)) if m else (1.0, term)
        out[name.strip("()")] = -coef if sign == "-" else coef
    return out


def test_coefficients_parser():
    assert coefficients("K - 39.48*M") == {"K": 1.0, "M": -39.48}
    assert coefficients("K*X0 - 11.78*M + N") == {"K*X0": 1.0, "M": -11.78, "N": 1.0}
    assert coefficients("(A2^2*M2+I2) + 0.5*(L1^2*M2+I1)") == {"A2^2*M2+I2": 1.0, "L1^2*M2+I1": 0.5}


# ------------------------------------------------------------------------------ confounded_groups

def test_exact_collinearity_of_a_synthetic_matrix(rng):
    """d = 2 a - 1000 b exactly: the data determine a + 2 d, b - 1000 d and c; the columns' scales differ by 1e6."""
    u, v, w = rng.normal(size=(3, 500))
    Y = np.column_stack([u, 1e-3 * v, 1e3 * w, 2 * u - v])        # columns of a, b, c, d
    [g] = confounded_groups(Y, ["a", "b", "c", "d"])
    assert isinstance(g, Confounding) and g.parameters == ("a", "b", "d") and g.indices == (0, 1, 3)
    assert not g.not_excited and g.remedy == ""
    n = g.null_vectors[:, 0] * np.sign(g.null_vectors[0, 0])
    np.testing.assert_allclose(n, np.array([2.0, -1000.0, -1.0]) / np.linalg.norm([2.0, -1000.0, -1.0]), rtol=1e-9)
    assert g.combinations == ("b + 500*a", "d + 0.5*a")          # the first parameter is the free one
    for text in g.combinations:                                   # each is orthogonal to the null direction
        c = coefficients(text)
        assert sum(c.get(p, 0.0) * x for p, x in zip(g.parameters, n)) == pytest.approx(0.0, abs=1e-12)
    assert g.relative_singular_values[0] < 1e-12
    assert "a, b and d are confounded: this motion determines them only as b + 500*a and d + 0.5*a" == g.text
    d = g.to_dict()
    assert d["parameters"] == ["a", "b", "d"] and d["combination"] == "b + 500*a and d + 0.5*a"


def test_zero_column_is_not_excited_and_full_rank_has_no_group(rng):
    Y = rng.normal(size=(200, 3))
    assert confounded_groups(Y, ["a", "b", "c"]) == []
    Y[:, 1] = 0.0
    [g] = confounded_groups(Y, ["a", "b", "c"])
    assert g.parameters == ("b",) and g.not_excited and g.combinations == ()
    assert g.text == "b is not excited by this motion (not identifiable)"
    assert confounded_groups(Y.reshape(50, 4, 3), ["a", "b", "c"])[0].parameters == ("b",)   # (samples, joints, cols)


def test_two_independent_groups_and_the_tolerance(rng):
    u, v, w, x = rng.normal(size=(4, 400))
    e = rng.normal(size=400)
    Y = np.column_stack([u, 3 * u, v, w, x, w - x])
    groups = confounded_groups(Y, list("abcdef"))
    assert [g.parameters for g in groups] == [("a", "b"), ("d", "e", "f")]
    assert groups[0].combinations == ("b + 0.3333*a",)                # torque u (a + 3 b)
    # near-collinear: relative singular value ~ eps / sqrt(2); confounded below the tolerance, not above
    for eps, found in ((1e-5, True), (1e-1, False)):
        Yn = np.column_stack([u, u + eps * e / np.linalg.norm(e) * np.linalg.norm(u), v])
        assert bool(confounded_groups(Yn, list("abc"))) is found
    assert CONFOUNDED_RTOL == 1e-3


# ------------------------------------------------------------------------------ linear3 single sine

F_HZ, START, TARGET = 0.7, 0.0, 0.2


def linear3_single_sine():
    plant = Plant(make_model("linear3"))
    plan = plan_sine([START], [TARGET], [F_HZ], record_s=20.0)
    _, q, qd, qdd = plan.sample(1e-2)
    return plant, plan, predict_identifiability(plant, q, qd, qdd, record_s=plan.record_s)


def test_linear3_single_sine_confounds_m_k_and_kx0_with_the_analytic_combination():
    plant, plan, ident = linear3_single_sine()
    assert not ident.identifiable
    [g] = ident.confounded
    assert g.parameters == ("M", "K", "K*X0")
    w2 = (2 * np.pi * F_HZ) ** 2
    c = 0.5 * (START + TARGET)
    k, kx0 = (coefficients(t) for t in g.combinations)
    assert k["K"] == 1.0 and k["M"] == pytest.approx(-w2, rel=5e-4)                     # K - w^2 M (4 digits)
    assert kx0["K*X0"] == 1.0 and kx0["M"] == pytest.approx(-(w2 * c + plant.model.gravity), rel=5e-4)
    assert "second frequency on joint 1 (A1)" in g.remedy and "0.7 Hz" in g.remedy
    assert {"A1.viscous", "A1.coulomb"}.isdisjoint(g.parameters)                          # friction is separate

    assert rate_plan(plan).rating == "good"                      # the frequencies alone
    r = rate_plan(plan, identifiability=ident)
    assert r.rating == "bad" and r.confounded == ident.confounded
    assert r.reasons[0].startswith("M, K and K*X0 are confounded: this motion determines them only as K - ")
    assert "a second frequency on joint 1 (A1) separates them" in r.reasons[0]
    d = r.to_dict()["confounded"][0]
    assert d["parameters"] == ["M", "K", "K*X0"] and d["combination"].startswith("K - ") and d["remedy"]


def run_json(capsys, argv):
    status = main(["excite", *argv, "--json"])
    return status, json.loads(capsys.readouterr().out)


def test_cli_never_rates_the_confounded_single_sine_good(capsys):
    argv = ["--model", "linear3", "--freqs", str(F_HZ), f"--start={START}", f"--target={TARGET}"]
    status, d = run_json(capsys, argv)
    assert status == 0 and d["rating"] == "bad"
    [g] = d["confounded"]
    assert g["parameters"] == ["M", "K", "K*X0"] and "second frequency on joint 1" in g["remedy"]
    assert coefficients(g["combinations"][0])["M"] == pytest.approx(-(2 * np.pi * F_HZ) ** 2, rel=5e-4)
    assert d["identifiability"]["confounded"] == d["confounded"]
    assert main(["excite", *argv]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rating: bad\n  - M, K and K*X0 are confounded: this motion determines them only as K - 19.34*M")


def test_two_frequencies_on_the_same_axis_separate_them():
    plant = Plant(make_model("linear3"))
    t = np.arange(0.0, 20.0, 1e-2)
    w1, w2 = 2 * np.pi * 0.7, 2 * np.pi * 1.9
    q = (0.1 + 0.06 * np.sin(w1 * t) + 0.03 * np.sin(w2 * t))[:, None]
    qd = (0.06 * w1 * np.cos(w1 * t) + 0.03 * w2 * np.cos(w2 * t))[:, None]
    qdd = (-0.06 * w1**2 * np.sin(w1 * t) - 0.03 * w2**2 * np.sin(w2 * t))[:, None]
    ident = predict_identifiability(plant, q, qd, qdd, record_s=20.0)
    assert ident.confounded == () and ident.identifiable and ident.to_dict()["confounded"] == []
    _, plan, _ = linear3_single_sine()
    base = rate_plan(plan)
    r = with_identifiability(base, ident)                        # rating unaffected, analysed: none confounded
    assert (r.rating, r.reasons, r.notes) == (base.rating, base.reasons, base.notes) and r.confounded == ()


def test_fourier_with_two_harmonics_reports_no_confounding_but_its_sine_reference_does(capsys):
    status, d = run_json(capsys, ["--model", "linear3", "--fourier", "2", "--restarts", "1", "--record-s", "10",
                                  "--quiet"])
    assert status == 0 and d["limits_ok"] and d["identifiability"]["confounded"] == []
    ref = d["reference"]                                         # the source's single-axis program: one sine
    assert ref["rating"] == "bad" and ref["confounded"][0]["parameters"] == ["M", "K", "K*X0"]


# ------------------------------------------------------------------------------ multi-axis plans

def test_scara4_source_program_still_rates_good(capsys):
    status, d = run_json(capsys, ["--model", "scara4"])
    assert status == 0 and d["rating"] == "good" and d["confounded"] == []
    assert main(["excite", "--model", "scara4"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("rating: good") and "confounded or unexcited parameters: none" in out


def test_scara4_joints_in_phase_are_confounded_and_a_still_joint_unexcited(capsys):
    status, d = run_json(capsys, ["--model", "scara4", "--freqs", "1,1,1.43,1.13", "--factor", "0.3"])
    assert status == 0 and d["rating"] == "bad"                  # was "medium" on the frequencies alone
    g = d["confounded"][0]
    assert "J2" in g["parameters"] and "joint 1 (A1) and joint 2 (A2) move at the same frequency" in g["remedy"]
    assert any("always in phase" in r for r in d["reasons"])     # the frequency finding is kept
    status, d = run_json(capsys, ["--model", "scara4", "--units", "softmc", "--start=-160,-160,0,0",
                                  "--target=160,160,150,0", "--freqs", "1,1.27,1.43,1.13", "--factor", "0.3"])
    assert d["rating"] == "bad" and all(g["not_excited"] for g in d["confounded"])
    assert {p for g in d["confounded"] for p in g["parameters"]} == {"J4", "A4.viscous", "A4.coulomb"}
    assert d["reasons"][0] == ("J4, A4.viscous and A4.coulomb are not excited by this motion (not identifiable); "
                               "joint 4 (A4) does not move: give it a range")


def test_rating_without_a_model_does_not_analyse_identifiability(capsys):
    status, d = run_json(capsys, ["--freqs", "1.1,1.3,1.5"])
    assert status == 0 and d["rating"] == "good" and d["confounded"] is None
