#!/usr/bin/env python3
"""Sweep the gripper's squeeze force on examples/grasp_box.yaml and show how far the box slips.

The gripper's PD pulls the fingers toward the target of its `close` phase,
robots[1].controller.sequence[1].q[0] (0.01 m in the scene); the pads touch the 5 cm box at
0.02 m of stroke, so the squeeze is kp (0.02 - target) with kp = 2000 N/m (20 N in the scene,
split by the mimic coupler into ~10 N per finger). Each sample overrides that target, runs the
scene to its end and measures the slip: the hand is lifted 0.21 m (grasp_box.yaml's design), the
box's lift falls short of that by what it slid in (or out of) the grip.

Run from the build tree:  PYTHONPATH=build/python python3 examples/python/squeeze_sweep.py
(after cmake --install: python3 examples/python/squeeze_sweep.py). Plots squeeze_sweep.png when
matplotlib is importable (Debian: python3-matplotlib).
"""
import os
import sys

import numpy as np

import knead

SCENE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grasp_box.yaml")
KP = 2000.0           # robots[1].controller.kp [N/m]
CONTACT_STROKE = 0.02 # finger coordinate at which the pads touch the box [m]
HAND_LIFT = 0.21      # how far the hand rises between the grasp and the end [m]


def run(force):
    target = CONTACT_STROKE - force / KP
    w = knead.World(SCENE, overrides=[f"robots[1].controller.sequence[1].q[0]={target:.6g}"])
    box = w.q("box")  # a zero-copy view: it follows the world as it steps
    z0 = box[2]
    w.run()
    lift = box[2] - z0
    return HAND_LIFT - lift, box[2]


def main():
    forces = np.linspace(1.0, 20.0, 12) if len(sys.argv) < 2 else np.array([float(f) for f in sys.argv[1:]])
    slips = []
    print(f"{'squeeze [N]':>12} {'slip [mm]':>10} {'box z [m]':>10}")
    for f in forces:
        slip, z = run(f)
        slips.append(slip)
        print(f"{f:12.2f} {slip * 1e3:10.2f} {z:10.4f}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    plt.plot(forces, np.array(slips) * 1e3, "o-")
    plt.xlabel("squeeze force [N]")
    plt.ylabel("slip of the box in the grip [mm]")
    plt.title("grasp_box: slip against squeeze force")
    plt.grid(True)
    plt.savefig("squeeze_sweep.png", dpi=120)
    print("wrote squeeze_sweep.png")


if __name__ == "__main__":
    main()
