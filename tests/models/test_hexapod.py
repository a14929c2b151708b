"""The 6-UPRU hexapod (``6upru``) against independent computations.

References: MuJoCo (a tree of the legs closed by Lagrange multipliers, tests/models/_hexapod_mujoco.py)
for the actuator forces and the mechanical energy; rotation-matrix geometry for the kinematics;
finite differences for the rates; the Ni et al. (2025) base-parameter table (spec/lagrange-and-parallel.md §4).
"""

from __future__ import annotations

import numpy as np
import pytest

from dynid.errors import ConfigError, InputDataError
from dynid.identification.base_params import find_base_parameters, structural_base
from dynid.models import Plant, make_model
from dynid.models._urdf import body_parameters
from dynid.models.closed_chain import KinematicsError
from dynid.models.hexapod import (EXAMPLE_GEOMETRY, Hexapod, forward_kinematics, inverse_kinematics,
                                  kinematic_jacobian, platform_motion, pose_to_frame)

G = 9.80665
SPAN = np.array([0.06, 0.06, 0.05, 0.12, 0.12, 0.15])   # pose excursions around home [m, rad]


def random_poses(rng, n, model):
    return model.home + rng.uniform(-1.0, 1.0, (n, 6)) * SPAN


def random_body(rng):
    """A physically consistent rigid body: box-like principal moments, random axes, COM anywhere nearby."""
    m = rng.uniform(0.5, 6.0)
    d = rng.uniform(0.05, 0.6, 3)
    pm = m / 12 * np.array([d[1]**2 + d[2]**2, d[0]**2 + d[2]**2, d[0]**2 + d[1]**2])
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return m, rng.uniform(-0.15, 0.15, 3), Q @ np.diag(pm) @ Q.T


# ------------------------------------------------------------------------------- kinematics

def test_forward_kinematics_inverts_inverse_kinematics(rng):
    model = Hexapod.example()
    pose = random_poses(rng, 300, model)
    rho = inverse_kinematics(model.geometry, pose)
    np.testing.assert_allclose(forward_kinematics(model.geometry, rho), pose, atol=1e-11)
    # the legs have their length: |p + R P_i - B_i| written out
    p, R = pose_to_frame(pose[:1])
    L = p[0] + model.geometry.platform_points @ R[0].T - model.geometry.base_points
    np.testing.assert_allclose(np.linalg.norm(L, axis=1), rho[0], rtol=1e-14)


def test_forward_kinematics_follows_a_recording_seeded_by_the_previous_sample():
    """A 20 s motion sampled at 1 kHz with large rotations: every sample converges on the branch the
    motion is on (continuity from the first sample), not on another assembly."""
    model = Hexapod.example()
    t = np.arange(0.0, 20.0, 1e-3)
    pose = model.home + np.column_stack([0.08 * np.sin(0.3 * t), 0.08 * np.cos(0.41 * t), 0.06 * np.sin(0.23 * t),
                                         0.3 * np.sin(0.5 * t), 0.3 * np.sin(0.37 * t + 1), 0.5 * np.sin(0.29 * t)])
    rho = inverse_kinematics(model.geometry, pose)
    np.testing.assert_allclose(model.poses(rho), pose, atol=1e-10)


def test_forward_kinematics_errors_name_the_sample():
    model = Hexapod.example()
    rho = inverse_kinematics(model.geometry, np.repeat(model.home[None], 5, axis=0))
    rho[3] = [0.1, 0.1, 0.1, 2.0, 2.0, 2.0]          # legs that cannot reach a common platform
    with pytest.raises(KinematicsError, match=r"sample 3: leg lengths .* do not assemble") as err:
        forward_kinematics(model.geometry, rho)
    assert isinstance(err.value, InputDataError) and err.value.sample == 3
    with pytest.raises(KinematicsError, match="do not assemble"):
        model.regressor(rho, np.zeros_like(rho), np.zeros_like(rho))


