/* controllers/: trajectories through knots (linear, clamped cubic) and CSV loading. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "controllers/controllers.h"

/*---- piecewise linear ----*/

/* knots t = {0, 1, 3}; joint 0: 0, 2, 1; joint 1: 1, -1, 5 */
static const double lin_t[3] = {0.0, 1.0, 3.0};
static const double lin_q[6] = {0.0, 1.0, 2.0, -1.0, 1.0, 5.0};

Test(trajectory, linear_values_and_velocities_exact) {
  kn_trajectory* tr = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_traj_create(2, 3, lin_t, lin_q, NULL, KN_TRAJ_LINEAR, &tr, &err), KN_OK, "%s", err.msg);
  double q[2], v[2], a[2];
  /* t = 0.25 on segment 0: slope (2, -2) */
  kn_traj_eval(tr, 0.25, q, v, a);
  cr_assert_float_eq(q[0], 0.5, 1e-15);
  cr_assert_float_eq(q[1], 0.5, 1e-15);
  cr_assert_float_eq(v[0], 2.0, 1e-15);
  cr_assert_float_eq(v[1], -2.0, 1e-15);
  cr_assert_eq(a[0], 0.0);
  /* t = 1 starts segment 1: slope (-0.5, 3) */
  kn_traj_eval(tr, 1.0, q, v, a);
  cr_assert_float_eq(q[0], 2.0, 1e-15);
  cr_assert_float_eq(q[1], -1.0, 1e-15);
  cr_assert_float_eq(v[0], -0.5, 1e-15);
  cr_assert_float_eq(v[1], 3.0, 1e-15);
  /* t = 2.5: 3/4 of segment 1 */
  kn_traj_eval(tr, 2.5, q, v, NULL);
  cr_assert_float_eq(q[0], 1.25, 1e-15);
  cr_assert_float_eq(q[1], 3.5, 1e-15);
  /* hold the first knot before the start and the last after the end */
  kn_traj_eval(tr, -1.0, q, v, a);
  cr_assert(q[0] == 0.0 && q[1] == 1.0 && v[0] == 0.0 && v[1] == 0.0);
  kn_traj_eval(tr, 7.0, q, v, a);
  cr_assert(q[0] == 1.0 && q[1] == 5.0 && v[0] == 0.0 && v[1] == 0.0);
  cr_assert_eq(kn_traj_start_time(tr), 0.0);
  cr_assert_eq(kn_traj_end_time(tr), 3.0);
  kn_traj_free(tr);
}

/*---- clamped cubic ----*/

/* nonuniform knots, 2 joints with unrelated data */
static const double cub_t[6] = {0.0, 0.4, 1.1, 1.5, 2.6, 3.0};
static const double cub_q[12] = {0.0, 1.0, 0.7, 0.2, -0.3, 0.9, 1.2, -1.1, 0.4, 0.0, 0.5, 0.5};

Test(trajectory, cubic_passes_through_knots_with_zero_end_velocity) {
  kn_trajectory* tr = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_traj_create(2, 6, cub_t, cub_q, NULL, KN_TRAJ_CUBIC, &tr, &err), KN_OK, "%s", err.msg);
  double q[2], v[2], ql[2];
  for (int k = 0; k < 6; ++k) {
    kn_traj_eval(tr, cub_t[k], q, NULL, NULL);
    for (int j = 0; j < 2; ++j) cr_assert_float_eq(q[j], cub_q[2 * k + j], 1e-13, "knot %d joint %d", k, j);
    /* approaching the knot from the left lands on it too (the segment before) */
    if (k > 0) {
      kn_traj_eval(tr, cub_t[k] - 1e-12, ql, NULL, NULL);
      for (int j = 0; j < 2; ++j) cr_assert_float_eq(ql[j], cub_q[2 * k + j], 1e-10);
    }
  }
  /* clamped: zero velocity at both ends (evaluated inside the first/last segment) */
  kn_traj_eval(tr, 0.0, NULL, v, NULL);
  for (int j = 0; j < 2; ++j) cr_assert_float_eq(v[j], 0.0, 1e-13);
  kn_traj_eval(tr, 3.0 - 1e-12, NULL, v, NULL);
  for (int j = 0; j < 2; ++j) cr_assert_float_eq(v[j], 0.0, 1e-9);
  kn_traj_free(tr);
}

