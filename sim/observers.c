/* Observers of the step: what watches the world from outside it (check/ adds the scene's checks),
 * so that the world calls up into no module above it. */
#include <stdlib.h>

#include "sim/sim_internal.h"

kn_status kn_world_add_observer(kn_world* w, const kn_world_observer_ops* ops, void* self, kn_error* err) {
  kn_world_observer* o = realloc(w->observers, ((size_t)w->nobserver + 1) * sizeof *o);
  if (!o) {
    if (ops->free) ops->free(self);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  w->observers = o;
  w->observers[w->nobserver++] = (kn_world_observer){ops, self};
  return KN_OK;
}

void* kn_world_observer_self(const kn_world* w, const kn_world_observer_ops* ops) {
  for (int i = 0; i < w->nobserver; i++)
    if (w->observers[i].ops == ops) return w->observers[i].self;
  return NULL;
}

void kn_world_notify_stepped(const kn_world* w) {
  for (int i = 0; i < w->nobserver; i++)
    if (w->observers[i].ops->stepped) w->observers[i].ops->stepped(w->observers[i].self, w);
}

void kn_world_notify_failed(const kn_world* w, const char* message) {
  for (int i = 0; i < w->nobserver; i++)
    if (w->observers[i].ops->failed) w->observers[i].ops->failed(w->observers[i].self, w, message);
}

/* (world being freed) => every observer's free, in the reverse order of adding */
void kn_sim_observers_free(kn_world* w) {
  for (int i = w->nobserver - 1; i >= 0; i--)
    if (w->observers[i].ops->free) w->observers[i].ops->free(w->observers[i].self);
  free(w->observers);
  w->observers = NULL;
  w->nobserver = 0;
}
