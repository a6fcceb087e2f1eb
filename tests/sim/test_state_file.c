/* Saved states (sim/state_file.c): a state saved at step k and loaded into a fresh world of the
 * same scene continues bitwise as the uninterrupted run (kn_world_state_hash equal at the end) on a
 * rigid box held by friction on a tilted floor (stiction anchors), an FEM cube and an MPM block
 * resting on the floor; files that must be refused are, with their exact message, and the world
 * is left unchanged (hash and step equal before and after). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sim/backend.h"
#include "../support/tmpdir.h"

static void make_tmpdir(void) { tmpdir_make("test_state_file"); }

TestSuite(state_file, .init = make_tmpdir, .fini = tmpdir_remove);

/* gravity tilted by atan(0.2) ~ 11 deg: the box sticks (friction 0.6), held by its anchors */
static const char* const RIGID =
    "time_step: 0.01\nduration: 0.3\ngravity: [2, 0, -9.81]\n"
    "objects:\n"
    "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.6}\n"
    "  - {name: box, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, pose: {xyz: [0, 0, 0.05]}, friction: 0.6}\n";

/* smooth_friction: a 200 kg box whose weight the starting stiffness cannot hold, so kappa is raised
 * (digest §3.9) and carried in the backend's part of the state */
static const char* const SMOOTH =
    "time_step: 0.01\nduration: 0.3\ngravity: [2, 0, -9.81]\n"
    "contact: {backend: smooth_friction}\n"
    "objects:\n"
    "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.6}\n"
    "  - {name: box, shape: {box: [0.1, 0.1, 0.1]}, mass: 200, pose: {xyz: [0, 0, 0.05]}, friction: 0.6}\n";

static const char* const FEM =
    "time_step: 0.002\nduration: 0.04\ngravity: [1, 0, -9.81]\n"
    "objects:\n"
    "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.8}\n"
    "deformables:\n"
    "  - name: cube\n"
    "    shape: {box: [0.06, 0.06, 0.06]}\n"
    "    resolution: 0.03\n"
    "    material: {youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}\n"
    "    pose: {xyz: [0, 0, 0.0305]}\n";

static const char* const MPM =
    "time_step: 0.002\nduration: 0.04\ngravity: [1, 0, -9.81]\n"
    "objects:\n"
    "  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.8}\n"
    "deformables:\n"
    "  - name: block\n"
    "    model: mpm\n"
    "    shape: {box: [0.1, 0.1, 0.1]}\n"
    "    resolution: 0.05\n"
    "    particles_per_cell: 8\n"
    "    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.3, density: 1e3}\n"
    "    pose: {xyz: [0, 0, 0.036]}\n";

typedef struct {
  kn_scene* scene;
  kn_world* world;
} sim;

