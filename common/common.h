/* knead/common — status and errors, small fixed-size math, state hashing, progress.
 *
 * Conventions (written once, referred to everywhere):
 *   SI units; z up; gravity (0, 0, -9.81) by default.
 *   3x3 matrices are row-major double[9]; R[3*i + j] is row i, column j.
 *   Quaternions are (w, x, y, z), unit norm.
 *   A pose X_AB = {R, p} maps coordinates in frame B to frame A: x_A = R x_B + p.
 *   Spatial vectors are [angular; linear] (double[6]).
 *   Library code never prints to stdout and never exits: it returns a kn_status and fills a
 *   kn_error whose message names the input (file, line, key, body, joint) and what was
 *   expected. Warnings go to a kn_diag list that the caller reports. */
#ifndef KNEAD_COMMON_H
#define KNEAD_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*---- status and errors ----*/

typedef enum {
  KN_OK = 0,
  KN_ERR_IO,       /* a file could not be read or written */
  KN_ERR_PARSE,    /* malformed input: URDF, scene, mesh, CSV */
  KN_ERR_INVALID,  /* well-formed but not acceptable: non-physical parameter, bad index */
  KN_ERR_NUMERIC,  /* a solver failed: not positive definite, NaN, no convergence */
  KN_ERR_NOMEM,
  KN_ERR_UNSUPPORTED
} kn_status;

#define KN_ERROR_MSG 1024
typedef struct {
  kn_status status;
  char msg[KN_ERROR_MSG];
} kn_error;

