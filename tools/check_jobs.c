/* `knead check` and `knead sweep`: running scenes, each in a forked child (check_run_scene) that
 * writes its result file, at most N at once. The children finish in any order; callers read the
 * result files in input order, so what they print never depends on N. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tools/check.h"
#include "tools/cli.h"

// (job) => a child running it; its pid, or -1
static pid_t start_job(scene_job* job, const check_opts* o) {
  const char* tmp = getenv("TMPDIR");
  snprintf(job->result, sizeof job->result, "%s/knead_check_XXXXXX", tmp && *tmp ? tmp : "/tmp");
  int fd = mkstemp(job->result);
  if (fd < 0) return -1;
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    FILE* out = fdopen(fd, "w");
    if (!out) _exit(3);
    check_opts jo = *o;
    if (job->sets) jo.sets = job->sets, jo.nsets = job->nsets;
    if (o->run)
      o->run(job, &jo, out);
    else
      check_run_scene(job->path, job->keep_name, &jo, out);
    _exit(fclose(out) == 0 ? 0 : 3);
  }
  close(fd);
  if (pid < 0) unlink(job->result);
  return pid;
}

void check_run_jobs(scene_job* job, int n, const check_opts* o, int parallel, const char* run, int* status) {
  pid_t* pid = calloc((size_t)(n > 0 ? n : 1), sizeof *pid);
  if (!pid) {
    for (int i = 0; i < n; i++) status[i] = -1;
    return;
  }
  int next = 0, running = 0;
  while (next < n || running > 0) {
    while (running < parallel && next < n) {
      if (run && !run[next]) {
        next++;
        continue;
      }
      pid[next] = start_job(&job[next], o);
      if (pid[next] < 0) {
        knead_error("cannot start a process for %s: %s", job[next].path, strerror(errno));
        status[next] = -1;
      } else {
        running++;
      }
      next++;
    }
    if (running == 0) continue;
    int st;
    pid_t done = wait(&st);
    if (done < 0) break;
    for (int i = 0; i < next; i++)
      if (pid[i] == done && pid[i] > 0) {
        status[i] = st;
        pid[i] = 0;
        running--;
      }
  }
  free(pid);
}

int check_split_fields(char* line, char** f, int max) {
  int n = 0;
  f[n++] = line;
  for (char* p = line; *p && n < max; p++)
    if (*p == '\t') *p = 0, f[n++] = p + 1;
  return n;
}
