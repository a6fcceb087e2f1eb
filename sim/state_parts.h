/* knead/sim internal: the parts of a saved state that several backends share (state_parts.c):
 * stiction anchors (rigid pairs; keyed FEM and MPM points) and each MPM grid's warm start.
 * Writing appends little-endian records; reading decodes into a kn_state_parts that nothing uses
 * until kn_state_parts_commit, so a backend's load stays all or nothing.
 *   rigid anchors: n, then per anchor a, b, sliding (int32), pa[3], pb[3], mu (double)
 *   keyed anchors: n, then per anchor key (uint64), p[3], mu (double), sliding (int32)
 *   MPM warm starts: number of grids, then per grid n, its nodes (3 n int32), their v (3 n double) */
#ifndef KNEAD_SIM_STATE_PARTS_H
#define KNEAD_SIM_STATE_PARTS_H

#include "sim/backend.h"
#include "sim/stiction.h"

void kn_state_put_rigid_anchors(kn_state_out* out, const kn_stiction* s);
void kn_state_put_keyed_anchors(kn_state_out* out, const kn_stiction_keyed* k);
void kn_state_put_mpm_warm_starts(kn_state_out* out, const kn_world* w);

typedef struct {
  kn_stiction_anchor* rigid;
  unsigned char* taken;
  int nrigid;
  kn_stiction_point* keyed[2]; /* FEM, MPM */
  int nkeyed[2];
  int ngrid;                   /* warm starts read (0: none) */
  int **nodes, *count;
  double** v;
} kn_state_parts;

/* each => NULL, or what is wrong ("out of memory" for allocation failures), the part read into p */
const char* kn_state_get_rigid_anchors(kn_state_in* in, int ncollider, kn_state_parts* p);
const char* kn_state_get_keyed_anchors(kn_state_in* in, int which, kn_state_parts* p);
const char* kn_state_get_mpm_warm_starts(kn_state_in* in, const kn_world* w, kn_state_parts* p);
/* what was read replaces the anchors given (NULL: not read) and the MPM cliques' warm starts; p is
 * emptied */
void kn_state_parts_commit(kn_state_parts* p, kn_world* w, kn_stiction* rigid, kn_stiction_keyed* fem,
                           kn_stiction_keyed* mpm);
void kn_state_parts_free(kn_state_parts* p);

#endif
