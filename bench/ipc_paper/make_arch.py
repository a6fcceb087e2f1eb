#!/usr/bin/env python3
"""Writes the cement arch of IPC's Fig. 7 / Fig. 23 (digest incremental-potential-contact.md §9.3 F3,
§9.6) as one .vtk tet mesh per stone and the scene arch.yaml that places them.

A semicircular arch of N wedge stones (voussoirs), each a hexahedron of 8 nodes cut into 6 tets
(25 stones: 200 nodes, 150 tets, the paper's 150 tets). Stones are separated by `gap` along each
joint (smaller than dhat = 1e-6 m, so every joint starts inside the barrier but not touching:
IPC needs a positive start distance). usage: make_arch.py [N] [gap]"""
import math, sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 25
GAP = float(sys.argv[2]) if len(sys.argv) > 2 else 5e-7
RI, RO, DEPTH = 1.0, 1.3, 0.4  # inner and outer radius, depth along y [m]
GROW = 0.02  # odd stones' margin [m] (below)

# a hexahedron's 6 tets around its diagonal 0-6 (nodes 0-3 bottom, 4-7 top, same order)
TETS = [(0, 1, 2, 6), (0, 2, 3, 6), (0, 3, 7, 6), (0, 7, 4, 6), (0, 4, 5, 6), (0, 5, 1, 6)]


def stone(k):
    """The 8 corners of stone k: angles a0 < a1 from the +x axis, the joint gap taken half from
    each side (the end stones' outer faces lie on the ground plane z = 0)."""
    da = math.pi / N
    a0, a1 = k * da, (k + 1) * da
    # odd stones are larger by GROW on their inner, outer and side faces, so that every corner of an
    # even stone lies strictly inside its neighbours' joint faces: the backend's contacts are
    # vertex-face only (no edge-edge pairs yet), and a corner exactly on a face's edge slips off it
    g = GROW if k % 2 else 0.0
    p = []
    for y in (-DEPTH / 2 - g, DEPTH / 2 + g):
        for r, a, side in ((RI - g, a0, +1), (RO + g, a0, +1), (RO + g, a1, -1), (RI - g, a1, -1)):
            x, z = r * math.cos(a), r * math.sin(a)
            # shift along the joint's normal (the tangent direction) by half the gap, except on the ground
            ground = (k == 0 and side > 0) or (k == N - 1 and side < 0)
            if not ground:
                x += side * (-math.sin(a)) * GAP / 2
                z += side * math.cos(a) * GAP / 2
            else:
                z = max(z, 0.0)
                z = GAP / 2  # the end stones start gap/2 above the ground
                x = x
            p.append((x, y, z))
    return p


def signed_volume(a, b, c, d):
    u = [b[i] - a[i] for i in range(3)]
    v = [c[i] - a[i] for i in range(3)]
    w = [d[i] - a[i] for i in range(3)]
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0])
            + u[2] * (v[0] * w[1] - v[1] * w[0])) / 6


for k in range(N):
    p = stone(k)
    tets = []
    for t in TETS:
        if signed_volume(*[p[i] for i in t]) < 0:
            t = (t[0], t[2], t[1], t[3])
        tets.append(t)
    with open(f"arch_stone_{k:02d}.vtk", "w") as f:
        f.write("# vtk DataFile Version 3.0\narch stone %d (bench/ipc_paper/make_arch.py)\nASCII\n" % k)
        f.write("DATASET UNSTRUCTURED_GRID\nPOINTS 8 double\n")
        for x in p:
            f.write("%.17g %.17g %.17g\n" % x)
        f.write("CELLS 6 30\n")
        for t in tets:
            f.write("4 %d %d %d %d\n" % t)
        f.write("CELL_TYPES 6\n" + "10\n" * 6)

with open("arch.yaml", "w") as f:
    f.write("""# IPC's cement arch (Li et al. 2020, Fig. 7; digest incremental-potential-contact.md §9.3 F3, §9.6):
# %d FEM wedge stones (8 nodes, 6 tets each; written by make_arch.py), a semicircle of inner radius
# %g m, outer %g m, depth %g m, on a rigid floor; joints start %g m apart (inside dhat); odd stones are 2 cm larger
# on their faces (make_arch.py says why). The paper's
# values: rho 2300, E 2e10, nu 0.2, dhat 1e-6 m, mu 0.5, eps_v 1e-5 l, eps_d 1e-4 l, h 0.01.
# The paper's arch is 20 m high; this one is %g m.
# Keys that differ from the defaults, and why (measured with knead run, Release):
#  - dhat 1e-6 m (the paper's; the default 1e-3 l is 3 mm): each joint starts 0.5 um apart, inside it.
#  - epsilon_v 2.9e-5 m/s = the paper's 1e-5 l (stiction accuracy: a joint at its friction limit
#    creeps at up to eps_v, digest §9.3 F1; the default 1e-3 l is 100 times that).
#  - not set: epsilon_d, the default 1e-6 l, 100 times stricter than the paper's 1e-4 l and cheaper
#    here (2.2 against 3.8 Newton iterations a step over 0.5 s; at 1e-4 l with one lagging solve the
#    keystone drops 0.6 mm at steps 4-5 and then holds, with two lagging solves it does not).
#  - contact.margin 0.01 m: FEM vertex candidates are detected within margin + dhat of a surface at
#    the step start, with no speculative reach as rigid pairs have; at margin 0 a floor contact of an
#    end stone went undetected at a step start (103 contacts, not 104) and the solve failed at step 42.
name: ipc_arch
time_step: 0.01
duration: 1.0
contact:
  backend: ipc
  margin: 0.01
  ipc: {dhat: 1e-6, epsilon_v: 2.9e-5}
objects:
  - name: ground
    shape: {halfspace: {normal: [0, 0, 1]}}
    fixed: true
    friction: 0.5
deformables:
""" % (N, RI, RO, DEPTH, GAP, RO + GROW))
    for k in range(N):
        f.write("""  - name: stone_%02d
    shape: {mesh: arch_stone_%02d.vtk}
    material: {type: linear_corotated, youngs_modulus: 2e10, poisson_ratio: 0.2, density: 2300}
    friction: 0.5
""" % (k, k))
