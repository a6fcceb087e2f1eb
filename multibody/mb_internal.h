/* knead/multibody internal: spatial-vector helpers shared by the algorithm files and the layout
 * of kn_mb_data.work. Not installed; include only from the multibody sources.
 *
 * Spatial vectors are [angular; linear]. A pose X_pb = {R, p} (body B in parent P) gives
 *   motion P -> B:  w_b = R^T w_p,            v_b = R^T (v_p + w_p x p)
 *   force  B -> P:  f_p = R f_b,              n_p = R n_b + p x f_p
 * which are Featherstone's X and X^* (RBDA §2.8) without forming 6 x 6 matrices. */
#ifndef KNEAD_MULTIBODY_INTERNAL_H
#define KNEAD_MULTIBODY_INTERNAL_H

#include <stddef.h>

#include "multibody/multibody.h"

#define MB_PI 3.14159265358979323846

/*---- work layout ----*/

/* Per-body and per-dof sizes of the algorithm region of d->work (shared by CRBA, RNEA, ABA;
 * these never call one another). ABA is the largest: IA 21 (packed), pA 6, c 6, a 6, Dinv 36
 * per body, U 6 and u 1 per dof (75 and 7 used of 96 and 13: the slack keeps step.c's offsets). kn_mb_step's own buffers follow this region. */
#define MB_ALGO_PER_BODY 96
#define MB_ALGO_PER_DOF 13

static inline size_t mb_algo_size(int nbody, int nv) {
  return (size_t)nbody * MB_ALGO_PER_BODY + (size_t)nv * MB_ALGO_PER_DOF;
}
/* kn_mb_step's buffers: M, A, the factor of M(q'), the cached M(q') and its factor (nv^2 each), thirteen nv
 * vectors, q' and the cache key (nq each) plus its valid flag, G and Y (nc nv each), the Schur
 * complement (nc^2) and two nc vectors. */
static inline size_t mb_step_size(int nq, int nv, int nc) {
  return 5 * (size_t)nv * (size_t)nv + 13 * (size_t)nv + 2 * (size_t)nq + 1 + 2 * (size_t)nc * (size_t)nv +
         (size_t)nc * (size_t)nc + 2 * (size_t)nc;
}

/* The kinematics cache: world-frame quantities that kn_mb_kinematics derives from each body's
 * pose and velocity, so that CRBA and ABA start from them (as MuJoCo's mj_comPos/mj_comVel
 * prepare cinert/cdof/cvel for mj_crb/mj_rne). It sits at the end of d->work, after the
 * algorithm and step regions, so no algorithm's scratch overwrites it. Per body: the compact
 * inertia in world axes about the world origin (m, h = m c_w, I_o: 13) and the velocity in
 * world axes about the world origin (6); per dof the motion subspace likewise (6). */
enum { MB_CI_M = 0, MB_CI_H = 1, MB_CI_I = 4, MB_CI_SIZE = 13 };
static inline size_t mb_cache_size(int nbody, int nv) {
  return (size_t)nbody * (MB_CI_SIZE + 6) + (size_t)nv * 6;
}
typedef struct {
  double* Iw; /* MB_CI_SIZE per body */
  double* Vw; /* 6 per body */
  double* Sw; /* 6 per dof */
} mb_cache;
static inline mb_cache mb_cache_of(const kn_mb_data* d) {
  mb_cache c;
  c.Iw = d->work + d->nwork - mb_cache_size(d->nbody, d->nv);
  c.Vw = c.Iw + (size_t)d->nbody * MB_CI_SIZE;
  c.Sw = c.Vw + (size_t)d->nbody * 6;
  return c;
}

/*---- 3-vectors ----*/

static inline void mb_cross(const double a[3], const double b[3], double c[3]) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}
static inline void mb_rot(const double R[9], const double x[3], double y[3]) {
  y[0] = R[0] * x[0] + R[1] * x[1] + R[2] * x[2];
  y[1] = R[3] * x[0] + R[4] * x[1] + R[5] * x[2];
  y[2] = R[6] * x[0] + R[7] * x[1] + R[8] * x[2];
}
static inline void mb_rotT(const double R[9], const double x[3], double y[3]) {
  y[0] = R[0] * x[0] + R[3] * x[1] + R[6] * x[2];
  y[1] = R[1] * x[0] + R[4] * x[1] + R[7] * x[2];
  y[2] = R[2] * x[0] + R[5] * x[1] + R[8] * x[2];
}

/*---- spatial transforms and products ----*/

/* motion vector from the parent frame to the body frame (vp and vb must not alias) */
static inline void mb_motion_to_body(const kn_pose* X, const double vp[6], double vb[6]) {
  double t[3];
  mb_cross(vp, X->p, t);
  t[0] += vp[3], t[1] += vp[4], t[2] += vp[5];
  mb_rotT(X->R, vp, vb);
  mb_rotT(X->R, t, vb + 3);
}
/* force vector from the body frame to the parent frame (fb and fp must not alias) */
static inline void mb_force_to_parent(const kn_pose* X, const double fb[6], double fp[6]) {
  double t[3];
  mb_rot(X->R, fb + 3, fp + 3);
  mb_rot(X->R, fb, fp);
  mb_cross(X->p, fp + 3, t);
  fp[0] += t[0], fp[1] += t[1], fp[2] += t[2];
}
/* out = V x m (motion cross product, RBDA eq. 2.31); out must not alias */
static inline void mb_cross_motion(const double V[6], const double m[6], double out[6]) {
  double t[3];
  mb_cross(V, m, out);
  mb_cross(V, m + 3, out + 3);
  mb_cross(V + 3, m, t);
  out[3] += t[0], out[4] += t[1], out[5] += t[2];
}
/* out = V x* f (force cross product, RBDA eq. 2.32); out must not alias */
static inline void mb_cross_force(const double V[6], const double f[6], double out[6]) {
  double t[3];
  mb_cross(V, f, out);
  mb_cross(V + 3, f + 3, t);
  out[0] += t[0], out[1] += t[1], out[2] += t[2];
  mb_cross(V, f + 3, out + 3);
}
/* h = I V for the body's spatial inertia about its origin, via the centre of mass:
 * f = m (v + w x c), n = I_com w + c x f (no 6 x 6 matrix needed) */
