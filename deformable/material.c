/* knead/deformable — material parameters: defaults, validation, Lame parameters. */
#include <math.h>

#include "deformable/deformable.h"

// () => Drake's DeformableBodyConfig defaults (digest section 8)
kn_fem_material kn_fem_material_default(void) {
  kn_fem_material m = {0};
  m.model = KN_FEM_LINEAR_COROTATED;
  m.youngs_modulus = 1e8;
  m.poisson_ratio = 0.49;
  m.density = 1500.0;
  m.mass_damping = 0.0;
  m.stiffness_damping = 0.0;
  return m;
}

// material => KN_OK or KN_ERR_INVALID naming the parameter and value
kn_status kn_fem_material_validate(const kn_fem_material* mat, const char* name, kn_error* err) {
  if (!name) name = "deformable body";
  if (mat->model < KN_FEM_LINEAR || mat->model > KN_FEM_NEOHOOKEAN)
    return kn_fail(err, KN_ERR_INVALID, "%s: unknown material model %d", name, (int)mat->model);
  /* !(x > 0) also rejects NaN */
  if (!(mat->youngs_modulus > 0) || !isfinite(mat->youngs_modulus))
    return kn_fail(err, KN_ERR_INVALID, "%s: youngs_modulus = %g Pa, expected a finite value > 0", name,
                   mat->youngs_modulus);
  if (mat->youngs_modulus > KN_MATERIAL_MAX_MODULUS)
    return kn_fail(err, KN_ERR_INVALID,
                   "%s: youngs_modulus = %g Pa is beyond what double precision resolves; expected <= %g Pa (the "
                   "stiffness term of the step's Newton matrix would swamp the mass term: gravity is lost in "
                   "round-off and the body freezes)",
                   name, mat->youngs_modulus, KN_MATERIAL_MAX_MODULUS);
  if (!(mat->poisson_ratio > -1.0 && mat->poisson_ratio < 0.5))
    return kn_fail(err, KN_ERR_INVALID, "%s: poisson_ratio = %g, expected -1 < nu < 0.5", name, mat->poisson_ratio);
  if (!(mat->density > 0) || !isfinite(mat->density))
    return kn_fail(err, KN_ERR_INVALID, "%s: density = %g kg/m^3, expected a finite value > 0", name, mat->density);
  if (!(mat->density >= KN_MATERIAL_MIN_DENSITY && mat->density <= KN_MATERIAL_MAX_DENSITY))
    return kn_fail(err, KN_ERR_INVALID,
                   "%s: density = %g kg/m^3 is beyond what double precision resolves against the stiffness; expected "
                   "%g to %g kg/m^3",
                   name, mat->density, KN_MATERIAL_MIN_DENSITY, KN_MATERIAL_MAX_DENSITY);
  if (!(mat->mass_damping >= 0) || !isfinite(mat->mass_damping))
    return kn_fail(err, KN_ERR_INVALID, "%s: mass_damping = %g 1/s, expected a finite value >= 0", name,
                   mat->mass_damping);
  if (!(mat->stiffness_damping >= 0) || !isfinite(mat->stiffness_damping))
    return kn_fail(err, KN_ERR_INVALID, "%s: stiffness_damping = %g s, expected a finite value >= 0", name,
                   mat->stiffness_damping);
  return KN_OK;
}

// (E, nu) => (mu, lambda), the usual isotropic conversion (digest 6.1)
void kn_fem_lame(double youngs_modulus, double poisson_ratio, double* mu, double* lambda) {
  *mu = youngs_modulus / (2.0 * (1.0 + poisson_ratio));
  *lambda = youngs_modulus * poisson_ratio / ((1.0 + poisson_ratio) * (1.0 - 2.0 * poisson_ratio));
}
