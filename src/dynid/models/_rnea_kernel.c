/*
 * Compiled kernel of the batched Newton-Euler regressor (dynid.models._rnea).
 *
 * The same algorithm as the numpy path of _rnea.py, one sample at a time and with the structure
 * of the matrices used: per body, the blocks E and B of the transform X^T = [[E, B], [0, E]] from
 * the basis [1, s, 1-c, ...] (only the basis functions the joint needs), the rows
 * [V, A, S_0 .. S_{i-1}] moved into the body, the spatial force map Phi (6 x 10) written out from
 * the body's velocity and acceleration, and the regressor blocks S_j^(i)T Phi_i (the 39 structural
 * non-zeros of Phi). Every entry of the output is written (the
 * blocks below the block diagonal with zero), so the output may be uninitialised.
 *
 * dynid_chain_torque is the torque alone, by the recursive Newton-Euler algorithm (chain_rnea).
 *
 * It is a plain C function called through ctypes (which releases the GIL, so the caller splits
 * the samples over threads); the module init only makes the shared object importable so that
 * setuptools builds it as an ordinary optional extension. If it is missing, dynid uses the numpy
 * path, which gives the same numbers.
 */
#include <Python.h>
#include <math.h>
#include <string.h>

#define MAXJ 32

/* ---- the forward pass, shared by the regressor and the torque ---- */

/* X^T = [[E, B], [0, E]] of body i at joint position qi (E = X^T's rotation block): only E and B, the 18
 * entries XT = [E | B] (row-major 3x3 each), from the basis [1, s, 1-c, s^2, s(1-c), (1-c)^2] (rotary) or
 * [1, q] (linear) and the joint's nonzero basis matrices. */
static void body_transform(const double *Ti, const int *mask, int rotary, double qi, double *XT) {
    double basis[6];
    basis[0] = 1.0;
    if (rotary) {
        const double s = sin(qi), c1 = 1.0 - cos(qi);
        basis[1] = s; basis[2] = c1; basis[3] = s * s; basis[4] = s * c1; basis[5] = c1 * c1;
    } else {
        basis[1] = qi; basis[2] = basis[3] = basis[4] = basis[5] = 0.0;
    }
    for (int e = 0; e < 18; ++e) XT[e] = Ti[e];
    for (int b = 1; b < 6; ++b) {
        if (!mask[b]) continue;
        const double w = basis[b];
        const double *Tb = Ti + 18 * b;
        for (int e = 0; e < 18; ++e) XT[e] += w * Tb[e];
    }
}

/* y = X x: the motion vector x (angular; linear) of the parent moved into the body, X = [[E^T, 0], [B^T, E^T]]
 * (y must not be x). */
static void motion_into(const double *XT, const double *x, double *y) {
    const double *E = XT, *B = XT + 9;
    for (int c = 0; c < 3; ++c) {
        y[c] = x[0] * E[c] + x[1] * E[3 + c] + x[2] * E[6 + c];
        y[3 + c] = x[0] * B[c] + x[1] * B[3 + c] + x[2] * B[6 + c] + x[3] * E[c] + x[4] * E[3 + c] + x[5] * E[6 + c];
    }
}

/* The first body's V = 0 and A = (0, -g) in its frame (the base at rest, gravity as an acceleration). */
static void base_motion(const double *XT, const double *gravity, double *V, double *A) {
    for (int c = 0; c < 3; ++c) {
        V[c] = V[3 + c] = A[c] = 0.0;
        A[3 + c] = -(gravity[0] * XT[c] + gravity[1] * XT[3 + c] + gravity[2] * XT[6 + c]);
    }
}

/* The joint's own motion added to the body's V and A (moved in from the parent): V += S qd, A += S qdd, and for
 * every body but the first A += V x S qd = -(S x V) qd (C: crm(S)^T, NULL for the first). */
static void joint_motion(double *V, double *A, const double *si, const double *C, double qd, double qdd) {
    for (int c = 0; c < 6; ++c) { V[c] += qd * si[c]; A[c] += qdd * si[c]; }
    if (C == NULL) return;
    double t[6];
    for (int c = 0; c < 6; ++c) {
        t[c] = V[0] * C[c] + V[1] * C[6 + c] + V[2] * C[12 + c] + V[3] * C[18 + c] + V[4] * C[24 + c] + V[5] * C[30 + c];
        A[c] -= qd * t[c];
    }
}

/* Phi (6 x 10, row-major): the spatial force [moment about the origin; force] of the body's unit parameters
 * [Ixx, Ixy, Ixz, Iyy, Iyz, Izz, mx, my, mz, m] at its V and A, written out from
 * n = I dw + w x (I w) + h x a_c,  F = m a_c + dw x h + w x (w x h)   (a_c = a + w x v).
 * Its structure: moment rows (0-2) reach the inertia and first-moment columns (0-8), force rows (3-5) the
 * first-moment and mass columns (6-9); the force rows' columns 0-5 are not written (they are zero). */