def test_singular_configuration_is_reported():
    """Coplanar base and platform joints at z = 0: the platform can move up without changing any leg
    length to first order (J's z column vanishes), a singular configuration."""
    geo = {**EXAMPLE_GEOMETRY, "home_pose": [0.0, 0.0, 1e-9, 0.0, 0.0, 0.0]}
    model = Hexapod(geo)
    rho = inverse_kinematics(model.geometry, [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])
    with pytest.raises(KinematicsError, match="singular"):
        forward_kinematics(model.geometry, rho, home_pose=[0.0, 0.0, 0.0, 0.0, 0.0, 0.0])


def test_jacobian_and_rates_match_finite_differences(rng):
    """ρ̇ = J [v; ω] against differences of the inverse kinematics along a twist, and the platform
    twist/acceleration of a leg motion against differences of the forward kinematics."""
    model = Hexapod.example()
    geo = model.geometry
    pose = random_poses(rng, 5, model)
    J = kinematic_jacobian(geo, pose)
    twist = rng.normal(size=(5, 6)) * 0.3
    h = 1e-6
    p, R = pose_to_frame(pose)
    w = twist[:, 3:]                 # move along the twist: p + s v, R <- exp(s [w]) R
    th = np.linalg.norm(w, axis=1, keepdims=True)

    def moved(s):
        k = w / th
        K = np.zeros((5, 3, 3))
        K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -k[:, 2], k[:, 1], -k[:, 0]
        K[:, 1, 0], K[:, 2, 0], K[:, 2, 1] = k[:, 2], -k[:, 1], k[:, 0]
        a = (s * th)[:, :, None]
        Rs = (np.eye(3) + np.sin(a) * K + (1 - np.cos(a)) * K @ K) @ R
        Ps = p + s * twist[:, :3]
        L = Ps[:, None] + np.einsum("nij,kj->nki", Rs, geo.platform_points) - geo.base_points
        return np.linalg.norm(L, axis=2)

    fd = (moved(h) - moved(-h)) / (2 * h)
    np.testing.assert_allclose(np.einsum("nij,nj->ni", J, twist), fd, atol=1e-8)
    # a smooth leg motion: pose rates from platform_motion vs differences of forward kinematics
    t = np.linspace(0.0, 1.0, 7)

    def legs(tt):
        return inverse_kinematics(geo, model.home + 0.5 * SPAN * np.sin(np.outer(tt, [1.0, 1.3, 0.7, 1.1, 0.9, 1.7])))

    hh = 1e-4
    rho = legs(t)
    rd = (legs(t + hh) - legs(t - hh)) / (2 * hh)
    rdd = (legs(t + hh) - 2 * rho + legs(t - hh)) / hh**2
    pose_t, u, du = platform_motion(geo, rho, rd, rdd)
    pos = lambda tt: model.home[:3] + 0.5 * SPAN[:3] * np.sin(np.outer(tt, [1.0, 1.3, 0.7]))  # noqa: E731
    np.testing.assert_allclose(u[:, :3], (pos(t + hh) - pos(t - hh)) / (2 * hh), atol=1e-7)
    np.testing.assert_allclose(du[:, :3], (pos(t + hh) - 2 * pos(t) + pos(t - hh)) / hh**2, atol=2e-5)


# ------------------------------------------------------------------------------- dynamics

