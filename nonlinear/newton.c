/* The nonlinear step's Newton solve (nonlinear.h): assembly over cliques, the robot-side
 * potential and the backend's contact term; a Newton direction from one sparse factorization; a
 * backtracking line search on the energy (potential problems) or on the scaled residual norm. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nonlinear/nonlinear_internal.h"

struct kn_nl_solver {
  kn_nl_linsolve* ls;
  kn_nl_triplets T, S; /* the Jacobian; its symmetric PSD part (iterative) */
  double *r, *p, *vt, *rt, *dinv, *v, *vpass, *vx, *rx, *vk, *mass;
  int cap;
  double tau;       /* the last shift CHOLMOD accepted (newton_direction), 0: none yet */
  int exact_factor; /* 1: the kept factor is the exact Hessian's at the last direction's iterate */
  int* offset;
  int capq;
};

kn_nl_options kn_nl_options_default(void) {
  return (kn_nl_options){.abs_tol = 1e-8, .rel_tol = 1e-8, .max_iterations = 100, .c1 = 1e-4, .backtrack = 0.5,
                         .max_line_search = 40, .iterative = 1, .max_passes = 10};
}

kn_nl_solver* kn_nl_solver_create(void) {
  kn_nl_solver* s = kn_calloc(1, sizeof *s);
  if (!s) return NULL;
  s->ls = kn_nl_linsolve_create();
  if (!s->ls) {
    free(s);
    return NULL;
  }
  return s;
}

void kn_nl_solver_free(kn_nl_solver* s) {
  if (!s) return;
  kn_nl_linsolve_free(s->ls);
  kn_nl_triplets_free(&s->T);
  kn_nl_triplets_free(&s->S);
  free(s->r), free(s->p), free(s->vt), free(s->rt), free(s->dinv), free(s->v), free(s->vpass), free(s->vx), free(s->rx);
  free(s->vk), free(s->mass);
  free(s->offset);
  free(s);
}

const double* kn_nl_solver_iterate(const kn_nl_solver* s) { return s->v; }

int kn_nl_problem_nv(const kn_nl_problem* p) {
  int n = 0;
  for (int c = 0; c < p->ncliques; c++) n += p->cliques[c].ops->ndof(p->cliques[c].self);
  return n;
}