static void force_map(const double *V, const double *A, double *phi) {
    const double wx = V[0], wy = V[1], wz = V[2], vx = V[3], vy = V[4], vz = V[5];
    const double dx = A[0], dy = A[1], dz = A[2];
    const double ax = A[3] + (wy * vz - wz * vy);
    const double ay = A[4] + (wz * vx - wx * vz);
    const double az = A[5] + (wx * vy - wy * vx);
    const double xx = wx * wx, xy = wx * wy, xz = wx * wz, yy = wy * wy, yz = wy * wz, zz = wz * wz;
    double *m0 = phi, *m1 = phi + 10, *m2 = phi + 20, *f0 = phi + 30, *f1 = phi + 40, *f2 = phi + 50;
    m0[0] = dx;        m1[0] = xz;        m2[0] = -xy;            /* Ixx */
    m0[1] = dy - xz;   m1[1] = dx + yz;   m2[1] = xx - yy;        /* Ixy */
    m0[2] = dz + xy;   m1[2] = zz - xx;   m2[2] = dx - yz;        /* Ixz */
    m0[3] = -yz;       m1[3] = dy;        m2[3] = xy;             /* Iyy */
    m0[4] = yy - zz;   m1[4] = dz - xy;   m2[4] = dy + xz;        /* Iyz */
    m0[5] = yz;        m1[5] = -xz;       m2[5] = dz;             /* Izz */
    m0[6] = 0.0;       m1[6] = -az;       m2[6] = ay;             /* mx: e_x x a_c */
    m0[7] = az;        m1[7] = 0.0;       m2[7] = -ax;            /* my */
    m0[8] = -ay;       m1[8] = ax;        m2[8] = 0.0;            /* mz */
    m0[9] = m1[9] = m2[9] = 0.0;                                  /* m */
    f0[6] = -(yy + zz); f1[6] = dz + xy;   f2[6] = xz - dy;       /* mx: dw x e_x + W e_x - tr(W) e_x */
    f0[7] = xy - dz;   f1[7] = -(xx + zz); f2[7] = dx + yz;       /* my */
    f0[8] = dy + xz;   f1[8] = yz - dx;   f2[8] = -(xx + yy);     /* mz */
    f0[9] = ax;        f1[9] = ay;        f2[9] = az;             /* m */
}

/* ---- the regressor ---- */

/* The regressor of N samples into out (N, n, 10 n): per body, V, A and the screws of joints 0..i-1 moved into
 * it, and the blocks S_j^(i)T Phi_i of the rows j <= i. */
static int chain_kernel(
    int n,                    /* joints = bodies */
    const int *rotary,        /* (n) 1 rotary, 0 linear */
    const double *T,          /* (n, 6, 18) blocks [E, B] of X^T (row-major 3x3 each) per basis function */
    const int *rowmask,       /* (n, 6) 1 where the basis function has a non-zero matrix */
    const double *screw,      /* (n, 6) joint screw in body coordinates */
    const double *crmT,       /* (n, 36) crm(screw)^T */
    const double *gravity,    /* (3) */
    long N, const double *q, const double *qd, const double *qdd,      /* (N, n) each */
    double *out)              /* (N, n, 10 n) */
{
    if (n > MAXJ || n < 1) return -1;
    const int P = 10 * n;
    double rows[2][MAXJ + 2][6];
    double XT[18], phi[60];
    for (long k = 0; k < N; ++k) {
        const double *qk = q + k * n, *qdk = qd + k * n, *qddk = qdd + k * n;
        double *Y = out + k * (long)n * P;
        memset(Y, 0, sizeof(double) * (size_t)n * (size_t)P);
        int cur = 0;
        for (int i = 0; i < n; ++i) {
            double (*R)[6] = rows[cur];
            double (*Rp)[6] = rows[1 - cur];
            const double *si = screw + 6 * i;
            body_transform(T + (long)i * 108, rowmask + 6 * i, rotary[i], qk[i], XT);
            if (i == 0)
                base_motion(XT, gravity, R[0], R[1]);
            else                                /* V, A and the screws of joints 0..i-1 into body i */
                for (int r = 0; r < i + 2; ++r) motion_into(XT, Rp[r], R[r]);
            joint_motion(R[0], R[1], si, i > 0 ? crmT + 36 * i : NULL, qdk[i], qddk[i]);
            for (int c = 0; c < 6; ++c) R[2 + i][c] = si[c];
            force_map(R[0], R[1], phi);
            for (int j = 0; j <= i; ++j) {      /* (Phi's structure: see force_map) */
                const double *S = R[2 + j];
                double *y = Y + (long)j * P + 10 * i;
                for (int p = 0; p < 9; ++p)
                    y[p] = S[0] * phi[p] + S[1] * phi[10 + p] + S[2] * phi[20 + p];
                y[9] = 0.0;
                for (int p = 6; p < 10; ++p)
                    y[p] += S[3] * phi[30 + p] + S[4] * phi[40 + p] + S[5] * phi[50 + p];
            }
            cur = 1 - cur;
        }
    }
    return 0;
}