Test(trajectory, cubic_is_c2_and_derivatives_match_finite_differences) {
  kn_trajectory* tr = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_traj_create(2, 6, cub_t, cub_q, NULL, KN_TRAJ_CUBIC, &tr, &err), KN_OK, "%s", err.msg);
  /* C1 and C2 at interior knots: one-sided values agree to O(eps) (slopes are O(10) rad/s^3) */
  for (int k = 1; k < 5; ++k) {
    double vl[2], vr[2], al[2], ar[2];
    kn_traj_eval(tr, cub_t[k] - 1e-9, NULL, vl, al);
    kn_traj_eval(tr, cub_t[k] + 1e-9, NULL, vr, ar);
    for (int j = 0; j < 2; ++j) {
      cr_assert_float_eq(vl[j], vr[j], 1e-7, "C1 at knot %d joint %d: %g vs %g", k, j, vl[j], vr[j]);
      cr_assert_float_eq(al[j], ar[j], 1e-6, "C2 at knot %d joint %d: %g vs %g", k, j, al[j], ar[j]);
    }
  }
  /* central differences of q and v vs the evaluated v and a; O(h^2) error with h = 1e-5 */
  const double h = 1e-5;
  for (double t = 0.05; t < 2.95; t += 0.0731) {
    double qp[2], qm[2], vp[2], vm[2], v[2], a[2];
    kn_traj_eval(tr, t + h, qp, vp, NULL);
    kn_traj_eval(tr, t - h, qm, vm, NULL);
    kn_traj_eval(tr, t, NULL, v, a);
    for (int j = 0; j < 2; ++j) {
      cr_assert_float_eq((qp[j] - qm[j]) / (2 * h), v[j], 1e-6, "v at t = %g joint %d", t, j);
      cr_assert_float_eq((vp[j] - vm[j]) / (2 * h), a[j], 1e-5, "a at t = %g joint %d", t, j);
    }
  }
  kn_traj_free(tr);
}

/* A clamped spline reproduces every cubic whose end slopes equal the clamp: sample
 * p(t) = c + alpha (T t^2/2 - t^3/3), p'(t) = alpha t (T - t) (zero at 0 and T), at uneven knots;
 * the spline must equal p, p', p'' everywhere, not only at the knots. A natural spline or a wrong
 * end condition fails this by O(0.1). */
Test(trajectory, cubic_reproduces_a_clamped_cubic_polynomial) {
  const double T = 2.0, alpha = 1.5, c = 0.3;
  double t[6] = {0.0, 0.3, 0.7, 1.2, 1.6, 2.0}, q[6];
  for (int k = 0; k < 6; ++k) q[k] = c + alpha * (T * t[k] * t[k] / 2 - t[k] * t[k] * t[k] / 3);
  kn_trajectory* tr = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_traj_create(1, 6, t, q, NULL, KN_TRAJ_CUBIC, &tr, &err), KN_OK, "%s", err.msg);
  for (double s = 0.0; s < T; s += 0.0173) {
    double qs, vs, as;
    kn_traj_eval(tr, s, &qs, &vs, &as);
    cr_assert_float_eq(qs, c + alpha * (T * s * s / 2 - s * s * s / 3), 1e-13, "q at %g", s);
    cr_assert_float_eq(vs, alpha * s * (T - s), 1e-13, "v at %g", s);
    cr_assert_float_eq(as, alpha * (T - 2 * s), 1e-12, "a at %g", s);
  }
  kn_traj_free(tr);
}

Test(trajectory, single_knot_holds_and_two_knots_cubic_is_smoothstep) {
  kn_trajectory* tr = NULL;
  kn_error err = {0};
  double t1[1] = {0.5}, q1[1] = {0.7}, q, v;
  cr_assert_eq(kn_traj_create(1, 1, t1, q1, NULL, KN_TRAJ_CUBIC, &tr, &err), KN_OK);
  kn_traj_eval(tr, 3.0, &q, &v, NULL);
  cr_assert(q == 0.7 && v == 0.0);
  kn_traj_free(tr);
  /* two knots, clamped: the unique cubic with zero end slopes is the smoothstep 3s^2 - 2s^3 */
  double t2[2] = {1.0, 3.0}, q2[2] = {1.0, 2.0};
  cr_assert_eq(kn_traj_create(1, 2, t2, q2, NULL, KN_TRAJ_CUBIC, &tr, &err), KN_OK);
  kn_traj_eval(tr, 1.5, &q, &v, NULL); /* s = 0.25 */
  cr_assert_float_eq(q, 1.0 + (3 * 0.0625 - 2 * 0.015625), 1e-14);
  cr_assert_float_eq(v, 6 * 0.25 * 0.75 / 2.0, 1e-14);
  kn_traj_free(tr);
}

Test(trajectory, create_rejects_bad_knots) {
  kn_trajectory* tr = NULL;
  kn_error err = {0};
  double t[3] = {0.0, 1.0, 1.0}, q[3] = {0, 0, 0};
  cr_assert_eq(kn_traj_create(1, 3, t, q, NULL, KN_TRAJ_CUBIC, &tr, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "knot 2") && strstr(err.msg, "increasing"), "%s", err.msg);
  cr_assert_null(tr);
  double t2[2] = {0.0, 1.0}, q2[2] = {0.0, NAN};
  cr_assert_eq(kn_traj_create(1, 2, t2, q2, NULL, KN_TRAJ_LINEAR, &tr, &err), KN_ERR_INVALID);
  cr_assert(strstr(err.msg, "knot 1"), "%s", err.msg);
  cr_assert_eq(kn_traj_create(0, 2, t2, q2, NULL, KN_TRAJ_LINEAR, &tr, &err), KN_ERR_INVALID);
}

/*---- CSV ----*/

static void write_file(const char* path, const char* text) {
  FILE* f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs(text, f);
  fclose(f);
}

