/* knead/sim internal: the scene's checks (checks.c) as the world builds, steps and reports them. */
#ifndef KNEAD_SIM_CHECKS_INTERNAL_H
#define KNEAD_SIM_CHECKS_INTERNAL_H

#include <jansson.h>
#include <stdio.h>

#include "sim/sim.h"

/* (built world) => w->checks with every name resolved (errors name checks[i].body ...), and the
 * t = 0 state observed; w->checks stays NULL when the scene has no checks */
kn_status kn_sim_checks_create(kn_world* w, kn_error* err);
void kn_sim_checks_free(kn_world* w);
/* after a successful step: every check whose window holds w->t takes its sample */
void kn_sim_checks_observe(kn_world* w);
/* a failed step at time t (solver_converged fails with the message) */
void kn_sim_checks_step_failed(kn_world* w, const char* message);
/* (world) => summary.json's "checks" list (new reference), NULL when it has no checks (or no memory) */
json_t* kn_sim_checks_json(const kn_world* w);

#endif