static kn_status reserve(kn_nl_solver* s, const kn_nl_problem* p, int n, kn_error* err) {
  if (p->ncliques + 1 > s->capq) {
    free(s->offset);
    s->offset = malloc(((size_t)p->ncliques + 1) * sizeof *s->offset);
    s->capq = s->offset ? p->ncliques + 1 : 0;
    if (!s->offset) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  s->offset[0] = 0;
  for (int c = 0; c < p->ncliques; c++) s->offset[c + 1] = s->offset[c] + p->cliques[c].ops->ndof(p->cliques[c].self);
  if (n + 1 <= s->cap) return KN_OK;
  double** a[] = {&s->r, &s->p, &s->vt, &s->rt, &s->dinv, &s->v, &s->vpass, &s->vx, &s->rx, &s->vk, &s->mass};
  s->cap = 0;
  for (size_t k = 0; k < sizeof a / sizeof *a; k++) {
    free(*a[k]);
    *a[k] = malloc(((size_t)n + 1) * sizeof(double));
    if (!*a[k]) return kn_fail(err, KN_ERR_NOMEM, "out of memory (%d DoFs)", n);
  }
  s->cap = n + 1;
  return KN_OK;
}

// clique c's Hessian view into T at offset o (both triangles)
static void add_csc(kn_nl_triplets* T, const kn_csc_view* H, int o) {
  for (int j = 0; j < H->n; j++)
    for (int k = H->p[j]; k < H->p[j + 1]; k++) {
      int i = H->i[k];
      kn_nl_triplets_add(T, o + i, o + j, H->x[k]);
      if (i != j) kn_nl_triplets_add(T, o + j, o + i, H->x[k]);
    }
}

// a symmetric entry into the Jacobian and its symmetric part
typedef struct {
  kn_nl_triplets *T, *S;
} both;
static void add_both(void* u, int i, int j, double x) {
  both* b = u;
  kn_nl_triplets_add(b->T, i, j, x);
  if (b->S) kn_nl_triplets_add(b->S, i, j, x);
}

/* (v) => E, r and, when T is given, the Jacobian (and its symmetric PSD part into S when given) */
static kn_status eval(kn_nl_solver* s, const kn_nl_problem* p, const double* v, double* E, double* r,
                      kn_nl_triplets* T, kn_nl_triplets* S, kn_error* err) {
  double e = 0;
  for (int c = 0; c < p->ncliques; c++) {
    const kn_clique* cq = &p->cliques[c];
    int o = s->offset[c];
    double ec = 0;
    kn_csc_view H;
    kn_status st = cq->ops->potential(cq->self, v + o, &ec, r + o, T ? &H : NULL, err);
    if (st) return kn_error_prefix(err, "potential of '%s': ", cq->ops->name(cq->self));
    e += ec;
    if (T) add_csc(T, &H, o);
    if (T && S) add_csc(S, &H, o);
  }
  if (p->robot && kn_sap_problem_num_constraints(p->robot) > 0) {
    double L = 0;
    both b = {T, S};
    kn_status st = kn_sap_constraints_potential(p->robot, 0, v, &L, r, T ? add_both : NULL, &b, err);
    if (st) return st;
    e += L;
  }
  if (p->contact.eval) {
    kn_status st = p->contact.eval(p->contact.self, v, &e, r, T, T ? S : NULL, err);
    if (st) return st;
  }
  if (E) *E = e;
  return KN_OK;
}

kn_status kn_nl_eval(kn_nl_solver* s, const kn_nl_problem* p, const double* v, double* E, double* r,
                     kn_nl_triplets* T, kn_error* err) {
  int n = kn_nl_problem_nv(p);
  kn_status st = reserve(s, p, n, err);
  if (st) return st;
  if (T) kn_nl_triplets_reset(T, n);
  return eval(s, p, v, E, r, T, NULL, err);
}

// max |D r| and where; the scaled 2-norm in *norm2
static double scaled(const kn_nl_solver* s, int n, const double* r, int* worst, double* norm2) {
  double m = 0, q = 0;
  for (int i = 0; i < n; i++) {
    double e = fabs(r[i] * s->dinv[i]);
    q += e * e;
    if (!(e <= m)) m = e, *worst = i;
  }
  *norm2 = sqrt(q);
  return m;
}

static double max_abs(const double* x, int n) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
  return m;
}

// the clique holding DoF i
static const char* dof_owner(const kn_nl_solver* s, const kn_nl_problem* p, int i) {
  for (int c = 0; c < p->ncliques; c++)
    if (i < s->offset[c + 1]) return p->cliques[c].ops->name(p->cliques[c].self);
  return "?";
}

/* Backtracking from alpha along s->p: on the energy (Armijo; merit 1) or on ||D r|| (relaxed by the
 * forcing term sigma; merit 0), at most `halvings` times. On acceptance s->vt, s->rt, *Et hold the
 * trial; returns 1, and the evaluations in *count. */
