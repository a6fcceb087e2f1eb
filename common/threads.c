/* The threads of the libraries knead calls: OpenBLAS's and the OpenMP regions inside CHOLMOD. */
#include <omp.h>

#include "common/common.h"

void openblas_set_num_threads(int num_threads); /* OpenBLAS's own API (cblas.h of libopenblas-dev) */

void kn_blas_deterministic(void) { openblas_set_num_threads(1); }

/* With max-active-levels 0 no parallel region is active: each runs on its encountering thread
 * alone, whatever num_threads clause it has (OpenMP 5.2 §2.6.1). The setting is restored after. */
int kn_libraries_serial_begin(void) {
  int previous = omp_get_max_active_levels();
  omp_set_max_active_levels(0);
  return previous;
}

void kn_libraries_serial_end(int previous) { omp_set_max_active_levels(previous); }
