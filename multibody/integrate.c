/* The kinematic map q_dot = N(q) v and the configuration update q (+) dt v.
 *
 * Choice for PLANAR and FLOATING: q (+) dt v is the exponential map of the joint's group, i.e.
 * the exact pose reached by moving with the constant body-frame twist v for time dt (SE(2) for
 * planar: the in-plane displacement is rotated while theta advances; SE(3) for floating: the
 * quaternion is multiplied on the right by exp(dt omega / 2) and the position follows the screw
 * motion). Both agree with q_dot = N(q) v to first order in dt, and the quaternion is
 * renormalized after every update. */
#include <math.h>

#include "multibody/mb_internal.h"

// (q, v) => q_dot = N(q) v
void kn_mb_qdot(const kn_mb_model* m, const double* q, const double* v, double* qdot) {
  for (int i = 0; i < m->nbody; i++) {
    const kn_mb_body* b = &m->bodies[i];
    const double* qj = q + b->q_adr;
    const double* vj = v + b->v_adr;
    double* qd = qdot + b->q_adr;
    switch (b->jtype) {
      case KN_JOINT_FIXED: break;
      case KN_JOINT_REVOLUTE:
      case KN_JOINT_CONTINUOUS:
      case KN_JOINT_PRISMATIC: qd[0] = vj[0]; break;
      case KN_JOINT_PLANAR: {
        /* (x, y) are joint-frame coordinates along e1, e2; (vx, vy) body-frame along the same
         * vectors rotated by theta (e1 x e2 = axis): x_dot + i y_dot = e^{i theta} (vx + i vy) */
        double c = cos(qj[2]), s = sin(qj[2]);
        double vx = vj[0], vy = vj[1], w = vj[2];
        qd[0] = c * vx - s * vy;
        qd[1] = s * vx + c * vy;
        qd[2] = w;
        break;
      }
      case KN_JOINT_FLOATING: {
        /* p_dot = R(quat) v_B, quat_dot = 1/2 quat (x) (0, omega_B) */
        double quat[4] = {qj[3], qj[4], qj[5], qj[6]}, R[9], pd[3], qq[4];
        double w[4] = {0, vj[0], vj[1], vj[2]};
        kn_mat3_from_quat(quat, R);
        mb_rot(R, vj + 3, pd);
        kn_quat_mul(quat, w, qq);
        for (int k = 0; k < 3; k++) qd[k] = pd[k];
        for (int k = 0; k < 4; k++) qd[3 + k] = 0.5 * qq[k];
        break;
      }
    }
  }
}

/* sin(x)/x and (1 - cos x)/x, (x - sin x)/x^2... by series near 0 */
static double sinc(double x) { return fabs(x) < 1e-4 ? 1 - x * x / 6 : sin(x) / x; }
static double cosc(double x) { return fabs(x) < 1e-4 ? x / 2 - x * x * x / 24 : (1 - cos(x)) / x; }

// (q, v, dt) => q_next = q (+) dt v (see the file comment); q and q_next may alias
void kn_mb_integrate(const kn_mb_model* m, const double* q, const double* v, double dt, double* q_next) {
  for (int i = 0; i < m->nbody; i++) {
    const kn_mb_body* b = &m->bodies[i];
    const double* qj = q + b->q_adr;
    const double* vj = v + b->v_adr;
    double* qn = q_next + b->q_adr;
    switch (b->jtype) {
      case KN_JOINT_FIXED: break;
      case KN_JOINT_REVOLUTE:
      case KN_JOINT_CONTINUOUS:
      case KN_JOINT_PRISMATIC: qn[0] = qj[0] + dt * vj[0]; break;
      case KN_JOINT_PLANAR: {
        /* SE(2) exponential: body-frame displacement d = V(phi) (vx, vy) dt with
         * V(phi) = [[sinc, -cosc], [cosc, sinc]], phi = omega dt; then rotate by theta */
        double phi = vj[2] * dt, sc = sinc(phi), cc = cosc(phi);
        double dx = (sc * vj[0] - cc * vj[1]) * dt, dy = (cc * vj[0] + sc * vj[1]) * dt;
        double c = cos(qj[2]), s = sin(qj[2]);
        double x = qj[0] + c * dx - s * dy, y = qj[1] + s * dx + c * dy;
        qn[0] = x, qn[1] = y, qn[2] = qj[2] + phi;
        break;
      }
      case KN_JOINT_FLOATING: {
        double quat[4] = {qj[3], qj[4], qj[5], qj[6]}, R[9];
        kn_quat_normalize(quat);
        kn_mat3_from_quat(quat, R);
        double phi[3] = {vj[0] * dt, vj[1] * dt, vj[2] * dt};
        double th = kn_vec3_norm(phi);
        /* SE(3) left Jacobian V = 1 + (1 - cos th)/th^2 [phi]x + (th - sin th)/th^3 [phi]x^2 */
        double c1 = th < 1e-4 ? 0.5 - th * th / 24 : (1 - cos(th)) / (th * th);
        double c2 = th < 1e-4 ? 1.0 / 6 - th * th / 120 : (th - sin(th)) / (th * th * th);
        double u[3] = {vj[3] * dt, vj[4] * dt, vj[5] * dt}, t1[3], t2[3], dpb[3], dpw[3];
        mb_cross(phi, u, t1);
        mb_cross(phi, t1, t2);
        for (int k = 0; k < 3; k++) dpb[k] = u[k] + c1 * t1[k] + c2 * t2[k];
        mb_rot(R, dpb, dpw);
        /* quat (x) exp(phi / 2) */
        double h = 0.5 * th, sh = th < 1e-8 ? 0.5 : sin(h) / th;
        double e[4] = {cos(h), sh * phi[0], sh * phi[1], sh * phi[2]}, qq[4];
        kn_quat_mul(quat, e, qq);
        kn_quat_normalize(qq);
        for (int k = 0; k < 3; k++) qn[k] = qj[k] + dpw[k];
        for (int k = 0; k < 4; k++) qn[3 + k] = qq[k];
        break;
      }
    }
  }
}
