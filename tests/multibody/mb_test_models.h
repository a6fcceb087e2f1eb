/* Small models built programmatically for the multibody tests (included by each test program).
 * The iiwa14 numbers are the public kinematic and inertial parameters of the KUKA LBR iiwa 14
 * (as published in Drake's iiwa14_no_collision.urdf), typed in here. */
#ifndef KNEAD_TESTS_MB_TEST_MODELS_H
#define KNEAD_TESTS_MB_TEST_MODELS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "multibody/multibody.h"

#define TEST_PI 3.14159265358979323846

static inline kn_mb_body tm_body(const char* name, int parent, const char* joint, kn_joint_type t, double mass) {
  kn_mb_body b;
  memset(&b, 0, sizeof b);
  b.name = (char*)name;
  b.joint_name = (char*)joint;
  b.parent = parent;
  b.jtype = t;
  kn_pose_identity(&b.X_pj);
  b.axis[2] = 1;
  b.velocity_limit = INFINITY;
  b.effort_limit = INFINITY;
  b.mass = mass;
  return b;
}

static inline void tm_set_origin(kn_mb_body* b, double x, double y, double z, double r, double p, double yw) {
  double xyz[3] = {x, y, z}, rpy[3] = {r, p, yw};
  kn_pose_from_xyz_rpy(xyz, rpy, &b->X_pj);
}

static inline void tm_set_inertia(kn_mb_body* b, double cx, double cy, double cz, double ixx, double iyy, double izz,
                           double ixy, double ixz, double iyz) {
  b->com[0] = cx, b->com[1] = cy, b->com[2] = cz;
  double I[9] = {ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz};
  memcpy(b->I_com, I, sizeof I);
}

static inline int tm_add(kn_mb_model* m, kn_mb_body* b) {
  kn_error err = {0};
  int r = kn_mb_add_body(m, b, &err);
  if (r < 0) {
    fprintf(stderr, "tm_add: %s\n", err.msg);
    abort();
  }
  return r;
}

/* a point mass `mass` at distance l below a revolute pivot about y at the world origin */
static inline kn_mb_model* tm_pendulum(double l, double mass) {
  kn_mb_model* m = kn_mb_model_create("pendulum");
  kn_mb_body b = tm_body("bob", -1, "pivot", KN_JOINT_REVOLUTE, mass);
  b.axis[0] = 0, b.axis[1] = 1, b.axis[2] = 0;
  tm_set_inertia(&b, 0, 0, -l, 0, 0, 0, 0, 0, 0);
  tm_add(m, &b);
  return m;
}

/* two uniform rods (length l, mass mass) hanging from revolute joints about y */
static inline kn_mb_model* tm_double_pendulum(double l, double mass) {
  kn_mb_model* m = kn_mb_model_create("double_pendulum");
  double I = mass * l * l / 12;
  kn_mb_body b = tm_body("upper", -1, "shoulder", KN_JOINT_REVOLUTE, mass);
  b.axis[0] = 0, b.axis[1] = 1, b.axis[2] = 0;
  tm_set_inertia(&b, 0, 0, -l / 2, I, I, 1e-4 * I, 0, 0, 0);
  tm_add(m, &b);
  b = tm_body("lower", 0, "elbow", KN_JOINT_REVOLUTE, mass);
  b.axis[0] = 0, b.axis[1] = 1, b.axis[2] = 0;
  tm_set_origin(&b, 0, 0, -l, 0, 0, 0);
  tm_set_inertia(&b, 0, 0, -l / 2, I, I, 1e-4 * I, 0, 0, 0);
  tm_add(m, &b);
  return m;
}

/* KUKA LBR iiwa 14: a fixed base link_0 and seven revolute joints about their z axes */
static inline kn_mb_model* tm_iiwa14(void) {
  kn_mb_model* m = kn_mb_model_create("iiwa14");
  static const double origin[7][6] = {
      {0, 0, 0.1575, 0, 0, 0},
      {0, 0, 0.2025, TEST_PI / 2, 0, TEST_PI},
      {0, 0.2045, 0, TEST_PI / 2, 0, TEST_PI},
      {0, 0, 0.2155, TEST_PI / 2, 0, 0},
      {0, 0.1845, 0, -TEST_PI / 2, TEST_PI, 0},
      {0, 0, 0.2155, TEST_PI / 2, 0, 0},
      {0, 0.081, 0, -TEST_PI / 2, TEST_PI, 0},
  };
  /* mass, com xyz, ixx iyy izz (all products zero) */
  static const double inertial[7][7] = {
      {5.76, 0, -0.03, 0.12, 0.033, 0.0333, 0.0123},  {6.35, 0.0003, 0.059, 0.042, 0.0305, 0.011, 0.0304},
      {3.5, 0, 0.03, 0.13, 0.025, 0.0238, 0.0076},    {3.5, 0, 0.067, 0.034, 0.017, 0.006, 0.0164},
      {3.5, 0.0001, 0.021, 0.076, 0.01, 0.0087, 0.00449}, {1.8, 0, 0.0006, 0.0004, 0.0049, 0.0047, 0.0036},
      {1.2, 0, 0, 0.02, 0.001, 0.001, 0.001},
  };
  static const double effort[7] = {320, 320, 176, 176, 110, 40, 40};
  static const double lim[7] = {2.96705972839, 2.09439510239, 2.96705972839, 2.09439510239,
                                2.96705972839, 2.09439510239, 3.05432619099};
  kn_mb_body b = tm_body("iiwa_link_0", -1, NULL, KN_JOINT_FIXED, 5);
  tm_set_inertia(&b, -0.1, 0, 0.07, 0.05, 0.06, 0.03, 0, 0, 0);
  tm_add(m, &b);
  static const char* links[7] = {"iiwa_link_1", "iiwa_link_2", "iiwa_link_3", "iiwa_link_4",
                                 "iiwa_link_5", "iiwa_link_6", "iiwa_link_7"};
  static const char* joints[7] = {"iiwa_joint_1", "iiwa_joint_2", "iiwa_joint_3", "iiwa_joint_4",
                                  "iiwa_joint_5", "iiwa_joint_6", "iiwa_joint_7"};
  for (int j = 0; j < 7; j++) {
    b = tm_body(links[j], j, joints[j], KN_JOINT_REVOLUTE, inertial[j][0]);
    tm_set_origin(&b, origin[j][0], origin[j][1], origin[j][2], origin[j][3], origin[j][4], origin[j][5]);
    tm_set_inertia(&b, inertial[j][1], inertial[j][2], inertial[j][3], inertial[j][4], inertial[j][5],
                   inertial[j][6], 0, 0, 0);
    b.has_position_limits = 1;
    b.lower = -lim[j], b.upper = lim[j];
    b.effort_limit = effort[j];
    b.damping = 0.5;
    tm_add(m, &b);
  }
  return m;
}

