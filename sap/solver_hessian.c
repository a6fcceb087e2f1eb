/* SAP's Newton matrix H = A + sum_i J_i^T G_i J_i (digest §4.6) in the clique blocks the linear
 * solver factors (solver_internal.h): the J^T G J kernels (dense, by nonzero column, by node), a
 * sparse clique's block in A's pattern (assemble_sparse, with the per-column lists of constraint
 * sides it reads, built once per solve), and the whole assembly (kn_sap_assemble_H). */
#include <stdlib.h>
#include <string.h>

#include "sap/solver_internal.h"

//---- Hessian H = A + sum_i J_i^T G_i J_i in clique blocks ----
/* Only the lower triangle of the diagonal blocks is assembled: both factorizations read nothing
 * else (kn_chol_factor on the dense path, the lower CSC on CHOLMOD's). */

static const double* clique_A(const kn_sap_problem* p, int c) { return p->reals + p->cliques[c].A_at; }

/* out (na x nb) += Ja^T G Jb with Ja rows x na, Jb rows x nb, G rows x rows; lower = 1 (a diagonal
 * block, Ja = Jb): only the entries (a, t) with t <= a. Inlined by add_JtGJ with rows a constant
 * for contacts (3), so that the row sums unroll and the column loops vectorize; every sum keeps
 * the order 0 + x_0 + x_1 + ..., so the result does not depend on which copy ran. */
static inline void JtGJ_rows(const double* Ja, int na, const double* G, const double* Jb, int nb, const int rows,
                             int lower, double* out) {
  double GJ[KN_SAP_MAX_ROWS * 64];
  for (int t0 = 0; t0 < nb; t0 += 64) {
    int tn = nb - t0 < 64 ? nb - t0 : 64;
    for (int r = 0; r < rows; r++)
      for (int t = 0; t < tn; t++) {
        double sum = 0;
        for (int q = 0; q < rows; q++) sum += G[r * rows + q] * Jb[q * nb + t0 + t];
        GJ[r * 64 + t] = sum;
      }
    for (int a = 0; a < na; a++) {
      double ja[KN_SAP_MAX_ROWS];
      int any = 0;
      for (int r = 0; r < rows; r++) {
        ja[r] = Ja[r * na + a];
        any |= ja[r] != 0;
      }
      if (!any) continue;
      int te = lower ? (a + 1 - t0 < tn ? a + 1 - t0 : tn) : tn;
      double* o = out + a * nb + t0;
      for (int t = 0; t < te; t++) {
        double sum = 0;
        for (int r = 0; r < rows; r++) sum += ja[r] * GJ[r * 64 + t];
        o[t] += sum;
      }
    }
  }
}

/* The nonzero columns of a rows x n block J (up to cap of them, in order): their count, or -1 if more. */
static int nonzero_columns(const double* J, int n, int rows, int* col, int cap) {
  int k = 0;
  for (int t = 0; t < n; t++) {
    int any = 0;
    for (int r = 0; r < rows; r++) any |= J[r * n + t] != 0;
    if (!any) continue;
    if (k == cap) return -1;
    col[k++] = t;
  }
  return k;
}

/* out += Ja^T G Jb over the nonzero columns only: a particle's or a vertex's Jacobian touches a few
 * dozen of a deformable clique's thousands of DoFs. Each entry gets the same sum as the dense loop. */