static kn_status line_search(kn_nl_solver* s, const kn_nl_problem* p, const kn_nl_options* o, int n, int energy,
                             double E, double res2, double sigma, double alpha, int halvings, int blind, double* Et,
                             int* count, int* accepted, double* alpha_out, kn_error* err) {
  double slope = 0;
  for (int i = 0; i < n; i++) slope += s->r[i] * s->p[i];
  *accepted = 0;
  int ls;
  for (ls = 0; ls <= halvings && alpha > 0; ls++, alpha *= o->backtrack) {
    for (int i = 0; i < n; i++) s->vt[i] = s->v[i] + alpha * s->p[i];
    kn_status st = eval(s, p, s->vt, Et, s->rt, NULL, NULL, err);
    if (st) return st;
    int wt = 0;
    double res2t;
    if (!isfinite(scaled(s, n, s->rt, &wt, &res2t)) || !isfinite(*Et)) continue;
    if (energy) {
      /* Armijo with a relative slop for the round-off of E near the minimum; a step that lowers
       * the scaled residual is taken when E cannot tell */
      double slop = 1e-13 * fmax(1.0, fabs(E));
      if (slope < 0 && *Et <= E + o->c1 * alpha * slope + slop) *accepted = 1;
      else if (fabs(*Et - E) <= slop && res2t < res2) *accepted = 1;
      /* blind: the Newton step is within the tolerance, its energy change (-slope/2) below E's
       * round-off (the arch's stones: 7.8e-14 J against +-7e-13 J), so the residual decides */
      else if (blind && res2t <= (1 - o->c1 * alpha) * res2) *accepted = 1;
    } else if (res2t <= (1 - o->c1 * alpha * (1 - sigma)) * res2) {
      *accepted = 1;
    }
    if (*accepted) break;
  }
  *alpha_out = alpha;
  *count += ls + (*accepted ? 1 : 0);
  return KN_OK;
}

/* A full Newton step was accepted (s->vt = v + alpha p, s->rt its residual, *Et its energy). The
 * energy's true curvature along p, from the two gradients' secant, over the model's (the projected
 * Hessian's, p^T H p = -r^T p): rho. Where rho < 1/2 the projected Hessian overstates the curvature
 * along p (a pair's dropped negative curvature: two corners pressed together roll over each other
 * like balls of radius d) and the step is short by 1 / rho; rho <= 0, the energy still falls along p
 * (a saddle's unstable direction). Then the step is extended to alpha / rho (x4 when rho <= 0), at
 * most 64 alpha, capped by max_step, and again while the energy keeps falling (at most 8 times);
 * the trial with the lowest energy is taken (kn_nl_options.extend_steps); *count += the evaluations. */
static kn_status extend_step(kn_nl_solver* s, const kn_nl_problem* p, int n, double* alpha, double* Et, int* count,
                             kn_error* err) {
  double rp = 0, dp = 0;
  for (int i = 0; i < n; i++) rp += s->r[i] * s->p[i], dp += (s->rt[i] - s->r[i]) * s->p[i];
  if (!(rp < 0)) return KN_OK;
  double rho = dp / (*alpha * -rp);
  if (!(rho < 0.5)) return KN_OK;
  double a = *alpha;
  for (int k = 0; k < 8; k++) {
    double f = rho > 0 ? fmin(1.0 / rho, 64.0) : 4.0, an = a * f;
    if (p->contact.max_step) {
      for (int i = 0; i < n; i++) s->rx[i] = an * s->p[i];
      an *= fmin(1.0, p->contact.max_step(p->contact.self, s->v, s->rx));
    }
    if (!(an > a * 1.01)) break;
    for (int i = 0; i < n; i++) s->vx[i] = s->v[i] + an * s->p[i];
    double Ex;
    kn_status st = eval(s, p, s->vx, &Ex, s->rx, NULL, NULL, err);
    if (st) return st;
    (*count)++;
    if (!isfinite(Ex) || !(Ex < *Et)) break;
    double dx = 0;
    for (int i = 0; i < n; i++) dx += (s->rx[i] - s->rt[i]) * s->p[i];
    rho = dx / ((an - a) * -rp);
    double* t = s->vt;
    s->vt = s->vx, s->vx = t, t = s->rt, s->rt = s->rx, s->rx = t;
    *Et = Ex, a = an;
    if (!(rho < 0.5)) break;
  }
  *alpha = a;
  return KN_OK;
}

