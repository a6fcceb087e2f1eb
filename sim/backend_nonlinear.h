/* knead/sim internal: the nonlinear backends' adapter (backend_nonlinear.c) and the seam each
 * contact formulation plugs into it (ARCHITECTURE "The time step"). The adapter runs the stages
 * every nonlinear backend shares: controllers, detection, free motion, the robot-side terms, each
 * candidate's two material points, Newton over the sum (nonlinear/), advance, contact outputs. A
 * formulation (smooth friction: nl_smooth.c; penalty, ipc) adds only its contact term over those
 * points, its parameters from its scene keys, and its state between steps. */
#ifndef KNEAD_SIM_BACKEND_NONLINEAR_H
#define KNEAD_SIM_BACKEND_NONLINEAR_H

#include "nonlinear/nonlinear.h"
#include "sim/backend_sap.h"

/* what a formulation sees of one step */
typedef struct {
  kn_world* w;
  double dt;
  const kn_sim_candidates* cand; /* this step's contact candidates */
  const int *pa, *pb;            /* per candidate: its A and B sides' material points (-1: fixed) */
  kn_nl_points* points;          /* the step's points; a formulation may add its own after them */
  const int* offset;             /* per world clique: its first DoF in v */
  int nv;                        /* DoFs of v */
  double* guess;                 /* the solve's first guess (nv: each clique's v_start), which begin
                                    may change (ipc: moved back where its path from v = 0 would
                                    cross a mesh pair) */
} kn_nl_step;

typedef struct {
  const char* name;
  /* (world) => *self; its scene keys read and checked (errors name the key); it may change the
   * solver's options and widen detection (*extra_margin, m) */
  kn_status (*create)(kn_world* w, void** self, kn_nl_options* opt, double* extra_margin, kn_error* err);
  void (*destroy)(void* self);
  /* the step's contact term over st->points => term (its self is the formulation's), and whether
   * the problem is a potential (minimized) or a root finding */
  kn_status (*begin)(void* self, const kn_nl_step* st, kn_nl_term* term, int* potential, kn_error* err);
  /* (optional) after a converged solve at v: 1 to solve the step again from v (the stiffness
   * raised); attempt counts from 0, and the adapter stops after attempt 5 */
  int (*after_solve)(void* self, const kn_nl_step* st, const double* v, int attempt);
  /* candidate i's contact force on its B side at v [N] (world) */
  void (*force)(void* self, const kn_nl_step* st, int i, const double* v, double f[3]);
  /* (optional) after every clique advanced to v: what the next step reads (anchors) */
  kn_status (*end_step)(void* self, const kn_nl_step* st, const double* v, kn_error* err);
  /* saved states: the formulation's part, after the adapter's MPM warm starts (all or nothing on
   * load, and reading every byte given) */
  void (*save)(const void* self, kn_state_out* out);
  kn_status (*load)(void* self, kn_state_in* in, kn_error* err);
  /* (optional) after a Newton solve failed, v its last iterate: the step's worst contact there into
   * buf (n bytes; left "" when there is none), which the adapter adds to the error; its sides, point,
   * gap and force, as kn_nl_describe_contact writes them */
  void (*describe_failure)(void* self, const kn_nl_step* st, const double* v, char* buf, size_t n);
  /* (optional) after the candidates' rows: the step's contacts that are no candidates (mesh pairs)
   * at v, each through kn_sim_contacts_add_pair; force gives 0 for the candidates they replace */
  kn_status (*record)(void* self, const kn_nl_step* st, const double* v, kn_error* err);
} kn_nl_formulation;

/* candidate i at v => its gap along the detected normal, phi0 + dt n . (w_b - w_a) [m] (< 0:
 * penetrating), the material points' affine maps */
double kn_nl_contact_gap(const kn_nl_step* st, int i, const double* v);
/* candidate i, its gap [m] and force on its B side f [N] => "the contact between 'a' and 'b' at
 * (x, y, z) m: gap g m, normal force fn N, |f| F N" (the names of kn_sim_candidate_describe, the
 * point where detection found it at the step start) into buf */
void kn_nl_describe_contact(const kn_nl_step* st, int i, double gap, const double f[3], char* buf, size_t n);
/* describe_failure by the largest force (a formulation's force at v): the candidate pushed hardest,
 * with its kn_nl_contact_gap; buf "" when no candidate carries a force */
void kn_nl_describe_strongest(void (*force)(void* self, const kn_nl_step* st, int i, const double* v, double f[3]),
                              void* self, const kn_nl_step* st, const double* v, char* buf, size_t n);

/* the kn_backend functions of every nonlinear backend; a backend's create is
 * kn_nl_backend_create with its formulation */
kn_status kn_nl_backend_create(kn_world* w, const kn_nl_formulation* f, void** out, kn_error* err);
kn_status kn_nl_backend_step(kn_world* w, void* state, kn_error* err);
void kn_nl_backend_free(void* state);
void kn_nl_backend_save(const kn_world* w, const void* state, kn_state_out* out);
kn_status kn_nl_backend_load(const kn_world* w, void* state, kn_state_in* in, kn_error* err);

#endif
