/* sap/: the friction cone's first-step Hessian (kn_sap_kind_ops.first_G, used by the first Newton
 * step of a large solve). A contact that starts the step penetrating (phi0 < 0) gets the stiction
 * G = R^-1 whatever its mode at the warm start; any other contact gets eval's G unchanged. The
 * numbers: dt 0.01, Delassus w 2, stiffness 1e4, tau 0.1, sigma 1e-3, beta 1 (R_n = max(w / 4 pi^2,
 * 1 / (dt k (dt + tau))) = 1 / 11, R_t = sigma w = 0.002), phi0 -1e-3 (v_hat_n = 1e-3 / 0.11). */
#include <string.h>

#include "sap/sap.h"
#include "sap/sap_internal.h"
#include "sap_test_util.h"

static void data_for(double phi0, unsigned char data[KN_SAP_MAX_DATA]) {
  kn_sap_contact_params c = kn_sap_contact_params_default();
  c.phi0 = phi0, c.mu = 0.5, c.stiffness = 1e4, c.dissipation_time = 0.1, c.sigma = 1e-3, c.beta = 1;
  kn_sap_contact_ops.make_data(&c, 0.01, 2.0, data);
}

static void both_G(double phi0, const double vc[3], double G_eval[9], double G_first[9]) {
  unsigned char data[KN_SAP_MAX_DATA];
  data_for(phi0, data);
  double cost, gamma[3];
  kn_sap_contact_ops.eval(NULL, data, vc, &cost, gamma, G_eval);
  kn_sap_contact_ops.first_G(NULL, data, vc, G_first);
}

Test(sap_first_step, penetrating_contacts_get_the_stiction_hessian) {
  const double Rt = 1e-3 * 2.0, Rn = 1.0 / 11.0;
  cr_assert(kn_sap_contact_ops.first_G != NULL);
  /* penetrating and sliding at 0.1 m/s (the warm start's slip), then separating at 0.1 m/s */
  const double slide[3] = {0.1, 0, 0}, apart[3] = {0, 0, 0.1};
  double Ge[9], Gf[9];
  both_G(-1e-3, slide, Ge, Gf);
  /* eval's curvature along the slip: mu mu_hat f / R_t = mu^2 f / R_n, f = 1 / (1 + mu^2 R_t / R_n): 4.88,
   * 2.7, a two-hundredth of the stiction 1 / R_t = 500 */
  EXPECT_REL("sliding: eval G_tt", Ge[0], 0.25 / (1 + 0.25 * Rt / Rn) / Rn, 1e-12);
  EXPECT_REL("sliding: first G_tt", Gf[0], 1 / Rt, 1e-15);
  EXPECT_REL("sliding: first G_nn", Gf[8], 1 / Rn, 1e-15);
  cr_expect(Gf[1] == 0 && Gf[2] == 0 && Gf[5] == 0 && Gf[4] == Gf[0]);
  both_G(-1e-3, apart, Ge, Gf);
  for (int k = 0; k < 9; k++) cr_expect(Ge[k] == 0, "separating: eval G is 0");
  EXPECT_REL("separating: first G_nn", Gf[8], 1 / Rn, 1e-15);
  /* not penetrating (phi0 > 0): eval's G, bitwise, sliding or separating */
  both_G(+1e-3, slide, Ge, Gf);
  cr_expect(memcmp(Ge, Gf, sizeof Ge) == 0);
  both_G(+1e-3, (const double[3]){0, 0, -0.2}, Ge, Gf); /* closing fast: in contact, sliding-free */
  cr_expect(memcmp(Ge, Gf, sizeof Ge) == 0);
  /* penetrating and stuck already: eval's G */
  both_G(-1e-3, (const double[3]){0, 0, 0}, Ge, Gf);
  cr_expect(memcmp(Ge, Gf, sizeof Ge) == 0);
  EXPECT_REL("stuck: G_tt", Ge[0], 1 / Rt, 1e-15);
}