static int JtGJ_sparse(const double* Ja, int na, const int* cla, const double* vla, int nca, const double* G,
                       const double* Jb, int nb, const int* clb, const double* vlb, int ncb, int rows, int lower,
                       double* out) {
  enum { CAP = 96 };
  int ca[CAP], cb[CAP];
  double va[KN_SAP_MAX_ROWS * CAP], vb[KN_SAP_MAX_ROWS * CAP];
  /* the columns and their entries found once per solve (kn_sap_solve, compact: the dense rows
   * are 3 x thousands, mostly zeros), or found here */
  int same = Ja == Jb && cla == clb;
  int ka = cla ? (nca <= CAP ? nca : -1) : nonzero_columns(Ja, na, rows, ca, CAP);
  if (ka < 0) return 0;
  if (cla) memcpy(ca, cla, (size_t)ka * sizeof(int));
  for (int r = 0; r < rows; r++)
    for (int i = 0; i < ka; i++) va[r * CAP + i] = cla ? vla[r * nca + i] : Ja[r * na + ca[i]];
  int kb = same ? ka : clb ? (ncb <= CAP ? ncb : -1) : nonzero_columns(Jb, nb, rows, cb, CAP);
  if (kb < 0) return 0;
  if (!same) {
    if (clb) memcpy(cb, clb, (size_t)kb * sizeof(int));
    for (int r = 0; r < rows; r++)
      for (int t = 0; t < kb; t++) vb[r * CAP + t] = clb ? vlb[r * ncb + t] : Jb[r * nb + cb[t]];
  }
  const int* cbb = same ? ca : cb;
  const double* vbb = same ? va : vb;
  double GJ[KN_SAP_MAX_ROWS * CAP];
  for (int r = 0; r < rows; r++)
    for (int t = 0; t < kb; t++) {
      double sum = 0;
      for (int q = 0; q < rows; q++) sum += G[r * rows + q] * vbb[q * CAP + t];
      GJ[r * CAP + t] = sum;
    }
  for (int i = 0; i < ka; i++) {
    int a = ca[i];
    double ja[KN_SAP_MAX_ROWS];
    for (int r = 0; r < rows; r++) ja[r] = va[r * CAP + i];
    double* o = out + (size_t)a * nb;
    for (int t = 0; t < kb && (!lower || cbb[t] <= a); t++) {
      double sum = 0;
      for (int r = 0; r < rows; r++) sum += ja[r] * GJ[r * CAP + t];
      o[cbb[t]] += sum;
    }
  }
  return 1;
}

/* out += Ja^T G Jb (lower = 0) where a side is either its nonzero columns (cl, vl, nc) or dense (J):
 * the general case, for a side given by node beside one with more nonzero columns than
 * JtGJ_sparse keeps */
static void JtGJ_general(const double* Ja, int na, const int* cla, const double* vla, int nca, const double* G,
                         const double* Jb, int nb, const int* clb, const double* vlb, int ncb, int rows, double* out) {
  int ka = Ja ? na : nca, kb = Jb ? nb : ncb;
  for (int u = 0; u < kb; u++) {
    double gj[KN_SAP_MAX_ROWS];
    for (int r = 0; r < rows; r++) {
      double sum = 0;
      for (int q = 0; q < rows; q++) sum += G[r * rows + q] * (Jb ? Jb[q * nb + u] : vlb[q * ncb + u]);
      gj[r] = sum;
    }
    int cb = Jb ? u : clb[u];
    for (int i = 0; i < ka; i++) {
      double sum = 0;
      for (int r = 0; r < rows; r++) sum += (Ja ? Ja[r * na + i] : vla[r * nca + i]) * gj[r];
      out[(size_t)(Ja ? i : cla[i]) * (size_t)nb + (size_t)cb] += sum;
    }
  }
}

/* cla, clb: the nonzero columns of Ja, Jb (nca, ncb of them) when known, else NULL; vla, vlb their
 * entries (rows x nca, rows x ncb). Ja or Jb NULL: a side given by node (its columns known). */
static void add_JtGJ(const double* Ja, int na, const int* cla, const double* vla, int nca, const double* G,
                     const double* Jb, int nb, const int* clb, const double* vlb, int ncb, int rows, int lower,
                     double* out) {
  if ((na > 192 || nb > 192 || !Ja || !Jb) && JtGJ_sparse(Ja, na, cla, vla, nca, G, Jb, nb, clb, vlb, ncb, rows, lower, out))
    return;
  if (!Ja || !Jb) { /* a side given by node: never the lower (diagonal) case here, JtGJ_sparse takes those */
    JtGJ_general(Ja, na, cla, vla, nca, G, Jb, nb, clb, vlb, ncb, rows, out);
    return;
  }
  if (rows == 3)
    JtGJ_rows(Ja, na, G, Jb, nb, 3, lower, out);
  else
    JtGJ_rows(Ja, na, G, Jb, nb, rows, lower, out);
}