int dynid_chain_regressor(int n, const int *rotary, const double *T, const int *rowmask, const double *screw,
                          const double *crmT, const double *gravity, long N, const double *q, const double *qd,
                          const double *qdd, double *out) {
    return chain_kernel(n, rotary, T, rowmask, screw, crmT, gravity, N, q, qd, qdd, out);
}

/* ---- the torque ---- */

/* The torque of N samples for the parameters theta (10 n) into tau (N, n) by recursive Newton-Euler: the
 * forward pass for V and A only (not the earlier joints' screws), each body's spatial force
 * f_i = Phi_i theta_i, then the backward pass F_i = f_i + X_{i+1}^T F_{i+1}, tau_i = S_i . F_i. The same torque
 * as the regressor times theta (tau_j = sum_{i>=j} S_j^(i) . Phi_i theta_i, the screw moved forward instead of
 * the force back): equal to round-off, in O(n) per sample instead of O(n^2). */
static int chain_rnea(
    int n, const int *rotary, const double *T, const int *rowmask, const double *screw, const double *crmT,
    const double *gravity, long N, const double *q, const double *qd, const double *qdd, const double *theta,
    double *tau)
{
    if (n > MAXJ || n < 1) return -1;
    double XTs[MAXJ][18], f[MAXJ][6], phi[60];
    for (long k = 0; k < N; ++k) {
        const double *qk = q + k * n, *qdk = qd + k * n, *qddk = qdd + k * n;
        double V[6], A[6];
        for (int i = 0; i < n; ++i) {
            body_transform(T + (long)i * 108, rowmask + 6 * i, rotary[i], qk[i], XTs[i]);
            if (i == 0) {
                base_motion(XTs[i], gravity, V, A);
            } else {
                double v[6], a[6];
                motion_into(XTs[i], V, v);
                motion_into(XTs[i], A, a);
                memcpy(V, v, sizeof V);
                memcpy(A, a, sizeof A);
            }
            joint_motion(V, A, screw + 6 * i, i > 0 ? crmT + 36 * i : NULL, qdk[i], qddk[i]);
            force_map(V, A, phi);               /* f_i = Phi_i theta_i (its structure: see force_map) */
            const double *th = theta + 10 * i;
            for (int r = 0; r < 3; ++r) {
                double s = 0.0;
                for (int p = 0; p < 9; ++p) s += phi[10 * r + p] * th[p];
                f[i][r] = s;
            }
            for (int r = 3; r < 6; ++r) {
                double s = 0.0;
                for (int p = 6; p < 10; ++p) s += phi[10 * r + p] * th[p];
                f[i][r] = s;
            }
        }
        /* backward: F_i = f_i + X_{i+1}^T F_{i+1} (force transform [[E, B], [0, E]]), tau_i = S_i . F_i */
        double F[6];
        for (int c = 0; c < 6; ++c) F[c] = f[n - 1][c];
        for (int i = n - 1; i >= 0; --i) {
            const double *si = screw + 6 * i;
            tau[k * n + i] = si[0] * F[0] + si[1] * F[1] + si[2] * F[2] + si[3] * F[3] + si[4] * F[4] + si[5] * F[5];
            if (i == 0) break;
            const double *E = XTs[i], *B = XTs[i] + 9;
            double G[6];
            for (int r = 0; r < 3; ++r) {
                G[r] = E[3 * r] * F[0] + E[3 * r + 1] * F[1] + E[3 * r + 2] * F[2]
                     + B[3 * r] * F[3] + B[3 * r + 1] * F[4] + B[3 * r + 2] * F[5];
                G[3 + r] = E[3 * r] * F[3] + E[3 * r + 1] * F[4] + E[3 * r + 2] * F[5];
            }
            for (int c = 0; c < 6; ++c) F[c] = f[i - 1][c] + G[c];
        }
    }
    return 0;
}

int dynid_chain_torque(int n, const int *rotary, const double *T, const int *rowmask, const double *screw,
                       const double *crmT, const double *gravity, long N, const double *q, const double *qd,
                       const double *qdd, const double *theta, double *tau) {
    return chain_rnea(n, rotary, T, rowmask, screw, crmT, gravity, N, q, qd, qdd, theta, tau);
}

static struct PyModuleDef kernel_module = {
    PyModuleDef_HEAD_INIT, "_rnea_kernel",
    "Compiled Newton-Euler regressor kernel, called through ctypes (see dynid.models._rnea).", -1, NULL,
};

PyMODINIT_FUNC PyInit__rnea_kernel(void) { return PyModule_Create(&kernel_module); }
