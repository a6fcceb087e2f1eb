/* The criteria every ipc scene must meet at every step (digest §9, "universal criteria"), checked by
 * one function that every ipc scene test steps with:
 *
 * - no intersection: every rigid and FEM contact the step's detection found at its start (the
 *   previous step's end, by exact signed distances) has phi >= 0, and the step passed the backend's
 *   own end-of-step audit (a step ending with a gap <= 0 fails, so kn_world_step returns an error);
 *   within a step, the line search's iterates are kept intersection-free by its CCD filter
 *   (tests/ipc/test_term.c's invariant). MPM particles are balls of contact_radius around points
 *   that may start inside a collider: their depth is each scene's no_penetration check;
 * - no inverted tet at a step's end: det F > 0 for every tet of every FEM body;
 * - every step converged: Newton's final velocity residual max |D r| and its last Newton step's
 *   max |dv| (both in w->last.residual) within the step's tolerance (w->last.tolerance, ipc's eps_d),
 *   which must be reported (> 0). */
#ifndef KNEAD_TESTS_IPC_UTIL_H
#define KNEAD_TESTS_IPC_UTIL_H

#include "scene_util.h"

/* what the steps so far reached: the smallest contact phi and det F, the largest residual / tolerance */
typedef struct {
  long steps;
  double phi_min, det_f_min, residual_ratio_max;
} ipc_audit;

static inline ipc_audit ipc_audit_start(void) { return (ipc_audit){0, INFINITY, INFINITY, 0}; }

static inline double ipc_det3(const double* a) {
  return a[0] * (a[4] * a[8] - a[5] * a[7]) - a[1] * (a[3] * a[8] - a[5] * a[6]) + a[2] * (a[3] * a[7] - a[4] * a[6]);
}

/* FEM body b's smallest det F over its tets (F = Ds Dm^-1, Ds the deformed edge matrix) */
static inline double ipc_det_f_min(const kn_fem_body* b) {
  double m = INFINITY;
  for (int e = 0; e < b->mesh.ntet; e++) {
    const int* v = b->mesh.tet + 4 * e;
    double Ds[9];
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) Ds[3 * r + c] = b->x[3 * v[c + 1] + r] - b->x[3 * v[0] + r];
    m = fmin(m, ipc_det3(Ds) * ipc_det3(b->Dm_inv + 9 * e));
  }
  return m;
}

/* n steps of t, each asserted to meet the criteria above; *a accumulates */
static inline void ipc_step_audited(test_world* t, long n, ipc_audit* a) {
  kn_world* w = t->world;
  kn_error err = {0};
  for (long k = 0; k < n; k++) {
    cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
    a->steps++;
    for (int i = 0; i < w->ncontact; i++) a->phi_min = fmin(a->phi_min, w->contacts[i].phi);
    for (int i = 0; i < w->nfem_contact; i++) a->phi_min = fmin(a->phi_min, w->fem_contacts[i].phi);
    cr_assert(a->phi_min >= 0, "step %ld: a contact detected at phi = %.3g m (intersecting)", w->step, a->phi_min);
    for (int f = 0; f < w->nfem; f++) a->det_f_min = fmin(a->det_f_min, ipc_det_f_min(w->fems[f].body));
    cr_assert(!(a->det_f_min <= 0), "step %ld: an inverted tet (det F = %.3g)", w->step, a->det_f_min);
    cr_assert(w->last.tolerance > 0, "step %ld: no Newton tolerance reported", w->step);
    double ratio = w->last.residual / w->last.tolerance;
    a->residual_ratio_max = fmax(a->residual_ratio_max, ratio);
    cr_assert(ratio <= 1, "step %ld: Newton stopped at residual %.3g m/s, above eps_d %.3g m/s", w->step,
              w->last.residual, w->last.tolerance);
  }
}

static inline void ipc_audit_log(const char* label, const ipc_audit* a) {
  cr_log_info("%s: %ld steps, smallest contact phi %.3g m, smallest det F %.4g, largest residual / eps_d %.3g", label,
              a->steps, a->phi_min, a->det_f_min, a->residual_ratio_max);
}

#endif