/* Root finding on a piecewise-smooth residual where backtracking cut Newton's step short (below
 * 1/32, or no decrease): the Jacobian is the iterate's piece's, and when the root lies on another
 * piece that the line to it does not cross, the next direction is as short again. A block coming
 * to rest with every contact still sliding: the sliding Jacobian has no stiffness along the slide,
 * its step overshoots, and the line passes each anchor outside its cone (radius mu |phi|, 1e-9 m at
 * k 1e5), so that no trial sticks; the MPM incline's stop at k 1e5 backtracked to 1e-4 for 100
 * iterations. An active-set step instead (primal-dual, as for a complementarity problem): pieces
 * recorded by the term (kn_nl_term.pieces) and continued to v give the Newton step p' of that smooth
 * residual. First the full step's pieces with its sliding contacts sticking (from the sticking side
 * Newton sees the slide: a step past the cone comes back sliding), then the pieces v + p' landed on,
 * at most four rounds; v + p' is taken when it lowers the true ||D r|| below the backtracking's
 * point and by the sufficient decrease of a full step. T and S are overwritten; s->vt holds the
 * step taken. */
static kn_status piece_step(kn_nl_solver* s, const kn_nl_problem* p, const kn_nl_options* o, int n, double res2,
                            int* accepted, double* alpha, int* count, kn_nl_stats* st0, kn_error* err) {
  if (!p->contact.pieces || (*accepted && *alpha >= 1.0 / 32)) return KN_OK;
  double best = res2, E = 0, rk = 0;
  int w = 0;
  if (*accepted) { /* the backtracking's point, kept unless beaten */
    memcpy(s->vk, s->vt, (size_t)n * sizeof(double));
    kn_status st = eval(s, p, s->vt, &E, s->rt, NULL, NULL, err);
    if (st) return st;
    scaled(s, n, s->rt, &w, &best);
  }
  for (int i = 0; i < n; i++) s->vt[i] = s->v[i] + s->p[i]; /* the full step's pieces first */
  kn_status st = KN_OK;
  int took = 0;
  for (int round = 0; round < 4 && !took; round++) {
    p->contact.pieces(p->contact.self, s->vt, round == 0 ? 2 : 1);
    kn_nl_triplets_reset(&s->T, n);
    kn_nl_triplets_reset(&s->S, n);
    if ((st = eval(s, p, s->v, &E, s->rt, &s->T, NULL, err))) break;
    for (int i = 0; i < n; i++) s->rt[i] = -s->rt[i];
    if ((st = kn_nl_linsolve_solve(s->ls, &s->T, 0, s->rt, s->vt, err))) break; /* p' into vt */
    st0->factorizations++;
    p->contact.pieces(p->contact.self, NULL, 0);
    for (int i = 0; i < n; i++) s->vt[i] += s->v[i];
    if ((st = eval(s, p, s->vt, &E, s->rt, NULL, NULL, err))) break;
    (*count)++;
    if (isfinite(scaled(s, n, s->rt, &w, &rk)) && rk < best && rk <= (1 - o->c1) * res2) took = 1;
  }
  p->contact.pieces(p->contact.self, NULL, 0);
  if (st == KN_ERR_NOMEM) return st;
  if (took) {
    *accepted = 1, *alpha = 1;
    st0->active_set_steps++;
  } else if (*accepted) {
    memcpy(s->vt, s->vk, (size_t)n * sizeof(double));
  }
  return KN_OK;
}

/* Where CHOLMOD refuses the exact Hessian H (the twisted rods as they wrap): the direction of
 * H + tau M, M the mass diagonal (the scale of D = M^-1), tau the smallest of a x4 sequence CHOLMOD
 * accepts, from half the last accepted one (1e-2 the first time; kept across iterations and steps).
 * A Levenberg-Marquardt step: positive definite, so a descent direction; it keeps H's curvature
 * where H has it (the per-pair projection adds every pair's dropped b' grad^2 s, so Newton's model
 * exceeds the energy's curvature and converges linearly) and adds only tau M where it has not. */
static const double shift_first = 1e-2, shift_grow = 4, shift_max = 1e8;

/* the Newton direction in s->p, of the Hessian s->T holds (the term's exact one where it has a
 * projection, kn_nl_term.project); where CHOLMOD finds that one not positive definite, of it
 * shifted by tau M (above), and where no shift up to shift_max is accepted, of the Hessian
 * assembled again at s->v with the term's projection on (redo: at once) */
