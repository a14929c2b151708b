"""MuJoCo reference for the 6-UPRU hexapod (test helper, not library code; nothing here imports dynid).

The mechanism is built as a tree and closed by hand (Lagrange multipliers):

- every leg is a chain from the ground: the cylinder (two hinges: the base U's axis ``a``, then the
  cylinder's own x axis), the rod (a slide along the leg, then a hinge about it: the R joint), then the
  platform U (a hinge about the rod's x axis, then one about the platform-fixed axis ``v``);
- leg 1's last body is the platform itself; legs 2..6 end in a stub body (1e-12 kg) whose frame is the
  platform's, so closing the chain means: stub k and the platform have the same pose.

For a platform pose, the joint angles come from rotation matrices of the contract's body frames
(spec/interfaces.md §4) and are checked by MuJoCo's own forward kinematics. Joint velocities and
accelerations solve ``[J_c; S] qd = [0; rho_d]`` and ``[J_c; S] qdd = [-Jdot_c qd; rho_dd]`` with the
weld Jacobians ``J_c`` (``mj_jac``, ``mj_jacDot``) and ``S`` selecting the six slide joints. Then
``mj_inverse`` gives ``M qdd + bias`` of the open tree, and ``Sᵀ tau + J_cᵀ lambda = qfrc_inverse``
gives the actuator forces ``tau``.
"""

from __future__ import annotations

import numpy as np

mujoco = __import__("pytest").importorskip("mujoco")

G = 9.80665


def rot(axis, angle):
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def signed_angle(u, v, axis):
    """Angle turning u into v about axis (both perpendicular to it)."""
    return float(np.arctan2(np.dot(axis, np.cross(u, v)), np.dot(u, v)))


def unit(v):
    return v / np.linalg.norm(v)


def platform_frame(pose):
    x, y, z, r, p, w = pose
    return np.array([x, y, z]), rot([0, 0, 1], w) @ rot([0, 1, 0], p) @ rot([1, 0, 0], r)


def quat(R):
    q = np.empty(4)
    mujoco.mju_mat2Quat(q, np.asarray(R, float).ravel())
    return q


def _fmt(v):
    return " ".join(repr(float(x)) for x in np.ravel(v))


