/* The multibody numbers from C for tests/python/test_robot.py: (URDF, q, v, x) => lines
 * "M ..." (nv x nv, row-major), "tau ..." (RNEA with qdd = x), "qdd ..." (ABA with tau = x) and
 * "J ..." (3 x nv, the last body's origin), each value as %.17g so that Python reads the same doubles.
 * usage: mb_reference URDF nq q... v... x...   (nv = the URDF's; v and x have nv values) */
#include <stdio.h>
#include <stdlib.h>

#include "multibody/multibody.h"
#include "urdf/urdf.h"

static void print(const char* name, const double* a, int n) {
  printf("%s", name);
  for (int i = 0; i < n; i++) printf(" %.17g", a[i]);
  printf("\n");
}

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  kn_urdf_options opt = kn_urdf_options_default();
  kn_robot* r = NULL;
  kn_error err = {0};
  if (kn_urdf_load(argv[1], &opt, &r, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  const kn_mb_model* m = r->model;
  int nq = m->nq, nv = m->nv;
  if (argc != 2 + nq + 2 * nv) {
    fprintf(stderr, "mb_reference: expected %d values (q, v, x)\n", nq + 2 * nv);
    return 2;
  }
  double* a = malloc(sizeof(double) * (size_t)(nq + 2 * nv + nv * nv + 2 * nv + 3 * nv));
  for (int i = 0; i < nq + 2 * nv; i++) a[i] = strtod(argv[2 + i], NULL);
  double *q = a, *v = q + nq, *x = v + nv, *M = x + nv, *tau = M + nv * nv, *qdd = tau + nv, *J = qdd + nv;
  kn_mb_data* d = kn_mb_data_create(m);
  const double origin[3] = {0, 0, 0};
  kn_mb_kinematics(m, q, NULL, d);
  kn_mb_mass_matrix(m, d, M);
  kn_mb_point_jacobian(m, d, m->nbody - 1, origin, J, NULL);
  kn_mb_kinematics(m, q, v, d);
  kn_mb_inverse_dynamics(m, d, x, tau);
  kn_mb_kinematics(m, q, v, d);
  kn_mb_forward_dynamics(m, d, x, qdd);
  print("M", M, nv * nv);
  print("tau", tau, nv);
  print("qdd", qdd, nv);
  print("J", J, 3 * nv);
  kn_mb_data_free(d);
  kn_robot_free(r);
  free(a);
  return 0;
}
