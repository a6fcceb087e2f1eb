/* The threads of the libraries knead calls: OpenBLAS's and the OpenMP regions inside CHOLMOD. */
#include <omp.h>
#include <pthread.h>

#include "common/common.h"

void openblas_set_num_threads(int num_threads); /* OpenBLAS's own API (cblas.h of libopenblas-dev) */

void kn_blas_deterministic(void) { openblas_set_num_threads(1); }

/* With max-active-levels 0 no parallel region is active: each runs on its encountering thread
 * alone, whatever num_threads clause it has (OpenMP 5.2 §2.6.1). The setting is process-wide, so
 * the brackets nest and count: the first begin saves it, the last end restores it, under a lock
 * (two worlds stepped on two threads leave it as they found it). */
static pthread_mutex_t serial_lock = PTHREAD_MUTEX_INITIALIZER;
static int serial_depth, serial_saved;

void kn_libraries_serial_begin(void) {
  pthread_mutex_lock(&serial_lock);
  if (serial_depth++ == 0) {
    serial_saved = omp_get_max_active_levels();
    omp_set_max_active_levels(0);
  }
  pthread_mutex_unlock(&serial_lock);
}

void kn_libraries_serial_end(void) {
  pthread_mutex_lock(&serial_lock);
  if (serial_depth > 0 && --serial_depth == 0) omp_set_max_active_levels(serial_saved);
  pthread_mutex_unlock(&serial_lock);
}
