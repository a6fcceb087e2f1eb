# Small scenes (the ones of tests/sim/test_state_file.c) for the Python tests.
RIGID = """time_step: 0.01
duration: 0.3
gravity: [2, 0, -9.81]
objects:
  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.6}
  - {name: box, shape: {box: [0.1, 0.1, 0.1]}, mass: 1, pose: {xyz: [0, 0, 0.05]}, friction: 0.6}
checks:
  - {name: stays_up, type: height_above, body: box, value: 0.04}
  - {name: flies, type: height_above, body: box, value: 0.5, expect: fail}
"""

FEM = """time_step: 0.002
duration: 0.04
gravity: [1, 0, -9.81]
objects:
  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.8}
deformables:
  - name: cube
    shape: {box: [0.06, 0.06, 0.06]}
    resolution: 0.03
    material: {youngs_modulus: 1e5, poisson_ratio: 0.4, density: 1e3}
    pose: {xyz: [0, 0, 0.0305]}
"""

MPM = """time_step: 0.002
duration: 0.04
gravity: [1, 0, -9.81]
objects:
  - {name: floor, shape: {halfspace: {normal: [0, 0, 1]}}, fixed: true, friction: 0.8}
deformables:
  - name: block
    model: mpm
    shape: {box: [0.1, 0.1, 0.1]}
    resolution: 0.05
    particles_per_cell: 8
    material: {type: linear_corotated, youngs_modulus: 1e5, poisson_ratio: 0.3, density: 1e3}
    pose: {xyz: [0, 0, 0.036]}
"""