static kn_status newton_direction(kn_nl_solver* s, const kn_nl_problem* p, int n, int k, double res, int worst,
                                  int redo, kn_nl_stats* st0, kn_error* err) {
  kn_status st = KN_OK;
  if (redo) { /* the term's projection was just turned on: its Hessian again at s->v */
    double E;
    kn_nl_triplets_reset(&s->T, n);
    if ((st = eval(s, p, s->v, &E, s->r, &s->T, NULL, err))) return kn_error_prefix(err, "Newton iteration %d: ", k);
    st0->projections++;
  }
  for (int i = 0; i < n; i++) s->rt[i] = -s->r[i];
  s->exact_factor = 0;
  if (!redo && p->contact.project) {
    kn_nl_shift sh = {.d = s->mass, .tau_start = s->tau > 0 ? s->tau / 2 : shift_first, .grow = shift_grow,
                      .tau_max = shift_max};
    st = kn_nl_linsolve_shifted(s->ls, &s->T, &sh, s->rt, s->p, err);
    st0->factorizations += sh.factorizations;
    if (!st && sh.tau > 0) s->tau = sh.tau, st0->shifts++;
    s->exact_factor = !st && sh.tau == 0;
  } else {
    st = kn_nl_linsolve_solve(s->ls, &s->T, 1, s->rt, s->p, err);
    st0->factorizations++;
    s->exact_factor = !st && !redo && !p->contact.project;
  }
  if (st == KN_ERR_NUMERIC && !redo && p->contact.project && p->contact.project(p->contact.self, 1))
    return newton_direction(s, p, n, k, res, worst, 1, st0, err);
  if (st) return kn_error_prefix(err, "Newton iteration %d (residual %.3g m/s at '%s'): ", k, res, dof_owner(s, p, worst));
  return KN_OK;
}

/* The step test at an iterate reached by a full step p_k of the exact Hessian H_k (its factor
 * kept): the simplified Newton step pbar = -H_k^-1 r(v_k+1), two triangular solves, in place of the
 * Newton step p = -H_k+1^-1 r(v_k+1) and its factorization. Where Newton contracts (theta =
 * |pbar| / |p_k| <= 1/2, Deuflhard's monitor) p - pbar = H_k+1^-1 (H_k - H_k+1) pbar is at most
 * ~2 theta |pbar|, so |pbar| (1 + 2 theta) <= tol meets IPC's |p|inf / h < eps_d. Returns 1 when it
 * does (*pstep = |pbar|); 0: the caller factorizes. */
static int step_estimate(kn_nl_solver* s, int n, double plast, double tol, double* pstep) {
  for (int i = 0; i < n; i++) s->rt[i] = -s->r[i];
  kn_error e2 = {0};
  if (kn_nl_linsolve_resolve(s->ls, n, s->rt, s->vx, &e2)) return 0;
  double pbar = max_abs(s->vx, n), theta = plast > 0 ? pbar / plast : 1;
  if (!(theta <= 0.5) || !(pbar * (1 + 2 * theta) <= tol)) return 0;
  *pstep = pbar;
  return 1;
}

/* the Hessian of the next assembly: the term's exact one (kn_nl_term.project) */
static void exact_hessian(const kn_nl_problem* p) {
  if (p->contact.project) p->contact.project(p->contact.self, 0);
}

/* Newton from s->v (in place: on failure s->v is the last accepted iterate), minimizing when
 * potential is 1, else root finding (-1: a lagged pass's); statistics added to *st0 */