// (scene text) => its scene and a new world
static sim make(const char* yaml) {
  sim s = {0};
  kn_error err = {0};
  cr_assert_eq(kn_scene_load_string(yaml, strlen(yaml), "inline.yaml", &s.scene, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_create(s.scene, &s.world, &err), KN_OK, "%s", err.msg);
  return s;
}

static void sim_free(sim* s) {
  kn_world_free(s->world);
  kn_scene_free(s->scene);
}

// (world, n) => n more steps
static void steps(kn_world* w, int n) {
  kn_error err = {0};
  for (int i = 0; i < n; i++) cr_assert_eq(kn_world_step(w, &err), KN_OK, "%s", err.msg);
}

// (file in tmpdir) => its path (static buffer, one at a time)
static const char* path_of(const char* name) {
  static char p[512];
  snprintf(p, sizeof p, "%s/%s", tmpdir, name);
  return p;
}

/* (scene, k, n) => a run of n steps, and a run saved at step k then loaded into a fresh world and
 * stepped to n, end with the same state hash; returns the bytes of the backend's part of the file
 * (the stiction anchors and warm starts) */
static size_t continuation(const char* yaml, int k, int n) {
  sim a = make(yaml), b = make(yaml), c = make(yaml);
  steps(a.world, n);
  steps(b.world, k);
  kn_error err = {0};
  char path[512];
  snprintf(path, sizeof path, "%s", path_of("k.state"));
  cr_assert_eq(kn_world_save_state(b.world, path, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(kn_world_load_state(c.world, path, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(c.world->step, k);
  cr_assert_eq(c.world->t, b.world->t);
  cr_assert_eq(kn_world_state_hash(c.world), kn_world_state_hash(b.world));
  steps(c.world, n - k);
  steps(b.world, n - k);
  cr_assert_eq(kn_world_state_hash(b.world), kn_world_state_hash(a.world), "the saving run itself");
  cr_assert_eq(kn_world_state_hash(c.world), kn_world_state_hash(a.world), "resumed at step %d of %d: %016llx, "
               "uninterrupted %016llx", k, n, (unsigned long long)kn_world_state_hash(c.world),
               (unsigned long long)kn_world_state_hash(a.world));
  cr_assert_eq(c.world->stats.steps, a.world->stats.steps);
  kn_state_out o = {0};
  a.world->backend->save(a.world, a.world->backend_state, &o);
  size_t len = o.len;
  free(o.data);
  sim_free(&a), sim_free(&b), sim_free(&c);
  return len;
}

Test(state_file, rigid_box_held_by_stiction_continues_bitwise) {
  size_t backend = continuation(RIGID, 10, 30);
  /* 4 corner contacts press: 4 rigid anchors (3 int32 + 7 doubles each) beyond the 4 counts */
  cr_assert_eq(backend, 4 * 8 + 4 * (3 * 4 + 7 * 8), "backend part %zu bytes", backend);
}

Test(state_file, smooth_friction_box_continues_bitwise) {
  sim s = make(SMOOTH);
  steps(s.world, 10);
  kn_state_out o = {0};
  s.world->backend->save(s.world, s.world->backend_state, &o);
  double kappa = 0;
  cr_assert_eq(o.len, 16, "the adapter's MPM grid count (0), then kappa");
  memcpy(&kappa, o.data + 8, 8); /* little-endian hosts only run these tests (x86-64) */
  cr_expect_gt(kappa, 1e5, "kappa %g: the 200 kg box was expected to raise it from 1e5 N/m", kappa);
  free(o.data);
  sim_free(&s);
  cr_assert_eq(continuation(SMOOTH, 10, 30), 16, "the backend's part: no MPM grid, kappa");
}

Test(state_file, fem_cube_continues_bitwise) {
  size_t backend = continuation(FEM, 8, 20);
  cr_assert_gt(backend, 4 * 8, "some FEM vertices sit on the floor with anchors");
}

Test(state_file, mpm_block_continues_bitwise) {
  size_t backend = continuation(MPM, 8, 20);
  cr_assert_gt(backend, 5 * 8, "anchors and the grid's warm start are saved");
}

/* (world, its state file) => the bytes of the file (*len), malloc'd */
static unsigned char* read_all(const char* path, size_t* len) {
  FILE* f = fopen(path, "rb");
  cr_assert_not_null(f);
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* d = malloc(*len);
  cr_assert_eq(fread(d, 1, *len, f), *len);
  fclose(f);
  return d;
}

static void write_all(const char* path, const unsigned char* d, size_t len) {
  FILE* f = fopen(path, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(d, 1, len, f), len);
  fclose(f);
}

// (world, path, expected message) => the load fails with exactly it, the world unchanged
static void refused(kn_world* w, const char* path, kn_status status, const char* message) {
  uint64_t h = kn_world_state_hash(w);
  long step = w->step;
  kn_error err = {0};
  cr_assert_eq(kn_world_load_state(w, path, &err), status, "%s", err.msg);
  cr_assert_str_eq(err.msg, message);
  cr_assert_eq(kn_world_state_hash(w), h);
  cr_assert_eq(w->step, step);
}

Test(state_file, bad_files_are_refused_and_leave_the_world_unchanged) {
  sim s = make(RIGID);
  steps(s.world, 5);
  kn_error err = {0};
  char good[512], bad[512], msg[1024];
  snprintf(good, sizeof good, "%s", path_of("good.state"));
  snprintf(bad, sizeof bad, "%s", path_of("bad.state"));
  cr_assert_eq(kn_world_save_state(s.world, good, &err), KN_OK, "%s", err.msg);
  size_t len;
  unsigned char* d = read_all(good, &len);
  /* header 32 + step, t 16 + statistics 64 + 2 trees (floor: nq = nv = 0; box: 7 + 6) + backend */
  cr_assert_geq(len, 32 + 16 + 64 + 16 + 16 + 13 * 8 + 8 + 8);
  steps(s.world, 3); /* the world at step 8 must stay there */

  /* truncated */
  write_all(bad, d, len - 10);
  snprintf(msg, sizeof msg, "%s: cannot load the state: truncated: %zu bytes, the header announces %zu", bad, len - 10,
           len);
  refused(s.world, bad, KN_ERR_PARSE, msg);
  write_all(bad, d, 20);
  snprintf(msg, sizeof msg, "%s: cannot load the state: truncated: 20 bytes, shorter than the 40-byte header and "
           "checksum", bad);
  refused(s.world, bad, KN_ERR_PARSE, msg);

  /* one byte flipped in the box's q */
  unsigned char* e = malloc(len);
  memcpy(e, d, len);
  e[32 + 16 + 64 + 16 + 16 + 8] ^= 0x10;
  write_all(bad, e, len);
  unsigned long stored = 0;
  for (int k = 0; k < 4; k++) stored |= (unsigned long)e[len - 8 + (size_t)k] << (8 * k);
  unsigned long computed = crc32(crc32(0L, Z_NULL, 0), e, (uInt)(len - 8));
  cr_assert_neq(stored, computed);
  snprintf(msg, sizeof msg, "%s: cannot load the state: checksum mismatch (CRC-32 %08lx stored, %08lx computed): the "
           "file is corrupt", bad, stored, computed);
  refused(s.world, bad, KN_ERR_PARSE, msg);

  /* wrong magic, wrong version */
  memcpy(e, d, len);
  e[0] = 'X';
  write_all(bad, e, len);
  snprintf(msg, sizeof msg, "%s: cannot load the state: not a knead state file (no \"KNSTATE\" magic at its start)",
           bad);
  refused(s.world, bad, KN_ERR_PARSE, msg);
  memcpy(e, d, len);
  e[8] = 1; /* version 1 (before 2026-11-27): the continuous penalty pairs had no anchors */
  write_all(bad, e, len);
  snprintf(msg, sizeof msg, "%s: cannot load the state: format version 1; this knead reads version 2", bad);
  refused(s.world, bad, KN_ERR_PARSE, msg);

  /* a valid checksum over a backend part naming a collider the world does not have: the backend
   * refuses it before anything is kept */
  memcpy(e, d, len);
  kn_state_out o = {0};
  s.world->backend->save(s.world, s.world->backend_state, &o);
  cr_assert_geq(o.len, 8 + 68, "at least one rigid anchor at step 5 (%zu bytes)", o.len);
  free(o.data);
  size_t anchor = len - 8 - o.len + 8; /* the first anchor's collider a */
  e[anchor] = 7;
  unsigned long crc = crc32(crc32(0L, Z_NULL, 0), e, (uInt)(len - 8));
  for (int k = 0; k < 8; k++) e[len - 8 + (size_t)k] = (unsigned char)((unsigned long long)crc >> (8 * k));
  write_all(bad, e, len);
  snprintf(msg, sizeof msg, "%s: cannot load the state: sap backend state: a rigid stiction anchor names colliders "
           "that this world does not have", bad);
  refused(s.world, bad, KN_ERR_PARSE, msg);

  /* missing */
  snprintf(msg, sizeof msg, "%s", path_of("none.state"));
  uint64_t h = kn_world_state_hash(s.world);
  cr_assert_eq(kn_world_load_state(s.world, msg, &err), KN_ERR_IO);
  cr_assert(strstr(err.msg, "none.state") != NULL, "%s", err.msg);
  cr_assert_eq(kn_world_state_hash(s.world), h);

  /* the good file still loads: back to step 5 */
  cr_assert_eq(kn_world_load_state(s.world, good, &err), KN_OK, "%s", err.msg);
  cr_assert_eq(s.world->step, 5);
  free(e);
  free(d);
  sim_free(&s);
}

Test(state_file, a_state_of_another_scene_is_refused) {
  sim a = make(RIGID), b = make(FEM);
  kn_error err = {0};
  char path[512], msg[1024];
  snprintf(path, sizeof path, "%s", path_of("rigid.state"));
  steps(a.world, 2);
  cr_assert_eq(kn_world_save_state(a.world, path, &err), KN_OK, "%s", err.msg);
  uint64_t h = kn_world_state_hash(b.world);
  cr_assert_eq(kn_world_load_state(b.world, path, &err), KN_ERR_INVALID, "%s", err.msg);
  /* the message's two fingerprints, read back, must be the ones it names and differ */
  unsigned long long f1 = 0, f2 = 0;
  const char* p = strstr(err.msg, "(structure fingerprint ");
  cr_assert_not_null(p, "%s", err.msg);
  cr_assert_eq(sscanf(p, "(structure fingerprint %16llx; scene 'inline' has %16llx)", &f1, &f2), 2, "%s", err.msg);
  cr_assert_neq(f1, f2);
  snprintf(msg, sizeof msg, "%s: cannot load the state: saved from another scene (structure fingerprint %016llx; scene "
           "'inline' has %016llx)", path, f1, f2);
  cr_assert_str_eq(err.msg, msg);
  cr_assert_eq(kn_world_state_hash(b.world), h);
  cr_assert_eq(b.world->step, 0);
  sim_free(&a), sim_free(&b);
}
