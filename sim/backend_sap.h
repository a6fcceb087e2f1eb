/* knead/sim internal: the SAP adapter's state, shared by its three files (backend_sap.c: the step
 * in stages; sap_assemble.c: cliques and constraints into a kn_sap_problem; sap_state.c: saved
 * states). The adapter sees the world's cliques (coupling/coupling.h) and the step's contact
 * candidates (candidates.h); the robot-side constraints read the trees. */
#ifndef KNEAD_SIM_BACKEND_SAP_H
#define KNEAD_SIM_BACKEND_SAP_H

#include "sim/backend.h"
#include "sim/candidates.h"
#include "sim/stiction.h"

/* what a SAP constraint is, for messages */
typedef struct {
  kn_sap_kind kind;
  int tree, body, a, b; /* tree/body (joint) for limit/PD/coupler; FEM attachments: fem body, tree, link */
  int point;            /* contacts: the candidate; welds: the weld; attachments: the vertex */
} sap_info;

/* one side of a weld: a body of a tree with nv > 0, or a fixed frame in the world (tree -1) */
typedef struct {
  int tree, body;
  kn_pose X_bf; /* weld frame in the body frame (in the world when tree = -1) */
} sap_weld_side;

/* How a world clique enters SAP: a tree's dense A; a deformable's Schur complement on the DoFs its
 * constraints touch (digest 6.2), the whole of A in its sparse pattern (an MPM grid mostly under
 * contact), or A dense (contact.solver.fem_schur: false, the check of the elimination). */
typedef enum { SAP_ROUTE_TREE = 0, SAP_ROUTE_SCHUR, SAP_ROUTE_SPARSE, SAP_ROUTE_DENSE } sap_route;

typedef struct {
  int sap;              /* its SAP clique this step, -1 when none */
  sap_route route;
  int ndof, np;         /* DoFs; touched DoFs (P) */
  int* col;             /* per DoF: SAP column, -1 when not in the SAP clique */
  unsigned char* mark;  /* per DoF: touched by a constraint */
  int* P;
  double *S, *vs;       /* S (np^2) or NULL; the SAP clique's v* */
  double *diag_ref, *diag_used; /* per DoF: the diagonal SAP's regularization is estimated from, and
                                   the diagonal of the matrix SAP gets (the same array unless the
                                   route changes it) */
  double *diagA, *diagS, *dv, *dvall, *vnext;
  size_t cap, scap;     /* DoFs and S doubles allocated */
} sap_clique;

typedef struct {
  kn_sap_problem* prob;
  kn_sap_solver* solver;
  kn_sap_options opt;
  int fem_full, mpm_clique; /* contact.solver.fem_schur false; contact.solver.mpm_clique */
  sap_clique* q;            /* per world clique */
  int nq;
  kn_sim_candidates cand;
  kn_pose* X_WG;            /* per collider */
  double* reach;            /* per collider: speculative detection distance */
  kn_stiction stiction;     /* rigid contacts' anchors */
  kn_stiction_keyed fem_anchors, mpm_anchors; /* FEM vertices' and MPM particles' against rigid colliders */
  double *tau, *J, *Jv, *Jw; /* max tree nv; 3 x max SAP clique columns, twice; 3 x max nv twice */
  size_t jcap;
  double *v_guess, *v_next, *gamma, *force;
  size_t vcap, vcap_next, gcap, fcap;
  sap_info* info;
  int info_cap;
  sap_weld_side (*welds)[2];
  int first_attach, nattach; /* the FEM attachments' constraints */
  kn_mb_data** ahead;        /* per tree: its kinematics a step ahead at its commanded velocity (the attachments' arcs) */
  unsigned char* ahead_step; /* per tree: s->ahead is this step's */
  int nahead;
  double *q_ahead, *v_ahead; /* max tree nq; every tree's commanded velocity (add_pd), one after another */
} sap_state;

/* (sap_stages.c) the stages every adapter shares: the state's life (kn_backend's create and free),
 * 1 kinematics and controllers at t_n + dt (each tree clique begun with its explicit forces), 2
 * collider poses, reaches and candidates at q_n, 3 every clique's free motion, 4b-e the robot-side
 * constraints (after the cliques and contacts) */
kn_status kn_sap_adapter_create_state(kn_world* w, void** out, kn_error* err);
void kn_sap_adapter_free_state(void* state);
kn_status kn_sap_adapter_controllers(kn_world* w, sap_state* s, double dt, kn_error* err);
kn_status kn_sap_adapter_detect(kn_world* w, sap_state* s, double dt, kn_error* err);
kn_status kn_sap_adapter_free_motion(kn_world* w, double dt, kn_error* err);
kn_status kn_sap_adapter_robot(kn_world* w, sap_state* s, double dt, kn_error* err);

/* (sap_assemble.c) the SAP cliques of this step: every tree's, then each deformable's by its route
 * over the DoFs that the candidates and attachments touch */
kn_status kn_sap_adapter_cliques(kn_world* w, sap_state* s, kn_error* err);
/* every world clique in full (a deformable by its diagonal), for the nonlinear backends */
kn_status kn_sap_adapter_cliques_full(kn_world* w, sap_state* s, kn_error* err);
/* one SAP contact per candidate (they are the first constraints, in candidate order) */
kn_status kn_sap_adapter_contacts(kn_world* w, sap_state* s, kn_error* err);
/* the FEM attachments (fixed constraints), after the welds */
kn_status kn_sap_adapter_attachments(kn_world* w, sap_state* s, kn_error* err);
/* record constraint i's info (growing the table) */
kn_status kn_sap_adapter_note(sap_state* s, int i, sap_info info, kn_error* err);
/* (n doubles) => *p holds at least n */
kn_status kn_sap_adapter_grow(double** p, size_t* cap, size_t n, kn_error* err);

/* (sap_state.c) saved states: anchors and nothing else of the adapter */
void kn_sap_adapter_save(const kn_world* w, const void* state, kn_state_out* out);
kn_status kn_sap_adapter_load(const kn_world* w, void* state, kn_state_in* in, kn_error* err);

#endif