/* Set err (if non-NULL) to (status, printf-style message) and return status. */
kn_status kn_fail(kn_error* err, kn_status status, const char* fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prefix the message already in err with more context ("file.urdf: " + msg). */
kn_status kn_error_prefix(kn_error* err, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
const char* kn_status_name(kn_status s);

/* A growable list of warnings (owned strings). Zero-initialize, kn_diag_free when done. */
typedef struct {
  char** items;
  int count, capacity;
} kn_diag;
void kn_diag_add(kn_diag* d, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void kn_diag_free(kn_diag* d);

/*---- memory ----*/

/* calloc that never returns NULL for n == 0 and reports failure through err. */
void* kn_calloc(size_t n, size_t size);
char* kn_strdup(const char* s);

/*---- input files (file.c) ----*/

/* The largest input file knead reads (scene, URDF, CSV trajectory, volume or surface mesh):
 * 256 MiB. Larger files, directories, devices (/dev/zero), FIFOs and sockets are refused before
 * anything is read, so a wrong path can neither hang the loader nor exhaust memory. */
#define KN_MAX_INPUT_BYTES ((size_t)256 << 20)

/* (path, what it should be: "scene", "URDF", "mesh", ...) => KN_OK when it is a regular file of
 * at most KN_MAX_INPUT_BYTES; else KN_ERR_IO "<path>: cannot open the <what> file: <reason>",
 * "<path>: is a directory, not a <what> file", "<path>: not a regular file (a device, FIFO or
 * socket); a <what> must be a file" or "<path>: <n> bytes; a <what> file may have at most
 * 268435456 (256 MiB)". */
kn_status kn_file_check(const char* path, const char* what, kn_error* err);
/* kn_file_check, then the whole file into *text (malloc'd, NUL-terminated, *len bytes without the
 * NUL; free it). A file that grows past the limit while read is refused the same way. */
kn_status kn_file_read(const char* path, const char* what, char** text, size_t* len, kn_error* err);

/*---- names to indices (name_map.c) ----*/

/* A hash table from names to non-negative ints (body, joint, link indices): constant-time look-ups
 * where a 20,000-link chain made strcmp scans quadratic. Open addressing with linear probing,
 * FNV-1a hashes, at most half full. Keys are borrowed: the strings must outlive the map.
 * Zero-initialize, kn_name_map_free when done. */
typedef struct kn_name_map {
  const char** keys;
  int* values;
  size_t cap, count;
} kn_name_map;
/* value of key, or -1 when absent (also for a NULL key or an empty map) */
int kn_name_map_get(const kn_name_map* m, const char* key);
/* key => value (replacing an earlier value); KN_ERR_NOMEM when the table cannot grow */
kn_status kn_name_map_put(kn_name_map* m, const char* key, int value);
void kn_name_map_free(kn_name_map* m);

/*---- closed triangle surfaces (mesh_check.c) ----*/

/* (nt triangles over nv welded vertices: equal positions share one index) => KN_OK when the
 * surface is closed: every edge in exactly two triangles, else KN_ERR_INVALID "the surface is not
 * closed: edge (x, y, z)-(x, y, z) (welded vertices i-j) is in n triangle(s), expected exactly 2".
 * With `oriented`, also consistently wound (each edge traversed once each way: else "the faces are
 * not consistently oriented: ... runs the same way in triangles s and t") and outward (a positive
 * enclosed volume: else "the faces are wound inward ..."). Used by rigid free meshes (oriented:
 * their signed distance and inertia need it) and FEM surfaces (not oriented: tetgen does not
 * care). */
kn_status kn_mesh_check_closed(int nv, const double* v, int nt, const int* tri, int oriented, kn_error* err);

/*---- small fixed-size math ----*/

typedef struct {
  double R[9];
  double p[3];
} kn_pose;

void kn_pose_identity(kn_pose* X);
/* X_AC = X_AB * X_BC */
void kn_pose_mul(const kn_pose* X_AB, const kn_pose* X_BC, kn_pose* X_AC);
void kn_pose_inv(const kn_pose* X, kn_pose* Xinv);
/* y = R x + p */
void kn_pose_apply(const kn_pose* X, const double x[3], double y[3]);
void kn_pose_from_xyz_rpy(const double xyz[3], const double rpy[3], kn_pose* X);

void kn_mat3_mul(const double A[9], const double B[9], double C[9]);   /* C = A B */
void kn_mat3_mulT(const double A[9], const double B[9], double C[9]);  /* C = A^T B */
void kn_mat3_vec(const double A[9], const double x[3], double y[3]);   /* y = A x */
void kn_mat3_tvec(const double A[9], const double x[3], double y[3]);  /* y = A^T x */
void kn_mat3_transpose(const double A[9], double At[9]);
double kn_mat3_det(const double A[9]);
/* cof(A) = det(A) A^-T = d det(A) / dA */
void kn_mat3_cofactor(const double A[9], double C[9]);
/* A^-1 by cofactors; returns 0 (Ai untouched) when det(A) is zero or not finite */
int kn_mat3_inverse(const double A[9], double Ai[9]);
/* symmetric A = Q diag(e) Q^T (Jacobi; Q's columns the eigenvectors, unsorted, det Q = +1) */
void kn_mat3_sym_eigen(const double A[9], double e[3], double Q[9]);
/* R = Rz(yaw) Ry(pitch) Rx(roll), the URDF convention */
void kn_mat3_from_rpy(const double rpy[3], double R[9]);
/* rotation by angle about a unit axis (Rodrigues) */
void kn_mat3_from_axis_angle(const double axis[3], double angle, double R[9]);
void kn_mat3_from_quat(const double q[4], double R[9]);
void kn_quat_from_mat3(const double R[9], double q[4]);
void kn_quat_mul(const double a[4], const double b[4], double c[4]);
void kn_quat_normalize(double q[4]);

double kn_vec3_dot(const double a[3], const double b[3]);
void kn_vec3_cross(const double a[3], const double b[3], double c[3]);
double kn_vec3_norm(const double a[3]);

/*---- the linear corotated law (shared by FEM and MPM) ----*/

/* Psi = mu |eps|^2 + lambda/2 tr(eps)^2 with eps = sym(R0^T F) - I (digest §6.1, Drake's
 * LinearCorotatedModel; R0 frozen from the previous step, so Psi is quadratic in F).
 * P = R0 (2 mu eps + lambda tr(eps) I); dP_ij/dF_ab = mu d_ia d_jb + mu R0_ib R0_aj
 * + lambda R0_ij R0_ab (constant). P and dPdF (9 x 9, row-major over (ij), (ab)) may be NULL. */
double kn_linear_corotated_energy(double mu, double lambda, const double F[9], const double R0[9], double P[9],
                                  double dPdF[81]);

/*---- hashing (bitwise determinism checks) ----*/

/* 64-bit FNV-1a over raw bytes, chained: h = kn_hash_bytes(h, data, n); start from KN_HASH_SEED.
 * Doubles are hashed as their IEEE-754 bytes, with -0.0 folded to +0.0. */
#define KN_HASH_SEED 0xcbf29ce484222325ull
uint64_t kn_hash_bytes(uint64_t h, const void* data, size_t n);
uint64_t kn_hash_doubles(uint64_t h, const double* x, size_t n);

/*---- progress ----*/

/* Library code reports progress through a callback the CLI provides (fraction in [0, 1]). */
typedef void (*kn_progress_fn)(void* user, double fraction);

/*---- dense linear algebra (LAPACKE) ----*/

/* In-place Cholesky of the n x n row-major SPD matrix A, of which only the lower triangle is read.
 * The factor's layout is private to kn_chol_solve*: for n <= 48 the row-major lower triangle, above
 * that LAPACK's column-major lower one (the row-major upper triangle). KN_ERR_NUMERIC if not PD. */
kn_status kn_chol_factor(double* A, int n, kn_error* err);
/* Solve L L^T x = b in place with the factor from kn_chol_factor; b has nrhs columns (row-major n x nrhs). */
void kn_chol_solve(const double* L, int n, double* b, int nrhs);
/* Half of the solve with the factor L L^T from kn_chol_factor: B => L^-1 B for nrhs vectors stored
 * one after the other (column-major n x nrhs; BLAS3 for several), and b => L^-T b for one. */
void kn_chol_lower_solve(const double* L, int n, double* B, int nrhs);
void kn_chol_lower_solve_T(const double* L, int n, double* b);

/*---- sparse Cholesky (CHOLMOD) without the input transposes (sparse_chol.c) ----*/

struct cholmod_sparse_struct;
struct cholmod_factor_struct;
struct cholmod_common_struct;
/* cholmod_start with knead's settings: no printing, errors through cc->status, supernodal factors,
 * supernodes merged further than CHOLMOD's default (sparse_chol.c says why) */
void kn_chol_start(struct cholmod_common_struct* cc);
/* cholmod_analyze(_p) of A with the fill-reducing ordering chosen between the given order (order,
 * n entries; NULL: A's own) and AMD: the given one is kept when nnz(L) is at most 3 nnz(A), else
 * the one with less fill. NULL on failure (cc->status says why). */
struct cholmod_factor_struct* kn_chol_analyze(struct cholmod_sparse_struct* A, const int* order,
                                              struct cholmod_common_struct* cc);
/* A matrix pattern's place in CHOLMOD's permuted form: S = tril(P A P^T) with P = L->Perm, and
 * where each entry of tril(A) lands in it. Zero-initialize; S is NULL when L is simplicial. */
typedef struct {
  struct cholmod_sparse_struct* S;
  int* to; /* entry z of A->x is entry to[z] of S->x */
} kn_chol_permuted;
/* (A: packed lower triangle, stype -1, int indices; L: cholmod_analyze(A)) => p for A's pattern.
 * Call again after every new analysis. KN_ERR_NOMEM, or KN_ERR_INVALID for another kind of A. */
kn_status kn_chol_permuted_prepare(kn_chol_permuted* p, struct cholmod_sparse_struct* A,
                                   const struct cholmod_factor_struct* L, struct cholmod_common_struct* cc,
                                   kn_error* err);
/* cholmod_factorize(A, L, cc) for A's current values, bit for bit, without CHOLMOD's two transposes
 * of A: its return value, cc->status and L->minor mean the same. */
int kn_chol_permuted_factor(kn_chol_permuted* p, struct cholmod_sparse_struct* A, struct cholmod_factor_struct* L,
                            struct cholmod_common_struct* cc);
void kn_chol_permuted_free(kn_chol_permuted* p, struct cholmod_common_struct* cc);

/* monotonic wall clock in seconds */
double kn_wall_time(void);

/*---- the threads of the libraries (threads.c) ----*/

/* Make BLAS (OpenBLAS, used by LAPACKE and CHOLMOD) single-threaded, process-wide. Its threaded
 * kernels split sums by thread count, so results would change with OPENBLAS_NUM_THREADS (measured:
 * another state hash on the liquid scene with 1 and 2 threads); knead promises bitwise identical
 * results whatever the thread count. kn_world_create calls it. */
void kn_blas_deterministic(void);
/* Run the OpenMP regions of the libraries (CHOLMOD's supernodal factorization) on one thread until
 * the matching kn_libraries_serial_end: brackets nest, and the process's
 * setting (max-active-levels) is restored when the outermost one ends. CHOLMOD asks for 4 threads
 * per large supernode whatever the machine; on 2 cores waking them cost more than they gave (MPM
 * free motion on the shake example: 37-44 -> 19-22 ms per step). kn_world_step brackets each step. */
void kn_libraries_serial_begin(void);
void kn_libraries_serial_end(void);

/*---- the C library's heap (heap.c) ----*/

/* Keep blocks below 32 MB on the heap and its top in the process up to 64 MB (glibc's mallopt
 * M_MMAP_THRESHOLD, M_TRIM_THRESHOLD; process-wide, set once; nothing elsewhere): the solvers'
 * blocks reused without a page fault per page. kn_world_create calls it. */
void kn_heap_keep(void);

#ifdef __cplusplus
}
#endif
#endif