/* A sparse clique's block of H in A's pattern (lower triangle, by columns): A, then for each column
 * j the J^T G J entries of the constraint sides with a column at j, in constraint order, placed
 * through map. Each entry (a, b) gets sum_r J[r][a] (G J)[r][b], as add_JtGJ would. */
static kn_status assemble_sparse(const kn_sap_ctx* c, int k, kn_error* err) {
  const kn_sap_problem* p = c->prob;
  kn_sap_solver* s = c->s;
  int q = s->part[k], nq = p->cliques[q].nv;
  const int *cp = s->pcolptr[k], *ri = s->prowidx[k];
  const int* ls = s->lstart + s->lbase[k];
  double* H = s->Hdiag[k];
  memcpy(H, clique_A(p, q), (size_t)cp[nq] * sizeof(double));
  /* G J once per constraint side (rows x count, as jval) */
  for (int e = 0; e < ls[nq]; e++) {
    int h = s->lent[2 * e], t = s->lent[2 * e + 1];
    if (t != 0) continue; /* each side once: at its first column */
    int i = h / 2, rows = p->constraints[i].rows, cnt = s->ccount[h];
    const double* G = s->G + KN_SAP_GSLOT * i;
    const double* jv = s->jval + s->jvstart[h];
    double* gj = s->gj + s->jvstart[h];
    const int* ncol;
    const double *nw, *B;
    if (kn_sap_side_nodal(p, i, h % 2, &ncol, &nw, &B)) {
      /* J = [w_a B] by node: J^T G J's block (a, b) is w_a w_b M with M = B^T G B, kept in gj */
      double GB[9];
      for (int r = 0; r < 3; r++)
        for (int d = 0; d < 3; d++) GB[3 * r + d] = G[3 * r] * B[d] + G[3 * r + 1] * B[3 + d] + G[3 * r + 2] * B[6 + d];
      for (int e2 = 0; e2 < 3; e2++)
        for (int d = 0; d < 3; d++) gj[3 * e2 + d] = B[e2] * GB[d] + B[3 + e2] * GB[3 + d] + B[6 + e2] * GB[6 + d];
      continue;
    }
    for (int r = 0; r < rows; r++)
      for (int u = 0; u < cnt; u++) {
        double sum = 0;
        for (int m = 0; m < rows; m++) sum += G[r * rows + m] * jv[m * cnt + u];
        gj[r * cnt + u] = sum;
      }
  }
  for (int j = 0; j < nq; j++) s->map[j] = -1;
  for (int j = 0; j < nq; j++) {
    for (int z = cp[j]; z < cp[j + 1]; z++) s->map[ri[z]] = z;
    for (int e = ls[j]; e < ls[j + 1]; e++) {
      int h = s->lent[2 * e], t = s->lent[2 * e + 1], i = h / 2, rows = p->constraints[i].rows;
      if (kn_sap_all_zero(s->G + KN_SAP_GSLOT * i, rows * rows)) continue;
      int cnt = s->ccount[h];
      const int* col = s->cols + s->cstart[h];
      const double* jv = s->jval + s->jvstart[h];
      const double* gj = s->gj + s->jvstart[h];
      const int* ncol;
      const double *nw, *B;
      if (kn_sap_side_nodal(p, i, h % 2, &ncol, &nw, &B)) {
        /* column t = 3 b + d: entry u = 3 a + c is w_a (w_b M[c][d]) */
        int b = t / 3, d = t % 3;
        double mcol[3] = {nw[b] * gj[d], nw[b] * gj[3 + d], nw[b] * gj[6 + d]};
        for (int u = t; u < cnt; u++) {
          int z = s->map[col[u]];
          if (z < cp[j])
            return kn_fail(err, KN_ERR_INVALID,
                           "sap: constraint %d couples DoFs %d and %d of sparse clique %d, which its A does not couple",
                           i, col[u], j, q);
          H[z] += nw[u / 3] * mcol[u % 3];
        }
        continue;
      }
      for (int u = t; u < cnt; u++) {
        int z = s->map[col[u]];
        if (z < cp[j])
          return kn_fail(err, KN_ERR_INVALID,
                         "sap: constraint %d couples DoFs %d and %d of sparse clique %d, which its A does not couple", i,
                         col[u], j, q);
        double sum = 0;
        for (int r = 0; r < rows; r++) sum += jv[r * cnt + u] * gj[r * cnt + t];
        H[z] += sum;
      }
    }
  }
  return KN_OK;
}

