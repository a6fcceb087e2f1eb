/* controllers/: scripted sequences — phase timing and the smoothstep q0 + (q1 - q0)(3s^2 - 2s^3). */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "controllers/controllers.h"

/* start at t0 = 0.5 from q0 = (0, 1): approach 1 s -> (1, 1), grasp 0.5 s -> (1, 3), lift 2 s -> (-1, 3).
 * Phase starts: 0.5, 1.5, 2.0; end 4.0. */
static kn_sequence* make_sequence(void) {
  double q0[2] = {0.0, 1.0}, a[2] = {1.0, 1.0}, g[2] = {1.0, 3.0}, l[2] = {-1.0, 3.0};
  kn_sequence* s = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_seq_create(2, 0.5, q0, &s, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_seq_add_phase(s, "approach", 1.0, a, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_seq_add_phase(s, "grasp", 0.5, g, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_seq_add_phase(s, "lift", 2.0, l, &err), KN_OK, "%s", err.msg);
  return s;
}

Test(sequence, phase_timing) {
  kn_sequence* s = make_sequence();
  const char* name = NULL;
  double frac = -1;
  cr_assert_eq(kn_seq_phase_at(s, 0.4, &name, &frac), -1);
  cr_assert_null(name);
  cr_assert_eq(kn_seq_phase_at(s, 0.5, &name, &frac), 0);
  cr_assert_str_eq(name, "approach");
  cr_assert_float_eq(frac, 0.0, 1e-15);
  cr_assert_eq(kn_seq_phase_at(s, 1.25, &name, &frac), 0);
  cr_assert_float_eq(frac, 0.75, 1e-15);
  cr_assert_eq(kn_seq_phase_at(s, 1.5, &name, NULL), 1);
  cr_assert_str_eq(name, "grasp");
  cr_assert_eq(kn_seq_phase_at(s, 1.999, &name, NULL), 1);
  cr_assert_eq(kn_seq_phase_at(s, 2.0, &name, &frac), 2);
  cr_assert_str_eq(name, "lift");
  cr_assert_float_eq(frac, 0.0, 1e-15);
  cr_assert_eq(kn_seq_phase_at(s, 3.999, NULL, NULL), 2);
  cr_assert_eq(kn_seq_phase_at(s, 4.0, &name, NULL), -1); /* done: holding */
  cr_assert_float_eq(kn_seq_end_time(s), 4.0, 1e-15);
  cr_assert_eq(kn_seq_find_phase(s, "lift"), 2);
  cr_assert_eq(kn_seq_find_phase(s, "shake"), -1);
  cr_assert_float_eq(s->phases[2].t_start, 2.0, 1e-15);
  kn_seq_free(s);
}

Test(sequence, smoothstep_values) {
  kn_sequence* s = make_sequence();
  double q[2], v[2], a[2];
  /* approach at s = 0.5: h = 0.5, h' = 6 s (1 - s) / T = 1.5, h'' = (6 - 12 s)/T^2 = 0 */
  kn_seq_eval(s, 1.0, q, v, a);
  cr_assert_float_eq(q[0], 0.5, 1e-15);
  cr_assert_float_eq(q[1], 1.0, 1e-15);
  cr_assert_float_eq(v[0], 1.5, 1e-14);
  cr_assert_float_eq(v[1], 0.0, 1e-15);
  cr_assert_float_eq(a[0], 0.0, 1e-13);
  /* grasp at s = 0.25 (t = 1.625, T = 0.5): h = 3/16 - 2/64 = 0.15625, q1 = 1 + 2 h;
   * h' = 6 (0.25)(0.75)/0.5 = 2.25 -> v1 = 4.5; h'' = (6 - 3)/0.25 = 12 -> a1 = 24 */
  kn_seq_eval(s, 1.625, q, v, a);
  cr_assert_float_eq(q[0], 1.0, 1e-15);
  cr_assert_float_eq(q[1], 1.3125, 1e-14);
  cr_assert_float_eq(v[1], 4.5, 1e-13);
  cr_assert_float_eq(a[1], 24.0, 1e-12);
  /* lift start: at rest at the grasp target, accelerating at 6 dq / T^2 = -3 */
  kn_seq_eval(s, 2.0, q, v, a);
  cr_assert_float_eq(q[0], 1.0, 1e-15);
  cr_assert_float_eq(v[0], 0.0, 1e-15);
  cr_assert_float_eq(a[0], -3.0, 1e-14);
  /* before t0: q0; after the end: the last target, at rest */
  kn_seq_eval(s, 0.0, q, v, a);
  cr_assert(q[0] == 0.0 && q[1] == 1.0 && v[0] == 0.0);
  kn_seq_eval(s, 10.0, q, v, a);
  cr_assert(q[0] == -1.0 && q[1] == 3.0 && v[0] == 0.0 && a[1] == 0.0);
  kn_seq_free(s);
}

Test(sequence, continuous_at_phase_boundaries_and_derivatives_match) {
  kn_sequence* s = make_sequence();
  const double bounds[4] = {0.5, 1.5, 2.0, 4.0};
  for (int b = 0; b < 4; ++b) {
    double ql[2], qr[2], vl[2], vr[2];
    kn_seq_eval(s, bounds[b] - 1e-10, ql, vl, NULL);
    kn_seq_eval(s, bounds[b] + 1e-10, qr, vr, NULL);
    for (int j = 0; j < 2; ++j) {
      cr_assert_float_eq(ql[j], qr[j], 1e-9, "q jumps at t = %g", bounds[b]);
      cr_assert_float_eq(vl[j], 0.0, 1e-8, "v not zero before t = %g", bounds[b]);
      cr_assert_float_eq(vr[j], 0.0, 1e-8, "v not zero after t = %g", bounds[b]);
    }
  }
  const double h = 1e-6;
  for (double t = 0.51; t < 3.99; t += 0.0937) {
    double qp[2], qm[2], vp[2], vm[2], v[2], a[2];
    kn_seq_eval(s, t + h, qp, vp, NULL);
    kn_seq_eval(s, t - h, qm, vm, NULL);
    kn_seq_eval(s, t, NULL, v, a);
    for (int j = 0; j < 2; ++j) {
      cr_assert_float_eq((qp[j] - qm[j]) / (2 * h), v[j], 1e-6, "v at %g", t);
      cr_assert_float_eq((vp[j] - vm[j]) / (2 * h), a[j], 1e-4, "a at %g", t);
    }
  }
  kn_seq_free(s);
}

Test(sequence, set_initial_and_bad_phase) {
  kn_sequence* s = make_sequence();
  double q0[2] = {2.0, 1.0}, q[2];
  kn_seq_set_initial(s, q0);
  kn_seq_eval(s, 1.0, q, NULL, NULL); /* halfway from 2 to 1 */
  cr_assert_float_eq(q[0], 1.5, 1e-15);
  kn_error err = {0};
  cr_assert_eq(kn_seq_add_phase(s, "shake", 0.0, q0, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "shake") && strstr(err.msg, "duration"), "%s", err.msg);
  double bad[2] = {0.0, INFINITY};
  cr_assert_eq(kn_seq_add_phase(s, "release", 1.0, bad, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "release") && strstr(err.msg, "q[1]"), "%s", err.msg);
  cr_assert_eq(s->nphase, 3);
  kn_seq_free(s);
}