class HexapodReference:
    """MuJoCo model of a hexapod from its geometry and body data.

    bodies: per leg ``{"cylinder": (mass, com (3,), inertia (3, 3) about the COM), "rod": (...)}`` and
    ``platform``: the same triple, each in the body's own frame (spec/interfaces.md §4).
    """

    def __init__(self, B, P, a, v, home, legs, platform, gravity=G):
        self.B, self.P, self.a, self.v = (np.asarray(x, float) for x in (B, P, a, v))
        self.home = np.asarray(home, float)
        p0, R0 = platform_frame(self.home)
        self.R0, self.p0 = R0, p0
        self.frames0 = [self.leg_frames(k, p0, R0) for k in range(6)]
        parts = [f'<mujoco><option gravity="0 0 {-gravity!r}"/><worldbody>']
        for k in range(6):
            Rc, Rr, rho = self.frames0[k]
            psi0 = signed_angle(Rc[:, 0], Rr[:, 0], Rc[:, 2])
            a_l = Rc.T @ self.a[k]
            Rstub0 = Rr.T @ R0                              # stub/platform orientation in the rod frame
            ax1 = Rstub0.T @ np.array([1.0, 0, 0])           # rod x axis in the stub frame
            m, c, I = legs[k]["cylinder"]
            parts.append(f'<body name="cyl{k}" pos="{_fmt(self.B[k])}" quat="{_fmt(quat(Rc))}">'
                         f'<joint name="u1_{k}" type="hinge" axis="{_fmt(a_l)}"/>'
                         f'<joint name="u2_{k}" type="hinge" axis="1 0 0"/>' + self._inertial(m, c, I))
            m, c, I = legs[k]["rod"]
            parts.append(f'<body name="rod{k}" pos="0 0 {float(rho)!r}" quat="{_fmt(quat(rot([0, 0, 1], psi0)))}">'
                         f'<joint name="slide{k}" type="slide" axis="0 0 1"/>'
                         f'<joint name="r{k}" type="hinge" axis="0 0 1"/>' + self._inertial(m, c, I))
            # the platform (leg 0) or a stub with the platform's frame: origin p, joints at P_k
            pos = Rr.T @ (p0 - (p0 + R0 @ self.P[k]))
            name = "platform" if k == 0 else f"stub{k}"
            inert = self._inertial(*platform) if k == 0 else self._inertial(1e-12, np.zeros(3), 1e-12 * np.eye(3))
            parts.append(f'<body name="{name}" pos="{_fmt(pos)}" quat="{_fmt(quat(Rstub0))}">'
                         f'<joint name="p1_{k}" type="hinge" pos="{_fmt(self.P[k])}" axis="{_fmt(ax1)}"/>'
                         f'<joint name="p2_{k}" type="hinge" pos="{_fmt(self.P[k])}" axis="{_fmt(self.v[k])}"/>'
                         + inert + "</body></body></body>")
        parts.append("</worldbody></mujoco>")
        self.model = mujoco.MjModel.from_xml_string("".join(parts))
        self.data = mujoco.MjData(self.model)
        m = self.model
        jid = lambda n: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)  # noqa: E731
        self.slide = np.array([m.jnt_dofadr[jid(f"slide{k}")] for k in range(6)])
        self.rho0 = np.array([f[2] for f in self.frames0])

    @staticmethod
    def _inertial(mass, com, I):
        I = np.asarray(I, float)
        full = [I[0, 0], I[1, 1], I[2, 2], I[0, 1], I[0, 2], I[1, 2]]
        return f'<inertial mass="{float(mass)!r}" pos="{_fmt(com)}" fullinertia="{_fmt(full)}"/>'

    def leg_frames(self, k, p, R):
        """Cylinder and rod frames (base frame) and the leg length for a platform pose."""
        Pw = p + R @ self.P[k]
        L = Pw - self.B[k]
        rho = np.linalg.norm(L)
        n = L / rho
        xc = unit(np.cross(self.a[k], n))
        Rc = np.column_stack([xc, np.cross(n, xc), n])
        xr = unit(np.cross(n, R @ self.v[k]))
        Rr = np.column_stack([xr, np.cross(n, xr), n])
        return Rc, Rr, rho

    def joint_positions(self, pose):
        """qpos of the tree for a platform pose (every joint angle from the body frames)."""
        p, R = platform_frame(pose)
        q = np.zeros(self.model.nq)
        m = self.model
        adr = lambda n: m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, n)]  # noqa: E731
        for k in range(6):
            Rc0, Rr0, rho0 = self.frames0[k]
            Rc, Rr, rho = self.leg_frames(k, p, R)
            a_l = Rc0.T @ self.a[k]
            M = Rc0.T @ Rc                                   # = Rot(a_l, t1) Rot(x, t2)
            t1 = signed_angle(np.array([1.0, 0, 0]), M[:, 0], a_l)
            N = rot(a_l, -t1) @ M
            t2 = float(np.arctan2(N[2, 1], N[1, 1]))
            psi0 = signed_angle(Rc0[:, 0], Rr0[:, 0], Rc0[:, 2])
            phi = signed_angle(Rc[:, 0], Rr[:, 0], Rc[:, 2]) - psi0
            Rstub0 = Rr0.T @ self.R0
            ax1 = Rstub0.T @ np.array([1.0, 0, 0])
            Q = Rstub0.T @ Rr.T @ R                          # = Rot(ax1, t4) Rot(v, t5)
            t4 = signed_angle(self.v[k], Q @ self.v[k], ax1)
            Wm = rot(ax1, -t4) @ Q
            t5 = signed_angle(ax1, Wm @ ax1, self.v[k])
            for name, val in ((f"u1_{k}", t1), (f"u2_{k}", t2), (f"slide{k}", rho - rho0), (f"r{k}", phi),
                              (f"p1_{k}", t4), (f"p2_{k}", t5)):
                q[adr(name)] = val
        return q

    def closure_error(self):
        """Largest pose mismatch of the stubs against the platform after mj_kinematics (m or rad)."""
        d, m = self.data, self.model
        bid = lambda n: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, n)  # noqa: E731
        P = bid("platform")
        err = 0.0
        for k in range(1, 6):
            s = bid(f"stub{k}")
            err = max(err, np.abs(d.xpos[s] - d.xpos[P]).max(), np.abs(d.xmat[s] - d.xmat[P]).max())
        return err

    def _constraint(self, dot=False):
        """Weld rows (30, nv): stub k minus platform at the joint point P_k, rotation then translation."""
        m, d = self.model, self.data
        bid = lambda n: mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, n)  # noqa: E731
        P = bid("platform")
        rows = []
        fn = mujoco.mj_jacDot if dot else mujoco.mj_jac
        for k in range(1, 6):
            point = d.xpos[P] + d.xmat[P].reshape(3, 3) @ self.P[k]
            blocks = []
            for b in (bid(f"stub{k}"), P):
                jp, jr = np.zeros((3, m.nv)), np.zeros((3, m.nv))
                fn(m, d, jp, jr, point, b)
                blocks.append(np.vstack([jr, jp]))
            rows.append(blocks[0] - blocks[1])
        return np.vstack(rows)

    def forces(self, pose, rho_d, rho_dd):
        """Actuator forces (6,) for the platform pose and the leg velocities/accelerations; also the
        leg lengths MuJoCo's kinematics give and the closure error."""
        m, d = self.model, self.data
        d.qpos[:] = self.joint_positions(pose)
        d.qvel[:] = 0.0
        mujoco.mj_forward(m, d)                              # kinematics and the Jacobian's quantities
        closure = self.closure_error()
        S = np.zeros((6, m.nv))
        S[np.arange(6), self.slide] = 1.0
        Jc = self._constraint()
        A = np.vstack([Jc, S])
        qd = np.linalg.solve(A, np.concatenate([np.zeros(30), rho_d]))
        d.qvel[:] = qd
        mujoco.mj_forward(m, d)
        Jdot = self._constraint(dot=True)
        qdd = np.linalg.solve(A, np.concatenate([-Jdot @ qd, rho_dd]))
        d.qacc[:] = qdd
        mujoco.mj_inverse(m, d)
        sol = np.linalg.solve(A.T, d.qfrc_inverse.copy())
        rho = self.rho0 + d.qpos[m.jnt_qposadr[[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, f"slide{k}")
                                                 for k in range(6)]]]
        return sol[30:], rho, closure