/* H = A + sum_i J_i^T G_i J_i: each diagonal block A's clique block (a sparse one by
 * assemble_sparse), each pair block zero, then each constraint's J^T G J added in constraint order */
kn_status kn_sap_assemble_H(const kn_sap_ctx* c, kn_error* err) {
  const kn_sap_problem* p = c->prob;
  kn_sap_solver* s = c->s;
  for (int k = 0; k < c->np; k++) {
    int q = s->part[k], nq = p->cliques[q].nv;
    if (s->pcolptr[k]) {
      kn_status st = assemble_sparse(c, k, err);
      if (st) return st;
      continue;
    }
    memcpy(s->Hdiag[k], clique_A(p, q), (size_t)nq * (size_t)nq * sizeof(double));
  }
  for (int k = 0; k < c->npairs; k++) {
    int na = s->psize[s->pairs[2 * k]], nb = s->psize[s->pairs[2 * k + 1]];
    memset(s->Hoff[k], 0, (size_t)na * (size_t)nb * sizeof(double));
  }
  for (int i = 0; i < c->nc; i++) {
    const kn_sap_constraint* k = &p->constraints[i];
    const double* G = s->G + KN_SAP_GSLOT * i;
    if (kn_sap_all_zero(G, k->rows * k->rows)) continue;
    if (s->sdof[i] >= 0) {
      /* J = j e_a: J^T G J is the single entry j (G j) at (a, a). add_JtGJ would add
       * 0 + j (0 + G j) there and +0 to the rest of row a (turning a -0 into +0): the same here. */
      int q = k->clique[0], nq = p->cliques[q].nv, a = s->sdof[i] - s->roff[q];
      double* row = s->Hdiag[s->pidx[q]] + (size_t)a * (size_t)nq;
      double j = s->sval[i];
      for (int t = 0; t < a; t++) row[t] += 0.0;
      row[a] += 0.0 + j * (0.0 + G[0] * j);
      continue;
    }
    for (int t = 0; t < 2; t++) {
      if (k->clique[t] < 0 || p->cliques[k->clique[t]].sparse) continue; /* assemble_sparse's */
      int q = k->clique[t], nq = p->cliques[q].nv;
      int h = 2 * i + t, known = s->ccount[h] >= 0;
      const int* cl = known ? s->cols + s->cstart[h] : NULL;
      const double* vl = known ? s->jval + s->jvstart[h] : NULL;
      add_JtGJ(kn_sap_con_J(p, i, t), nq, cl, vl, s->ccount[h], G, kn_sap_con_J(p, i, t), nq, cl, vl, s->ccount[h],
               k->rows, 1, s->Hdiag[s->pidx[q]]);
    }
    if (k->clique[1] >= 0) {
      /* the pair block is stored with the lower participating index first; G is symmetric */
      int a = 0, b = 1;
      if (s->pidx[k->clique[0]] > s->pidx[k->clique[1]]) a = 1, b = 0;
      int qa = k->clique[a], qb = k->clique[b];
      int ha = 2 * i + a, hb = 2 * i + b;
      const int* cla = s->ccount[ha] >= 0 ? s->cols + s->cstart[ha] : NULL;
      const int* clb = s->ccount[hb] >= 0 ? s->cols + s->cstart[hb] : NULL;
      const double* vla = cla ? s->jval + s->jvstart[ha] : NULL;
      const double* vlb = clb ? s->jval + s->jvstart[hb] : NULL;
      add_JtGJ(kn_sap_con_J(p, i, a), p->cliques[qa].nv, cla, vla, s->ccount[ha], G, kn_sap_con_J(p, i, b),
               p->cliques[qb].nv, clb, vlb, s->ccount[hb], k->rows, 0, s->Hoff[s->cpair[i]]);
    }
  }
  return KN_OK;
}