def _mujoco_case(rng, identical_legs, u_axes=False):
    from ._hexapod_mujoco import HexapodReference

    cfg = dict(EXAMPLE_GEOMETRY, identical_legs=identical_legs)
    if u_axes:   # tilted U axes: the spins of cylinder and rod are not the default ones
        a = np.cross([0.0, 0.0, 1.0], cfg["base_points"]) + rng.normal(size=(6, 3)) * 0.3
        v = np.cross([0.0, 0.0, 1.0], cfg["platform_points"]) + rng.normal(size=(6, 3)) * 0.3
        cfg.update(base_u_axes=(a / np.linalg.norm(a, axis=1)[:, None]).tolist(),
                   platform_u_axes=(v / np.linalg.norm(v, axis=1)[:, None]).tolist())
    model = Hexapod(cfg)
    geo = model.geometry
    if identical_legs:
        cyl, rod = random_body(rng), random_body(rng)
        legs = [{"cylinder": cyl, "rod": rod}] * 6
        bodies = [cyl, rod]
    else:
        legs = [{"cylinder": random_body(rng), "rod": random_body(rng)} for _ in range(6)]
        bodies = [leg["cylinder"] for leg in legs] + [leg["rod"] for leg in legs]
    plat = random_body(rng)
    params = np.concatenate([body_parameters(*b) for b in bodies + [plat]])
    ref = HexapodReference(geo.base_points, geo.platform_points, geo.base_u_axes, geo.platform_u_axes, model.home,
                           legs, plat, gravity=G)
    return model, params, ref


@pytest.mark.parametrize("identical_legs, u_axes", [(True, False), (False, False), (False, True)])
def test_regressor_times_parameters_equals_mujoco(rng, identical_legs, u_axes):
    """τ = Y(ρ, ρ̇, ρ̈) p equals the actuator forces MuJoCo's multibody engine gives for the same motion
    (open tree + weld constraints solved by Lagrange multipliers), to 1e-9 relative: bodies with full
    inertia tensors and centres of mass off the leg axis, six different legs, tilted U axes."""
    model, params, ref = _mujoco_case(rng, identical_legs, u_axes)
    for pose in random_poses(rng, 6, model):
        rd, rdd = rng.normal(size=6) * 0.3, rng.normal(size=6) * 2.0
        tau_ref, rho_ref, closure = ref.forces(pose, rd, rdd)
        assert closure < 1e-12                                  # the reference's joint angles close the loops
        rho = inverse_kinematics(model.geometry, pose[None])
        np.testing.assert_allclose(rho[0], rho_ref, atol=1e-12)
        tau = model.regressor(rho, rd[None], rdd[None])[0] @ params
        np.testing.assert_allclose(tau, tau_ref, rtol=0, atol=1e-9 * np.abs(tau_ref).max())


def test_payload_rides_on_the_platform(rng):
    """A payload (mass at payload_com, inertia about the platform z axis) = the same mass added to the
    platform body: offset == the platform columns times the payload's standard parameters."""
    model = Hexapod({**EXAMPLE_GEOMETRY, "payload": {"mass": 7.0, "inertia": 0.4}, "payload_com": [0.02, 0.0, 0.1]})
    q, qd, qdd = model.sample_states(rng, 20)
    pi = body_parameters(7.0, [0.02, 0.0, 0.1], np.diag([0.0, 0.0, 0.4]))
    np.testing.assert_allclose(model.offset(q, qd, qdd), model.regressor(q, qd, qdd)[..., 20:30] @ pi, rtol=1e-12,
                               atol=1e-12)


def test_energy_balance_along_a_motion():
    """Work done by the actuator forces = change of MuJoCo's kinetic + potential energy, along a smooth
    leg motion (Simpson's rule on 4001 samples): the velocity-product terms are right, not just M and g."""
    pytest.importorskip("mujoco")
    rng = np.random.default_rng(7)
    model, params, ref = _mujoco_case(rng, identical_legs=False)
    import mujoco

    T, n = 2.0, 4001
    t = np.linspace(0.0, T, n)
    f = np.array([0.6, 0.9, 1.1, 0.7, 1.3, 0.8])
    home = inverse_kinematics(model.geometry, model.home[None])[0]
    rho = home + 0.04 * np.sin(2 * np.pi * f * t[:, None])
    rd = 0.04 * 2 * np.pi * f * np.cos(2 * np.pi * f * t[:, None])
    rdd = -0.04 * (2 * np.pi * f) ** 2 * np.sin(2 * np.pi * f * t[:, None])
    tau = model.torque(params, rho, rd, rdd)
    power = np.sum(tau * rd, axis=1)
    work = (T / (n - 1)) / 3 * (power[0] + power[-1] + 4 * power[1:-1:2].sum() + 2 * power[2:-1:2].sum())

    def energy(k):
        pose = model.poses(rho[k:k + 1])[0]
        m, d = ref.model, ref.data
        m.opt.enableflags |= mujoco.mjtEnableBit.mjENBL_ENERGY
        ref.forces(pose, rd[k], rdd[k])                        # sets qpos, qvel of the closed tree
        mujoco.mj_forward(m, d)
        return d.energy[0] + d.energy[1]

    dE = energy(n - 1) - energy(0)
    assert abs(work - dE) < 1e-8 * np.abs(power).max() * T
    assert abs(work) > 1.0                                   # a motion that does work