static kn_status newton(kn_nl_solver* s, const kn_nl_problem* p, const kn_nl_options* opt, int potential, int n,
                        int max_iterations, kn_nl_stats* st0, kn_error* err) {
  potential = potential > 0;
  kn_nl_options o = *opt;
  o.max_iterations = max_iterations;
  kn_status st;
  double E = 0, Et = 0, res2 = 0, res2_prev = 1;
  int worst = 0;
  /* root finding keeps the Jacobian's symmetric PSD part too: BiCGSTAB's preconditioner and the
   * fallback's Hessian */
  kn_nl_triplets* S = potential ? NULL : &s->S;
  kn_nl_triplets_reset(&s->T, n);
  kn_nl_triplets_reset(&s->S, n);
  exact_hessian(p);
  if ((st = eval(s, p, s->v, &E, s->r, &s->T, S, err))) return kn_error_prefix(err, "Newton iteration 0: ");
  double res = scaled(s, n, s->r, &worst, &res2);
  if (st0->iterations == 0 && st0->passes == 0) st0->residual_start = res;
  int k = 0, stalls = 0, at_floor = 0;
  double pstep = 0, plast = 0;
  int full_exact = 0; /* the last iteration was a full step of the exact Hessian (step_estimate) */
  for (;; k++) {
    if (!isfinite(res) || (potential && !isfinite(E)))
      return kn_fail(err, KN_ERR_NUMERIC, "Newton iteration %d: the residual is not finite (DoF %d of '%s')", k, worst,
                     dof_owner(s, p, worst));
    double tol = o.abs_tol + o.rel_tol * max_abs(s->v, n);
    /* step_test (potential problems): D r within tol is not enough, the Newton step must be too */
    int have_p = res <= tol && potential && o.step_test;
    if (have_p && full_exact && step_estimate(s, n, plast, tol, &pstep)) {
      st0->step_estimates++;
      break;
    }
    const int proj0 = st0->projections, shift0 = st0->shifts;
    if (have_p && (st = newton_direction(s, p, n, k, res, worst, 0, st0, err))) return st;
    pstep = have_p ? max_abs(s->p, n) : 0;
    if (res <= tol && pstep <= tol) break;
    /* at the residual's round-off floor: the last step was blind (its max |p| within tol: the step
     * test met) and moved nothing measurable (max |p| <= 1e-6 tol), and did not halve D r, which blind
     * steps otherwise cut quadratically (x0.007, irods2's trace), within 100 tol (no decrease left,
     * below); the rods at h 2: 3.902e-7 m/s against eps_d 3.05e-7 with |p| 8e-17, for 94 iterations
     * until the cap. Without the 1e-6 the card frame's step 9 (test_ipc_card_house) stopped at 2.5
     * eps_d after two blind steps that did not halve D r; without the rule it converges to eps_d.
     * Or, whatever D r is, when that step moved no position beyond its round-off (o.floor_step):
     * then no iteration can change the answer, and D r is the round-off of large opposed terms
     * divided by a small mass (the rods at h 1 with their ends on the arcs: D r 1.7e-4-3.8e-4 m/s
     * against eps_d 3.05e-7 with |p| 1.6e-16 m/s, for 180 iterations until the cap) */
    if (at_floor && (res <= 100 * tol || plast <= o.floor_step)) break;
    if (k >= o.max_iterations)
      return kn_fail(err, KN_ERR_NUMERIC,
                     "Newton did not converge in %d iterations: velocity residual %.3g m/s (from %.3g)%s at DoF %d of '%s'",
                     k, res, st0->residual_start, pstep > tol ? ", but the Newton step's was larger" : "", worst,
                     dof_owner(s, p, worst));
    int accepted = 0, blind = 0;
    double alpha_taken = 0, res_before = res, cap = 1;
    st0->iterations++;
    if (potential) {
      /* minimization: the Newton direction of the exact Hessian, or of the term's projected one
       * where that is not positive definite (newton_direction), Armijo on the energy */
      if (!have_p && (st = newton_direction(s, p, n, k, res, worst, 0, st0, err))) return st;
      const int indefinite = st0->projections > proj0 || st0->shifts > shift0;
      double alpha = 1;
      for (int redo = 0;; redo = 1) {
        cap = alpha = p->contact.max_step ? fmin(1.0, p->contact.max_step(p->contact.self, s->v, s->p)) : 1.0;
        blind = max_abs(s->p, n) <= tol;
        if ((st = line_search(s, p, &o, n, 1, E, res2, 0, alpha, o.max_line_search, blind, &Et,
                              &st0->line_search_iterations, &accepted, &alpha_taken, err)))
          return kn_error_prefix(err, "Newton iteration %d: ", k);
        /* a positive definite exact Hessian whose direction the line search cuts below 1/32 of the
         * admissible step (a barrier pair switching distance case: an FEM cube dropped edge on edge
         * crept at 1.9e-6 of it): the iteration again with the projected Hessian */
        if (redo || indefinite || (accepted && alpha_taken >= alpha / 32) || !p->contact.project ||
            !p->contact.project(p->contact.self, 1))
          break;
        if ((st = newton_direction(s, p, n, k, res, worst, 1, st0, err))) return st;
      }
      /* a full step of a Hessian that overstates the curvature along p (a projection's dropped
       * negative curvature near a saddle: the twisted rods as they wrap, the card frame's corners):
       * extended while the energy falls */
      if (accepted && alpha_taken == alpha && !blind && (o.extend_steps || indefinite) &&
          (st = extend_step(s, p, n, &alpha_taken, &Et, &st0->line_search_iterations, err)))
        return kn_error_prefix(err, "Newton iteration %d: ", k);
    } else {
      /* root finding: the Newton direction of the whole Jacobian (BiCGSTAB's inexact one, or the
       * LU's) with backtracking on ||D r|| */
      for (int exact = !o.iterative; exact <= 1 && !accepted; exact++) {
        for (int i = 0; i < n; i++) s->rt[i] = -s->r[i];
        double sigma = 0;
        if (!exact) {
          sigma = k == 0 ? 0.01 : fmin(0.01, pow(res2 / res2_prev, 1.6180339887498949));
          int its = 0;
          kn_error e2 = {0};
          st = kn_nl_linsolve_bicgstab(s->ls, &s->T, &s->S, s->rt, s->p, sigma, 100, &its, &e2);
          st0->krylov_iterations += its, st0->factorizations++;
          if (st == KN_ERR_NOMEM) return kn_fail(err, st, "%s", e2.msg);
          if (st) {
            st0->lu_fallbacks++;
            continue;
          }
        } else {
          if ((st = kn_nl_linsolve_solve(s->ls, &s->T, 0, s->rt, s->p, err)))
            return kn_error_prefix(err, "Newton iteration %d (residual %.3g m/s at '%s'): ", k, res, dof_owner(s, p, worst));
          st0->factorizations++;
        }
        if ((st = line_search(s, p, &o, n, 0, E, res2, sigma, 1.0, o.max_line_search, 0, &Et,
                              &st0->line_search_iterations, &accepted, &alpha_taken, err)))
          return kn_error_prefix(err, "Newton iteration %d: ", k);
        if (!accepted && !exact) st0->lu_fallbacks++;
      }
      if ((st = piece_step(s, p, &o, n, res2, &accepted, &alpha_taken, &st0->line_search_iterations, st0, err)))
        return kn_error_prefix(err, "Newton iteration %d: ", k);
    }
    /* no decrease left: converged to round-off when the residual is within 100 times the tolerance
     * (a stiff penalty's r = 1e4 N/m x 1e-16 m) */
    if (!accepted && res <= 100 * tol) break;
    if (!accepted)
      return kn_fail(err, KN_ERR_NUMERIC,
                     "Newton iteration %d: the line search found no decrease (velocity residual %.3g m/s at DoF %d of "
                     "'%s')",
                     k, res, worst, dof_owner(s, p, worst));
    /* root finding that can fall back on lagged passes: five short steps in a row are a stall */
    stalls = alpha_taken < 1.0 / 32 ? stalls + 1 : 0;
    if (!potential && p->contact.lag && stalls >= 5)
      return kn_fail(err, KN_ERR_NUMERIC, "Newton iteration %d: stalled (five steps below 1/32; velocity residual %.3g m/s "
                     "at DoF %d of '%s')", k, res, worst, dof_owner(s, p, worst));
    full_exact = potential && s->exact_factor && alpha_taken == 1;
    plast = max_abs(s->p, n);
    memcpy(s->v, s->vt, (size_t)n * sizeof(double));
    if (potential && cap < 1 && p->contact.stiffen && p->contact.stiffen(p->contact.self, s->v))
      full_exact = 0; /* a new energy: the kept factor is not its Hessian's */
    res2_prev = res2;
    kn_nl_triplets_reset(&s->T, n);
    kn_nl_triplets_reset(&s->S, n);
    exact_hessian(p);
    if ((st = eval(s, p, s->v, &E, s->r, &s->T, S, err))) return kn_error_prefix(err, "Newton iteration %d: ", k + 1);
    res = scaled(s, n, s->r, &worst, &res2);
    at_floor = blind && plast <= 1e-6 * tol && !(res < 0.5 * res_before);
  }
  st0->residual = fmax(res, pstep);
  st0->energy = E;
  return KN_OK;
}

