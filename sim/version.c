/* Which knead this is: the version and git revision CMake saw at configure time (the generated
 * knead_version.h: KNEAD_VERSION_STRING, KNEAD_GIT_REVISION, KNEAD_BUILD_TYPE), and a build id
 * hashing what changes floating-point results between builds. summary.json, golden files and
 * `knead check` name all three. */
#include <stdio.h>
#include <string.h>

#include "knead_version.h"
#include "sim/sim_internal.h"

#define STR2(x) #x
#define STR(x) STR2(x)

/* () => "0.1.0" (CMake's project version) */
const char* kn_version(void) { return KNEAD_VERSION_STRING; }

/* () => the git revision of the source tree at configure time ("abc123def456", "-dirty" appended
 * when it had uncommitted changes), "unknown" without git */
const char* kn_git_revision(void) { return KNEAD_GIT_REVISION; }

/* () => the text hashed into the build id: version, CMake build type, the compiler's version and
 * the predefined macros that change floating-point code generation (optimization, sanitizers,
 * NDEBUG, FMA / AVX / SSE level, fast-math, architecture). No git state: two checkouts built alike
 * round alike. */
const char* kn_build_string(void) {
  return "knead " KNEAD_VERSION_STRING "; " KNEAD_BUILD_TYPE
#ifdef __VERSION__
         "; cc " __VERSION__
#endif
#ifdef __OPTIMIZE__
         "; optimized"
#endif
#ifdef __OPTIMIZE_SIZE__
         "; Os"
#endif
#ifdef NDEBUG
         "; NDEBUG"
#endif
#ifdef __SANITIZE_ADDRESS__
         "; asan"
#endif
#ifdef __FAST_MATH__
         "; fast-math"
#endif
#ifdef __FMA__
         "; fma"
#endif
#ifdef __AVX2__
         "; avx2"
#elif defined(__AVX__)
         "; avx"
#endif
#ifdef __SSE4_2__
         "; sse4.2"
#endif
#ifdef __FLT_EVAL_METHOD__
         "; flt_eval " STR(__FLT_EVAL_METHOD__)
#endif
#if defined(__x86_64__)
         "; x86_64"
#elif defined(__aarch64__)
         "; aarch64"
#endif
      ;
}

/* () => 16 hex digits, the FNV-1a hash of kn_build_string() */
const char* kn_build_id(void) {
  static char id[17];
  const char* s = kn_build_string();
  snprintf(id, sizeof id, "%016llx", (unsigned long long)kn_hash_bytes(KN_HASH_SEED, s, strlen(s)));
  return id;
}
