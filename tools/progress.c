/* The progress display of `knead run`: a redrawn bar on a terminal; a few plain lines when
 * stderr is a file or a CI log, so logs stay readable. */
#include <stdio.h>
#include <unistd.h>

#include "tools/cli.h"

#define BAR_WIDTH 40

void knead_progress_init(knead_progress* p, double duration) {
  p->tty = isatty(fileno(stderr));
  p->last = -1;
  p->duration = duration;
  p->wall0 = kn_wall_time();
}

void knead_progress_update(void* user, double fraction) {
  knead_progress* p = user;
  if (fraction < 0) fraction = 0;
  if (fraction > 1) fraction = 1;
  int percent = (int)(100.0 * fraction);
  if (p->tty) {
    if (percent == p->last) return;
    p->last = percent;
    int filled = (int)(BAR_WIDTH * fraction);
    char bar[BAR_WIDTH + 1];
    for (int i = 0; i < BAR_WIDTH; i++) bar[i] = i < filled ? '#' : '.';
    bar[BAR_WIDTH] = 0;
    fprintf(stderr, "\r[%s] %3d%%  t = %.3f / %.3f s  (%.1f s wall)", bar, percent, fraction * p->duration,
            p->duration, kn_wall_time() - p->wall0);
    fflush(stderr);
  } else {
    int quarter = percent / 25 * 25;
    if (quarter == p->last) return;
    p->last = quarter;
    fprintf(stderr, "knead: %3d%%  t = %.3f s\n", quarter, fraction * p->duration);
  }
}

void knead_progress_finish(knead_progress* p) {
  if (p->tty && p->last >= 0) fputc('\n', stderr);
}
