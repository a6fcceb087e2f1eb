/* IPC's cement arch (issue 20; digest incremental-potential-contact.md §9.3 F3, §9.6 "Cement arch"):
 * bench/ipc_paper/arch.yaml, 25 FEM wedge stones (200 nodes, 150 tets: the paper's 150 tets) of
 * rho 2300, E 2e10, nu 0.2, mu 0.5 in a 1.32 m semicircle on a rigid floor, on the ipc backend with
 * the scene's keys (the scene says why each differs from the defaults: the paper's dhat 1e-6 m and
 * eps_v 1e-5 l, contact.margin 1 cm). */
#include "ipc_util.h"

#include "sim/sim.h"

/* The arch stands: run the scene's 1 s (100 steps; Release ~2.5 s of CPU, ~10x that under the
 * sanitizers; step 83 is where Newton stalled, History below). The universal criteria at every
 * step (ipc_util.h: no contact detected at phi < 0, the end-of-step audit, no inverted tet, Newton's residual and step
 * within eps_d). Measured in Release (2026-11-27): every stone's centroid moves by at most 8.5 um in
 * the first 0.25 s (the barrier opens each joint from its 0.5 um start toward its resting gap
 * below dhat, the FEM stones take the load), then creeps at 3.9e-5 m/s over 0.25-1 s (1.35 eps_v:
 * IPC's smoothed static friction lets a joint at its friction limit creep at up to eps_v, digest
 * §9.3 F1, and a stone's centroid adds the creep of the joints below it); 2.21 Newton iterations a
 * step; 104 contacts at every step (24 joints x 4 corners of the smaller stone + 8 at the floor).
 * A collapse is decimetres: at mu 0.1 (the paper's arch collapses there too) and the paper's eps_d
 * 1e-4 l a stone moved 2.3 mm by 0.05 s, 7.0 cm by 0.2 s, 15.5 cm by 0.29 s, then Newton failed at
 * step 30 (at the default eps_d Newton fails at step 2: 100 iterations, 4.9e-4 m/s). Bounds: the settling within 24 dhat (every joint
 * opening by at most dhat) plus 0.25 s at 2 eps_v; 2 eps_v for the fastest stone's mean speed over
 * 0.25-1 s.
 * History: disabled from the mesh pairs' merge until the fix of issue 20's Newton failure (step 5,
 * velocity residual 0.021 m/s): kappa's bounds took the mean of A's diagonal (M + h^2 K, 7e4 times
 * the stones' nodal mass at E 2e10) and the Newton test max |D r| passed steps at v_n that the
 * Newton step would have changed by 0.1 m/s (ARCHITECTURE "ipc"). Until 2026-11-27 it ran 50
 * steps, and the scene failed at step 83: Newton stalled 100 iterations at a velocity residual of
 * 1.28e-5 m/s (eps_d 2.96e-6) with a Newton step of 2.4e-10 m/s, whose full step cut the residual
 * 10x, but its energy change (7.8e-14 J) was below E's round-off (+-7e-13 J), so Armijo took
 * steps of alpha 1e-5..7e-12; the line search now lets the residual decide when the Newton step
 * is within eps_d (nonlinear/newton.c). */
Test(ipc_arch, stands) {
  const char* path = KNEAD_SOURCE_DIR "/bench/ipc_paper/arch.yaml";
  test_world t = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_with(path, NULL, 0, &t.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(t.scene, &t.world, &err), KN_OK, "%s", err.msg);
  kn_world* w = t.world;
  cr_assert_eq(w->nfem, 25);
  double c0[25][3], cmid[25][3];
  for (int i = 0; i < w->nfem; i++) kn_sim_deformable_centroid(&w->fems[i], c0[i]);
  const double epsv = 2.9e-5; /* the scene's */
  const int steps = 100, mid = 25;
  double settle = 0, creep = 0;
  long its = 0;
  int cmin = 1 << 30, cmax = 0;
  ipc_audit a = ipc_audit_start();
  for (int k = 1; k <= steps; k++) {
    ipc_step_audited(&t, 1, &a);
    cmin = w->last.contacts < cmin ? w->last.contacts : cmin;
    cmax = w->last.contacts > cmax ? w->last.contacts : cmax;
    its += w->last.iterations;
    for (int i = 0; i < w->nfem; i++) {
      double c[3];
      kn_sim_deformable_centroid(&w->fems[i], c);
      if (k == mid) memcpy(cmid[i], c, sizeof c);
      if (k <= mid) settle = fmax(settle, sqrt(pow(c[0] - c0[i][0], 2) + pow(c[1] - c0[i][1], 2) + pow(c[2] - c0[i][2], 2)));
      if (k == steps)
        creep = fmax(creep, sqrt(pow(c[0] - cmid[i][0], 2) + pow(c[1] - cmid[i][1], 2) + pow(c[2] - cmid[i][2], 2)) /
                                (t.scene->time_step * (steps - mid)));
    }
  }
  ipc_audit_log("arch on ipc", &a);
  cr_log_info("arch on ipc: settled %.3g m, then %.3g m/s (eps_v %.3g), %.2f Newton iterations a step, %d-%d contacts",
              settle, creep, epsv, (double)its / steps, cmin, cmax);
  const double dhat = 1e-6;
  cr_expect(settle <= 24 * dhat + 0.25 * 2 * epsv, "a stone moved %.3g m in 0.25 s (measured 8.5e-6)", settle);
  cr_expect(cmin == 104 && cmax == 104, "%d-%d contacts a step, not 104", cmin, cmax);
  cr_expect(creep <= 2 * epsv, "a stone moved %.3g m/s over 0.25-1 s, above 2 eps_v (eps_v %.3g)", creep, epsv);
  tw_free(&t);
}