# ------------------------------------------------------------------------------- base parameters

def test_contract_bodies_base_parameters_group_like_the_paper():
    """Structural base parameters of the contract's bodies (full inertia tensors, legs identical):
    the rods' mass groups with the platform's (rod.m + 1/6 platform.m: Table 3's m_p/6), and the
    platform's inertia absorbs the six point masses at its joints (platform.Ixx - r_p²/2 platform.m)."""
    model = Hexapod.example()
    base = structural_base(Plant(model))
    expr = base.expressions()
    assert base.n_base == 27 + 12                             # 27 rigid-body + 2 friction per leg
    assert "rod.m + 1/6*platform.m" in expr
    r2 = float(np.mean(np.sum(np.asarray(EXAMPLE_GEOMETRY["platform_points"])[:, :2] ** 2, axis=1)))
    assert f"platform.Ixx - {r2 / 2:g}*platform.m" in expr and f"platform.Izz - {r2:g}*platform.m" in expr
    assert "cylinder.m" in [base.names[j] for j in base.dependent]   # it turns about B_i: no force works on it


# Table 1 of Ni et al. (2025): 29 standard parameters of one branch (four links axisymmetric about the
# branch axis) and the platform. Link 1: the rod after the R joint (platform side, spins with the platform
# U); link 2: the piston (platform side, spins with the cylinder); links 3, 4: base side (Table 2's a_b,
# b_b terms), turning with the cylinder about B_i. Each maps onto the contract's bodies: an axisymmetric
# link of mass m with its COM at l_c on the axis is Izz = I_a, Ixx = Iyy = I_n + m l_c², mz = m l_c, m.
_TABLE1 = [
    ("I_a1", {"rod.Izz": 1}), ("I_n1", {"rod.Ixx": 1, "rod.Iyy": 1}),
    ("I_a2+I_a3+I_a4", {"cylinder.Izz": 1}), ("I_n2+I_n3+I_n4", {"cylinder.Ixx": 1, "cylinder.Iyy": 1}),
    ("m1", {"rod.m": 1}), ("m1*lc1", {"rod.mz": 1}), ("m1*lc1^2", {"rod.Ixx": 1, "rod.Iyy": 1}),
    ("m2", {"rod.m": 1}), ("m2*lc2", {"rod.mz": 1}), ("m3", {"cylinder.m": 1}), ("m3*lc3", {"cylinder.mz": 1}),
    ("m4*lc4", {"cylinder.mz": 1}), ("m2*lc2^2+m3*lc3^2+m4*lc4^2", {"cylinder.Ixx": 1, "cylinder.Iyy": 1}),
    ("m_p", {"platform.m": 1}),
    ("m_p*rcx", {"platform.mx": 1}), ("m_p*rcy", {"platform.my": 1}), ("m_p*rcz", {"platform.mz": 1}),
    ("Ic11", {"platform.Ixx": 1}), ("Ic12", {"platform.Ixy": 1}), ("Ic13", {"platform.Ixz": 1}),
    ("Ic22", {"platform.Iyy": 1}), ("Ic23", {"platform.Iyz": 1}), ("Ic33", {"platform.Izz": 1}),
    # m_p r rᵀ: the parallel-axis part of the inertia about the platform origin, m(|r|² E − r rᵀ)
    ("mrr_xx", {"platform.Iyy": 1, "platform.Izz": 1}), ("mrr_xy", {"platform.Ixy": -1}),
    ("mrr_xz", {"platform.Ixz": -1}), ("mrr_yy", {"platform.Ixx": 1, "platform.Izz": 1}),
    ("mrr_yz", {"platform.Iyz": -1}), ("mrr_zz", {"platform.Ixx": 1, "platform.Iyy": 1}),
]