/* A branching tree exercising every joint type: floating base with a revolute arm (which
 * carries a prismatic slider and a welded tip) and a planar body (which carries a continuous
 * wheel). Off-axis centres of mass, products of inertia and tilted joint frames throughout. */
static inline kn_mb_model* tm_tree(void) {
  kn_mb_model* m = kn_mb_model_create("tree");
  kn_mb_body b = tm_body("base", -1, "free", KN_JOINT_FLOATING, 3.0);
  tm_set_origin(&b, 0.1, -0.2, 0.5, 0.1, 0.2, 0.3);
  tm_set_inertia(&b, 0.02, 0.01, -0.03, 0.05, 0.07, 0.06, 0.004, -0.002, 0.003);
  int base = tm_add(m, &b);
  b = tm_body("arm", base, "shoulder", KN_JOINT_REVOLUTE, 1.2);
  tm_set_origin(&b, 0.1, 0.05, 0.2, 0.3, -0.4, 0.5);
  b.axis[0] = 0.3, b.axis[1] = -0.5, b.axis[2] = 0.8; /* normalized by kn_mb_add_body */
  tm_set_inertia(&b, 0.0, 0.03, 0.15, 0.02, 0.021, 0.005, 0.001, 0.0005, -0.001);
  b.damping = 0.3;
  int arm = tm_add(m, &b);
  b = tm_body("slider", arm, "slide", KN_JOINT_PRISMATIC, 0.7);
  tm_set_origin(&b, 0, 0.02, 0.3, -0.2, 0.1, 0.0);
  b.axis[0] = 0.2, b.axis[1] = 0.1, b.axis[2] = 1.0;
  tm_set_inertia(&b, 0.01, -0.02, 0.05, 0.004, 0.003, 0.002, 0.0002, 0, 0.0001);
  int slider = tm_add(m, &b);
  b = tm_body("tip", slider, "tip_weld", KN_JOINT_FIXED, 0.3);
  tm_set_origin(&b, 0.05, 0, 0.1, 0.5, 0, 0);
  tm_set_inertia(&b, 0.0, 0.01, 0.02, 0.001, 0.0012, 0.0008, 0, 0, 0);
  tm_add(m, &b);
  b = tm_body("cart", base, "plane", KN_JOINT_PLANAR, 2.0);
  tm_set_origin(&b, -0.2, 0.1, -0.1, 0.0, 0.3, -0.2);
  b.axis[0] = 0.1, b.axis[1] = 0.2, b.axis[2] = 1.0;
  tm_set_inertia(&b, 0.05, -0.04, 0.02, 0.03, 0.04, 0.05, -0.002, 0.001, 0.0015);
  int cart = tm_add(m, &b);
  b = tm_body("wheel", cart, "spin", KN_JOINT_CONTINUOUS, 0.5);
  tm_set_origin(&b, 0.1, 0.0, 0.05, TEST_PI / 2, 0, 0);
  tm_set_inertia(&b, 0.005, 0.0, -0.01, 0.002, 0.002, 0.003, 0, 0, 0);
  tm_add(m, &b);
  return m;
}

/* deterministic pseudo-random numbers in [-1, 1] */
static inline double tm_rand(unsigned* s) {
  *s = *s * 1664525u + 1013904223u;
  return (double)(*s >> 8) / (double)(1u << 23) - 1.0;
}

/* a random configuration: q in [-1, 1] except unit quaternions */
static inline void tm_random_q(const kn_mb_model* m, unsigned* s, double* q) {
  for (int k = 0; k < m->nq; k++) q[k] = tm_rand(s);
  for (int i = 0; i < m->nbody; i++)
    if (m->bodies[i].jtype == KN_JOINT_FLOATING) {
      double* qq = q + m->bodies[i].q_adr + 3;
      kn_quat_normalize(qq);
    }
}

#endif