static void temp_path(char* buf, size_t n, const char* tag) {
  snprintf(buf, n, "/tmp/knead_traj_%ld_%s.csv", (long)getpid(), tag);
}

Test(trajectory_csv, loads_header_comments_and_crlf) {
  char path[256];
  temp_path(path, sizeof path, "good");
  write_file(path,
             "# knots for two joints\r\n"
             "t, shoulder ,elbow\r\n"
             "\r\n"
             "0, 0.0, 1.0\r\n"
             "1, 2.0,-1\r\n"
             "3,1,5e0\r\n");
  kn_trajectory* tr = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_traj_load_csv(path, KN_TRAJ_LINEAR, &tr, &err), KN_OK, "%s", err.msg);
  unlink(path);
  cr_assert_eq(tr->n, 2);
  cr_assert_eq(tr->nknot, 3);
  cr_assert_not_null(tr->joint_names);
  cr_assert_str_eq(tr->joint_names[0], "shoulder");
  cr_assert_str_eq(tr->joint_names[1], "elbow");
  for (int k = 0; k < 3; ++k) cr_assert_eq(tr->t[k], lin_t[k]);
  for (int i = 0; i < 6; ++i) cr_assert_eq(tr->q[i], lin_q[i]);
  double q[2];
  kn_traj_eval(tr, 2.5, q, NULL, NULL);
  cr_assert_float_eq(q[1], 3.5, 1e-15);
  kn_traj_free(tr);
}

Test(trajectory_csv, loads_without_header) {
  char path[256];
  temp_path(path, sizeof path, "nohdr");
  write_file(path, "0.0,0.5\n0.5,1.5\n");
  kn_trajectory* tr = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_traj_load_csv(path, KN_TRAJ_CUBIC, &tr, &err), KN_OK, "%s", err.msg);
  unlink(path);
  cr_assert_eq(tr->n, 1);
  cr_assert_eq(tr->nknot, 2);
  cr_assert_null(tr->joint_names);
  double q;
  kn_traj_eval(tr, 0.25, &q, NULL, NULL);
  cr_assert_float_eq(q, 1.0, 1e-14); /* smoothstep midpoint */
  kn_traj_free(tr);
}

/* load `text`, expect `status` and every needle in the message (file name and line number) */
static void expect_csv_error(const char* tag, const char* text, kn_status status, const char* n1, const char* n2) {
  char path[256];
  temp_path(path, sizeof path, tag);
  write_file(path, text);
  kn_trajectory* tr = NULL;
  kn_error err = {0};
  kn_status st = kn_traj_load_csv(path, KN_TRAJ_CUBIC, &tr, &err);
  unlink(path);
  cr_assert_eq(st, status, "%s: got %s: %s", tag, kn_status_name(st), err.msg);
  cr_assert_null(tr);
  cr_assert(strstr(err.msg, path), "%s: message lacks the file name: %s", tag, err.msg);
  if (n1) cr_assert(strstr(err.msg, n1), "%s: message lacks '%s': %s", tag, n1, err.msg);
  if (n2) cr_assert(strstr(err.msg, n2), "%s: message lacks '%s': %s", tag, n2, err.msg);
}

Test(trajectory_csv, bad_files_name_line_and_expectation) {
  expect_csv_error("nonincr", "t,a,b\n0,0,0\n1,1,1\n1,2,2\n", KN_ERR_PARSE, ":4:", "increasing");
  expect_csv_error("decr", "0,0\n# comment\n2,1\n1.5,2\n", KN_ERR_PARSE, ":4:", "line 3");
  expect_csv_error("columns", "t,a,b\n0,0,0\n1,1\n", KN_ERR_PARSE, ":3:", "expected 3 columns");
  expect_csv_error("columns_long", "0,0,0\n1,1,1,1\n", KN_ERR_PARSE, ":2:", "got 4");
  expect_csv_error("nan_text", "t,a,b\n0,0,0\n1,1,abc\n", KN_ERR_PARSE, ":3:", "column 3 (b) is 'abc'");
  expect_csv_error("nan_literal", "0,0\n1,nan\n", KN_ERR_PARSE, ":2:", "finite number");
  expect_csv_error("trailing", "0,0\n1,1.5x\n", KN_ERR_PARSE, ":2:", "'1.5x'");
  expect_csv_error("badtime", "0,0\nx1,1\n", KN_ERR_PARSE, ":2:", "column 1 (t)");
  expect_csv_error("badheader", "# hi\njoint,a\n0,1\n", KN_ERR_PARSE, ":2:", "header");
  expect_csv_error("empty", "t,a\n# nothing\n", KN_ERR_PARSE, "no knots", NULL);
  expect_csv_error("onecol", "0\n1\n", KN_ERR_PARSE, ":1:", "at least 2 columns");
}

Test(trajectory_csv, missing_file_is_io_error) {
  kn_trajectory* tr = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_traj_load_csv("/nonexistent/knead/traj.csv", KN_TRAJ_LINEAR, &tr, &err), KN_ERR_IO);
  cr_assert(strstr(err.msg, "/nonexistent/knead/traj.csv"), "%s", err.msg);
}