static kn_status grow_ints(int** a, size_t* cap, size_t need, kn_error* err) {
  if (need <= *cap) return KN_OK;
  int* b = realloc(*a, need * sizeof(int));
  if (!b) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory (%zu indices for the sparse Newton blocks)", need);
  *a = b;
  *cap = need;
  return KN_OK;
}

/* per participating sparse clique and per DoF j, the constraint sides with a J column at j (in
 * constraint order: a deterministic sum) and that column's place in their lists (assemble_sparse) */
kn_status kn_sap_sparse_lists(const kn_sap_ctx* c, kn_error* err) {
  kn_sap_solver* s = c->s;
  const kn_sap_problem* p = c->prob;
  size_t nstart = 0, nent = 0, nmap = 0, ngj = 0;
  for (int k = 0; k < c->np; k++) {
    s->lbase[k] = (int)nstart;
    if (!s->pcolptr[k]) continue;
    nstart += (size_t)s->psize[k] + 1;
    nmap = nmap > (size_t)s->psize[k] ? nmap : (size_t)s->psize[k];
  }
  if (nstart == 0) return KN_OK;
  for (int h = 0; h < 2 * c->nc; h++)
    if (s->ccount[h] >= 0) {
      nent += (size_t)s->ccount[h];
      size_t end = (size_t)s->jvstart[h] + (size_t)s->ccount[h] * (size_t)p->constraints[h / 2].rows;
      ngj = ngj > end ? ngj : end;
    }
  kn_status st = grow_ints(&s->lstart, &s->cap_lstart, nstart, err);
  if (!st) st = grow_ints(&s->lent, &s->cap_lent, 2 * nent + 2, err);
  if (!st) st = grow_ints(&s->map, &s->cap_map, nmap, err);
  if (st) return st;
  if (ngj > s->cap_gj) {
    double* g = realloc(s->gj, ngj * sizeof(double));
    if (!g) return kn_fail(err, KN_ERR_NOMEM, "sap: out of memory (G J of %zu entries)", ngj);
    s->gj = g;
    s->cap_gj = ngj;
  }
  memset(s->lstart, 0, nstart * sizeof(int));
  /* counting sort by column: counts, prefix sums, then the entries in constraint order */
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < c->nc; i++)
      for (int t = 0; t < 2; t++) {
        int q = p->constraints[i].clique[t], h = 2 * i + t;
        if (q < 0 || !p->cliques[q].sparse) continue;
        int* ls = s->lstart + s->lbase[s->pidx[q]];
        const int* col = s->cols + s->cstart[h];
        for (int u = 0; u < s->ccount[h]; u++) {
          if (pass == 0) {
            ls[col[u] + 1]++;
            continue;
          }
          int e = ls[col[u]]++;
          s->lent[2 * e] = h, s->lent[2 * e + 1] = u;
        }
      }
    for (int k = 0; k < c->np; k++) {
      if (!s->pcolptr[k]) continue;
      int* ls = s->lstart + s->lbase[k];
      int nq = s->psize[k];
      if (pass == 0) {
        for (int j = 0; j < nq; j++) ls[j + 1] += ls[j];
      } else { /* the fill advanced each start to the next one's: shift back */
        for (int j = nq; j > 0; j--) ls[j] = ls[j - 1];
        ls[0] = 0;
      }
    }
  }
  return KN_OK;
}
