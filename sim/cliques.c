/* The world's cliques (coupling/coupling.h), in the order every backend numbers them: one per tree
 * with nv > 0 (tree order), one per FEM body, one per MPM grid. */
#include <stdlib.h>

#include "sim/sim_internal.h"

void kn_sim_cliques_free(kn_world* w) {
  for (int c = 0; w->cliques && c < w->nclique; c++) kn_clique_destroy(&w->cliques[c]);
  free(w->cliques), free(w->clique_of_tree);
  w->cliques = NULL, w->clique_of_tree = NULL, w->nclique = 0;
}

kn_status kn_sim_cliques_build(kn_world* w, kn_error* err) {
  int n = w->nfem + w->nmpm_grid;
  for (int k = 0; k < w->ntree; k++) n += w->trees[k].robot->model->nv > 0;
  w->cliques = kn_calloc((size_t)n + 1, sizeof *w->cliques);
  w->clique_of_tree = kn_calloc((size_t)w->ntree + 1, sizeof *w->clique_of_tree);
  if (!w->cliques || !w->clique_of_tree) return kn_sim_cliques_free(w), kn_fail(err, KN_ERR_NOMEM, "out of memory");
  kn_status st = KN_OK;
  for (int k = 0; !st && k < w->ntree; k++) {
    kn_world_tree* tr = &w->trees[k];
    w->clique_of_tree[k] = -1;
    if (tr->robot->model->nv == 0) continue;
    w->clique_of_tree[k] = w->nclique;
    st = kn_clique_tree_create(tr->robot->model, tr->data, tr->q, tr->v, tr->q_backup, kn_sim_tree_name(w, k),
                               &w->cliques[w->nclique], err);
    if (!st) w->nclique++;
  }
  w->first_fem_clique = w->nclique;
  for (int i = 0; !st && i < w->nfem; i++)
    if (!(st = kn_clique_fem_create(w->fems[i].body, &w->cliques[w->nclique], err))) w->nclique++;
  w->first_mpm_clique = w->nclique;
  for (int g = 0; !st && g < w->nmpm_grid; g++)
    if (!(st = kn_clique_mpm_create(w->mpm_grids[g], w->scene->gravity, &w->cliques[w->nclique], err))) w->nclique++;
  if (st) kn_sim_cliques_free(w);
  return st;
}