kn_status kn_nl_solve(kn_nl_solver* s, const kn_nl_problem* p, const kn_nl_options* opt, const double* v0, double* v,
                      kn_nl_stats* stats, kn_error* err) {
  kn_nl_options o = opt ? *opt : kn_nl_options_default();
  int n = kn_nl_problem_nv(p);
  kn_nl_stats st0 = {0};
  kn_status st = reserve(s, p, n, err);
  if (st) return st;
  for (int c = 0; c < p->ncliques; c++) {
    const kn_clique* q = &p->cliques[c];
    (q->ops->mass ? q->ops->mass : q->ops->diagonal)(q->self, s->dinv + s->offset[c]);
  }
  for (int i = 0; i < n; i++) s->mass[i] = s->dinv[i] > 0 ? s->dinv[i] : 1.0, s->dinv[i] = 1.0 / s->mass[i];
  memcpy(s->v, v0, (size_t)n * sizeof(double));
  int lag = !p->potential && p->contact.lag;
  kn_error e2 = {0};
  /* root finding with a term that can lag: Newton on the whole residual (at most 30 iterations,
   * or the options' limit when lower, stopped at a stall); where it fails (a kink of a PD's effort clamp, the friction transition far
   * from the root), a pass of the lagged problem from the last pass's answer — the term frozen
   * there, a convex minimization — and Newton again from the new answer. The passes are the
   * fixed-point iteration of lagging; a root of r is their fixed point, and Newton converges fast
   * near it. */
  memcpy(s->vpass, s->v, (size_t)n * sizeof(double));
  for (int pass = 0;; pass++) {
    st = newton(s, p, &o, p->potential, n, lag && pass < o.max_passes && o.max_iterations > 30 ? 30 : o.max_iterations, &st0, lag ? &e2 : err);
    if (st == KN_OK || !lag || st == KN_ERR_NOMEM || pass == o.max_passes) break;
    memcpy(s->v, s->vpass, (size_t)n * sizeof(double));
    p->contact.lag(p->contact.self, s->v, 1);
    /* a term that is no potential when lagged (lag_roots): a root-finding pass of at most 30
     * iterations; where it stops short, its last iterate still starts the next pass */
    kn_status sl = p->contact.lag_roots ? newton(s, p, &o, -1, n, o.max_iterations > 30 ? 30 : o.max_iterations, &st0, &e2)
                                        : newton(s, p, &o, 1, n, o.max_iterations, &st0, &e2);
    p->contact.lag(p->contact.self, s->v, 0);
    st0.passes++;
    if (sl && p->contact.lag_roots && sl != KN_ERR_NOMEM) sl = KN_OK;
    if (sl) {
      st = sl;
      break;
    }
    memcpy(s->vpass, s->v, (size_t)n * sizeof(double));
  }
  if (st && lag) {
    kn_fail(err, st, "%s", e2.msg);
    if (st0.passes) kn_error_prefix(err, "after %d lagged passes: ", st0.passes);
  }
  if (st) return st;
  memcpy(v, s->v, (size_t)n * sizeof(double));
  if (stats) *stats = st0;
  return KN_OK;
}