def test_paper_table1_parameters_reduce_like_table3(rng):
    """Regenerate the paper's regressor (Table 1's 29 standard parameters) from the contract's bodies and
    run the QR reduction (identification.md §9).

    What reproduces Table 3: I_a1; I_a2+I_a3+I_a4; every normal inertia with its m l_c² in one group
    (item 3); m1 + m2 + m_p/6 (item 4); m1 l_c1 + m2 l_c2 (5); m4 l_c4 (8); m_p r_c (9-11); the platform
    inertia combinations with the point-mass terms m_p r_p²/2 (12, 15) — and m_p r_p² for I_c33 (17: the
    zz moment of six masses on a circle of radius r_p is Σ m (x² + y²), twice the xx one; the seed's
    "r_p²/2" there is a misprint).

    What does not: items 6 and 7 (m3, m3 l_c3). A rigid link of a U-P-R-U branch either turns about
    B_i with the cylinder (then no force does work on its mass, and m3 l_c3 adds to m4 l_c4) or slides
    with the rod (then m3, m3 l_c3 add to items 4 and 5): no link moves in a third way, so the rank is
    15, not the printed 17.
    """
    model = Hexapod({**EXAMPLE_GEOMETRY})
    names = model.param_names
    A = np.zeros((model.n_params, len(_TABLE1)))
    for k, (_, cols) in enumerate(_TABLE1):
        for name, c in cols.items():
            A[names.index(name), k] = c
    assert A.shape == (30, 29)
    q, qd, qdd = model.sample_states(rng, 300)
    W = (model.regressor(q, qd, qdd) @ A).reshape(-1, 29)
    table1 = [n for n, _ in _TABLE1]
    lead = ["I_a1", "I_a2+I_a3+I_a4", "I_n1", "m1", "m1*lc1", "m3", "m3*lc3", "m4*lc4", "m_p*rcx", "m_p*rcy",
            "m_p*rcz", "Ic11", "Ic12", "Ic13", "Ic22", "Ic23", "Ic33"]   # Table 3's items 1-17, in order
    order = [table1.index(n) for n in lead] + [k for k, n in enumerate(table1) if n not in lead]
    base = find_base_parameters(W, table1, order)
    assert base.n_base == 15 == np.linalg.matrix_rank(W)
    r2 = float(np.mean(np.sum(np.asarray(EXAMPLE_GEOMETRY["platform_points"])[:, :2] ** 2, axis=1)))
    assert base.expressions() == [
        "I_a1",                                                                        # Table 3 item 1
        "I_a2+I_a3+I_a4",                                                              # 2
        "I_n1 + I_n2+I_n3+I_n4 + m1*lc1^2 + m2*lc2^2+m3*lc3^2+m4*lc4^2",               # 3
        "m1 + m2 + 1/6*m_p",                                                           # 4
        "m1*lc1 + m2*lc2",                                                             # 5
        "m3*lc3 + m4*lc4",                                                             # 7 + 8 (6: none)
        "m_p*rcx", "m_p*rcy", "m_p*rcz",                                               # 9-11
        f"Ic11 - {r2 / 2:g}*m_p + mrr_yy + mrr_zz", "Ic12 - mrr_xy", "Ic13 - mrr_xz",  # 12-14
        f"Ic22 - {r2 / 2:g}*m_p + mrr_xx + mrr_zz", "Ic23 - mrr_yz",                   # 15-16
        f"Ic33 - {r2:g}*m_p + mrr_xx + mrr_yy",                                        # 17
    ]
    assert "m3" in [base.names[j] for j in base.dependent] and not np.any(W[:, table1.index("m3")])