static inline void mb_inertia_apply(const kn_mb_body* b, const double V[6], double h[6]) {
  double t[3];
  mb_cross(V, b->com, t);
  h[3] = b->mass * (V[3] + t[0]);
  h[4] = b->mass * (V[4] + t[1]);
  h[5] = b->mass * (V[5] + t[2]);
  mb_rot(b->I_com, V, h);
  mb_cross(b->com, h + 3, t);
  h[0] += t[0], h[1] += t[1], h[2] += t[2];
}
/* joint velocity S v_i of body b (6) from the dofs' motion subspaces */
static inline void mb_joint_velocity(const kn_mb_body* b, const double* S, const double* v, double vJ[6]) {
  for (int k = 0; k < 6; k++) vJ[k] = 0;
  if (!v) return;
  for (int j = 0; j < b->nv; j++) {
    const double* s = S + 6 * (b->v_adr + j);
    double vj = v[b->v_adr + j];
    for (int k = 0; k < 6; k++) vJ[k] += s[k] * vj;
  }
}
static inline double mb_dot6(const double a[6], const double b[6]) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* World-aligned spatial quantities at the world origin (MuJoCo's choice for its CRB): with every
 * body's inertia and motion subspace in one frame, composite and articulated inertias simply
 * add from child to parent, with no transform per tree edge. X_wb = {R, p}:
 *   motion  [w; v] (body frame, at the body origin) -> [R w; R v + p x R w]                */
static inline void mb_motion_to_world(const kn_pose* X, const double vb[6], double vw[6]) {
  double t[3], u[3];
  mb_rot(X->R, vb, vw);
  mb_rot(X->R, vb + 3, u);
  mb_cross(X->p, vw, t);
  vw[3] = u[0] + t[0], vw[4] = u[1] + t[1], vw[5] = u[2] + t[2];
}
/* the body's inertia in world axes about the world origin, compact: m, h = m c_w,
 * I_o = R I_com R^T + m (|c_w|^2 1 - c_w c_w^T) (parallel-axis theorem) */
static inline void mb_inertia_world(const kn_mb_body* b, const kn_pose* X, double* m, double h[3], double I[9]) {
  double cw[3], T[9];
  mb_rot(X->R, b->com, cw);
  cw[0] += X->p[0], cw[1] += X->p[1], cw[2] += X->p[2];
  const double* R = X->R;
  const double* Ic = b->I_com;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) T[3 * i + j] = R[3 * i] * Ic[j] + R[3 * i + 1] * Ic[3 + j] + R[3 * i + 2] * Ic[6 + j];
  double mass = b->mass, cc = cw[0] * cw[0] + cw[1] * cw[1] + cw[2] * cw[2];
  for (int i = 0; i < 3; i++)
    for (int j = i; j < 3; j++) {
      double v = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2] +
                 mass * ((i == j ? cc : 0) - cw[i] * cw[j]);
      I[3 * i + j] = v;
      I[3 * j + i] = v;
    }
  *m = mass;
  h[0] = mass * cw[0], h[1] = mass * cw[1], h[2] = mass * cw[2];
}

/* The motion subspace of body b's dofs (body frame, rows of S) in world axes about the world
 * origin, written to Sw + 6 v_adr. A revolute axis a gives [r; p x r] with r = R a, a prismatic
 * one [0; r]; an axis along z (as in most URDFs) makes r a column of R, with no product. */
static inline void mb_subspace_to_world(const kn_mb_body* b, const kn_pose* X, const double* S, double* Sw) {
  double* s = Sw + 6 * b->v_adr;
  if (b->jtype == KN_JOINT_REVOLUTE || b->jtype == KN_JOINT_CONTINUOUS || b->jtype == KN_JOINT_PRISMATIC) {
    const double* ax = b->axis;
    double r[3];
    if (ax[0] == 0 && ax[1] == 0 && ax[2] == 1) {
      r[0] = X->R[2], r[1] = X->R[5], r[2] = X->R[8];
    } else {
      mb_rot(X->R, ax, r);
    }
    if (b->jtype == KN_JOINT_PRISMATIC) {
      s[0] = s[1] = s[2] = 0;
      s[3] = r[0], s[4] = r[1], s[5] = r[2];
    } else {
      s[0] = r[0], s[1] = r[1], s[2] = r[2];
      mb_cross(X->p, r, s + 3);
    }
    return;
  }
  for (int k = 0; k < b->nv; k++) mb_motion_to_world(X, S + 6 * (b->v_adr + k), s + 6 * k);
}

/* X_JB(q) of one joint: the motion of the body frame in the joint frame. */
void mb_joint_transform(const kn_mb_body* b, const double* q, kn_pose* X_jb);

#endif
