/* `knead check` under mpirun: scenes spread over the ranks (rank r runs scenes r, r + N, ..., each
 * still in a forked child), then every rank's result files gathered on rank 0 (MPI_Gather of their
 * sizes, MPI_Gatherv of their text), which reports them in input order exactly as -j 1 would.
 * Built with MPI only when CMake finds it (KNEAD_HAVE_MPI); otherwise every call is the one-rank
 * case. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/check.h"
#include "tools/cli.h"

#ifdef KNEAD_HAVE_MPI
#include <mpi.h>

static int started;

int check_mpi_start(int* rank, int* size) {
  *rank = 0, *size = 1;
  /* under a launcher only: OpenMPI's mpirun, or a PMI / PMIx launcher such as Slurm's srun */
  if (!getenv("OMPI_COMM_WORLD_SIZE") && !getenv("PMIX_RANK") && !getenv("PMI_SIZE")) return 0;
  if (MPI_Init(NULL, NULL) != MPI_SUCCESS) return 0;
  started = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, rank);
  MPI_Comm_size(MPI_COMM_WORLD, size);
  return *size > 1;
}

// (file) => its whole text (malloc'd, *len bytes), or NULL
static char* slurp(const char* path, long* len) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  char* t = NULL;
  size_t n = 0;
  FILE* m = open_memstream(&t, &n);
  char buf[8192];
  size_t k;
  while (m && (k = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, k, m);
  fclose(f);
  if (m) fclose(m);
  *len = (long)n;
  return t;
}

void check_mpi_gather(scene_job* job, int n, int* status, int rank, int size) {
  if (!started || size < 2) return;
  /* this rank's message: per scene it ran, "index status length\n" and the result file's text */
  char* msg = NULL;
  size_t len = 0;
  FILE* m = open_memstream(&msg, &len);
  for (int i = rank; i < n; i += size) {
    long tl = 0;
    char* t = status[i] == -1 ? NULL : slurp(job[i].result, &tl);
    fprintf(m, "%d %d %ld\n", i, status[i], t ? tl : 0L);
    if (t) fwrite(t, 1, (size_t)tl, m);
    free(t);
    if (rank != 0 && status[i] != -1) unlink(job[i].result);
  }
  fclose(m);
  int mine = (int)len;
  int* sizes = rank == 0 ? calloc((size_t)size, sizeof *sizes) : NULL;
  int* displs = rank == 0 ? calloc((size_t)size, sizeof *displs) : NULL;
  MPI_Gather(&mine, 1, MPI_INT, sizes, 1, MPI_INT, 0, MPI_COMM_WORLD);
  char* all = NULL;
  long total = 0;
  if (rank == 0) {
    for (int r = 0; r < size; r++) displs[r] = (int)total, total += sizes[r];
    all = malloc((size_t)total + 1);
  }
  MPI_Gatherv(msg, mine, MPI_CHAR, all, sizes, displs, MPI_CHAR, 0, MPI_COMM_WORLD);
  free(msg);
  if (rank == 0 && all) {
    /* the other ranks' results: written to result files of this rank, as if its children had */
    for (int r = 1; r < size; r++) {
      const char* p = all + displs[r];
      const char* end = p + sizes[r];
      while (p < end) {
        int i, st;
        long tl;
        int used;
        if (sscanf(p, "%d %d %ld\n%n", &i, &st, &tl, &used) != 3 || i < 0 || i >= n) break;
        p += used;
        status[i] = st;
        const char* tmp = getenv("TMPDIR");
        snprintf(job[i].result, sizeof job[i].result, "%s/knead_check_XXXXXX", tmp && *tmp ? tmp : "/tmp");
        int fd = mkstemp(job[i].result);
        if (fd >= 0) {
          if (write(fd, p, (size_t)tl) != (ssize_t)tl) status[i] = -1;
          close(fd);
        } else {
          job[i].result[0] = 0;
        }
        if (st == -1 && fd >= 0) status[i] = 0; /* the file is there; empty: "ended without results" */
        p += tl;
      }
    }
  }
  free(all);
  free(sizes);
  free(displs);
  MPI_Barrier(MPI_COMM_WORLD); /* every rank's children are done: the keep folder may go */
}

int check_mpi_finish(int code) {
  if (!started) return code;
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Finalize();
  started = 0;
  return code;
}

#else

int check_mpi_start(int* rank, int* size) {
  *rank = 0, *size = 1;
  const char* n = getenv("OMPI_COMM_WORLD_SIZE");
  if (n && atoi(n) > 1)
    knead_error("warning: this knead was built without MPI: under mpirun every rank runs every scene");
  return 0;
}
void check_mpi_gather(scene_job* job, int n, int* status, int rank, int size) {
  (void)job, (void)n, (void)status, (void)rank, (void)size;
}
int check_mpi_finish(int code) { return code; }

#endif