def test_no_reading_of_the_paper_branch_reaches_rank_17(rng):
    """Whatever the four links are — each either slides with the rod (its mass and first moment act at
    P_i) or turns about B_i with the cylinder, link 1 spinning with the rod or the cylinder, links 2-4
    sharing one spin (their axial inertias are one Table 1 parameter) — the 29 parameters have rank 15 at
    most: Table 3's 17 is not reachable by rigid U-P-R-U kinematics."""
    import itertools

    model = Hexapod({**EXAMPLE_GEOMETRY})
    names = model.param_names
    q, qd, qdd = model.sample_states(rng, 200)
    Y = model.regressor(q, qd, qdd)

    def column(terms):
        v = np.zeros(model.n_params)
        for name, c in terms.items():
            v[names.index(name)] += c
        return v

    ranks = []
    for spin1, spin234 in itertools.product(("rod", "cylinder"), repeat=2):
        for moves in itertools.product(("rod", "cylinder"), repeat=4):
            cols = [{f"{spin1}.Izz": 1}, {f"{spin1}.Ixx": 1, f"{spin1}.Iyy": 1}, {f"{spin234}.Izz": 1},
                    {f"{spin234}.Ixx": 1, f"{spin234}.Iyy": 1},
                    {f"{moves[0]}.m": 1}, {f"{moves[0]}.mz": 1}, {f"{moves[0]}.Ixx": 1, f"{moves[0]}.Iyy": 1},
                    {f"{moves[1]}.m": 1}, {f"{moves[1]}.mz": 1}, {f"{moves[2]}.m": 1}, {f"{moves[2]}.mz": 1},
                    {f"{moves[3]}.mz": 1}, {"cylinder.Ixx": 1, "cylinder.Iyy": 1}]
            cols += [dict(cols_) for _, cols_ in _TABLE1[13:]]
            A = np.column_stack([column(c) for c in cols])
            ranks.append(np.linalg.matrix_rank((Y @ A).reshape(-1, A.shape[1])))
    assert len(ranks) == 64 and max(ranks) == 15


# ------------------------------------------------------------------------------- configuration

def test_configuration_errors_are_clear():
    with pytest.raises(ConfigError, match="needs the geometry key"):
        make_model("6upru", {})
    with pytest.raises(ConfigError, match="6 rows of 3"):
        make_model("6upru", {**EXAMPLE_GEOMETRY, "base_points": [[0, 0, 0]] * 5})
    with pytest.raises(ConfigError, match="unknown configuration key"):
        make_model("6upru", {**EXAMPLE_GEOMETRY, "base_pionts": []})
    with pytest.raises(ConfigError, match="identical_legs"):
        make_model("6upru", {**EXAMPLE_GEOMETRY, "identical_legs": "no"})


def test_configuration_check_reports_u_joint_angles_and_conditioning():
    model = Hexapod.example()
    home = inverse_kinematics(model.geometry, model.home[None])
    tilted = inverse_kinematics(model.geometry, [model.home + [0.25, 0.0, 0.0, 0.0, 0.0, 0.0]])
    chk = model.configuration_check(np.vstack([home, tilted, [[0.1] * 3 + [2.0] * 3]]))
    assert chk.values.shape == (3, 13) and len(chk.names) == 13
    np.testing.assert_allclose(chk.values[0, :12], 0.0, atol=1e-7)        # home: every leg on its home direction
    assert chk.values[1, :6].max() > 0.15 and np.isfinite(chk.values[1]).all()
    assert np.isinf(chk.values[2]).all() and (chk.margins()[2] == -np.inf).all()   # does not assemble
