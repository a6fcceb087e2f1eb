/* The SAP adapter's part of a saved state (kn_world_save_state's backend section), in the layouts
 * of state_parts.h: the rigid stiction anchors, the FEM and the MPM keyed anchors, each MPM grid's
 * warm start. Everything else is rebuilt by every step. */
#include <string.h>

#include "sim/backend_sap.h"
#include "sim/state_parts.h"

void kn_sap_adapter_save(const kn_world* w, const void* state, kn_state_out* out) {
  const sap_state* s = state;
  kn_state_put_rigid_anchors(out, &s->stiction);
  kn_state_put_keyed_anchors(out, &s->fem_anchors);
  kn_state_put_keyed_anchors(out, &s->mpm_anchors);
  kn_state_put_mpm_warm_starts(out, w);
}

// (bytes of kn_sap_adapter_save) => anchors and MPM warm starts of s replaced, all or nothing
kn_status kn_sap_adapter_load(const kn_world* w, void* state, kn_state_in* in, kn_error* err) {
  sap_state* s = state;
  kn_state_parts p = {0};
  const char* what = kn_state_get_rigid_anchors(in, w->ncollider, &p);
  if (!what) what = kn_state_get_keyed_anchors(in, 0, &p);
  if (!what) what = kn_state_get_keyed_anchors(in, 1, &p);
  if (!what) what = kn_state_get_mpm_warm_starts(in, w, &p);
  if (!what && in->pos != in->len) what = "unread bytes after the SAP backend's state";
  if (what) {
    kn_state_parts_free(&p);
    return kn_fail(err, strcmp(what, "out of memory") ? KN_ERR_PARSE : KN_ERR_NOMEM, "%s", what);
  }
  kn_state_parts_commit(&p, (kn_world*)w, &s->stiction, &s->fem_anchors, &s->mpm_anchors);
  return KN_OK;
}
