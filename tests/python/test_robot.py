# knead.Robot: the multibody model of a URDF (CRBA, point Jacobian, ABA, RNEA).
import os

import numpy as np
import pytest

import knead

# one link of mass m hanging at l below a revolute joint about y: M = Iyy + m l^2,
# gravity torque m g l sin(q), the Jacobian of the centre of mass (below)
PENDULUM = """<robot name="pendulum">
  <link name="base"/>
  <link name="bob">
    <inertial><origin xyz="0 0 -0.5"/><mass value="2"/>
      <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="bob"/>
    <axis xyz="0 1 0"/><limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
</robot>
"""


@pytest.fixture
def pendulum(tmp_path):
    p = tmp_path / "pendulum.urdf"
    p.write_text(PENDULUM)
    return knead.Robot(str(p))


def test_pendulum_known_values(pendulum):
    m, l, iyy, g = 2.0, 0.5, 0.02, 9.81
    assert pendulum.nq == 1 and pendulum.nv == 1 and pendulum.mass == pytest.approx(2.0)
    assert pendulum.bodies == ["base", "bob"]
    for q in (0.0, 0.3, -1.1):
        np.testing.assert_allclose(pendulum.mass_matrix([q]), [[iyy + m * l * l]], rtol=1e-12)
        # RNEA at rest: the torque that holds the bob against gravity, m g l sin(q) in magnitude
        tau = pendulum.inverse_dynamics([q], [0.0], [0.0])
        assert abs(tau[0]) == pytest.approx(m * g * l * abs(np.sin(q)), rel=1e-12, abs=1e-12)
        # the bob's centre at p = R_y(q) (0, 0, -l) = (-l sin q, 0, -l cos q): dp/dq = (-l cos q, 0, l sin q)
        J = pendulum.jacobian([q], "bob", [0, 0, -l])
        np.testing.assert_allclose(J[:, 0], [-l * np.cos(q), 0, l * np.sin(q)], atol=1e-12)
        J6 = pendulum.jacobian([q], 1, [0, 0, -l], angular=True)
        np.testing.assert_allclose(J6[:3, 0], [0, 1, 0], atol=1e-12)
        np.testing.assert_allclose(J6[3:, 0], J[:, 0], atol=1e-12)
    # free fall from rest: qdd = -m g l sin(q) / M
    q = 0.3
    qdd = pendulum.forward_dynamics([q], [0.0], [0.0])
    assert abs(qdd[0]) == pytest.approx(m * g * l * np.sin(q) / (iyy + m * l * l), rel=1e-12)


def test_arm_mass_matrix_and_dynamics_round_trip(source_dir):
    arm = knead.Robot(os.path.join(source_dir, "examples", "models", "knead_arm7.urdf"))
    assert arm.nv == 7
    rng = np.random.default_rng(23)
    for _ in range(5):
        q, v, tau = rng.uniform(-1, 1, 7), rng.uniform(-2, 2, 7), rng.uniform(-20, 20, 7)
        M = arm.mass_matrix(q)
        np.testing.assert_allclose(M, M.T, rtol=0, atol=1e-12 * np.abs(M).max())
        assert np.linalg.eigvalsh(M).min() > 0
        qdd = arm.forward_dynamics(q, v, tau)
        np.testing.assert_allclose(arm.inverse_dynamics(q, v, qdd), tau, rtol=1e-9, atol=1e-9 * np.abs(tau).max())
        # RNEA is linear in qdd with M as its matrix
        bias = arm.inverse_dynamics(q, v, np.zeros(7))
        np.testing.assert_allclose(arm.inverse_dynamics(q, v, qdd) - bias, M @ qdd, rtol=1e-9, atol=1e-9)
        # every joint is revolute: the angular rows' columns are the unit joint axes in the world
        J6 = arm.jacobian(q, arm.bodies[-1], [0, 0, 0.1], angular=True)
        assert J6.shape == (6, 7)
        np.testing.assert_allclose(np.linalg.norm(J6[:3], axis=0), np.ones(7), rtol=1e-12)
        np.testing.assert_array_equal(J6[3:], arm.jacobian(q, arm.bodies[-1], [0, 0, 0.1]))


def test_bad_urdf_raises(tmp_path):
    p = tmp_path / "bad.urdf"
    p.write_text("<robot name='x'><link name='a'/><joint name='j' type='revolute'><parent link='a'/>"
                 "<child link='nope'/></joint></robot>")
    with pytest.raises(knead.Error, match="bad.urdf"):
        knead.Robot(str(p))
    with pytest.raises(ValueError):
        knead.Robot(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "models",
                                 "knead_arm7.urdf")).mass_matrix([0.0])


def test_uninitialized_objects_raise():
    with pytest.raises(RuntimeError):
        knead.Robot.__new__(knead.Robot).mass_matrix([0.0])
    with pytest.raises(RuntimeError):
        knead.Robot.__new__(knead.Robot).nq
    with pytest.raises(RuntimeError):
        knead.World.__new__(knead.World).step()


def test_matches_the_c_library(source_dir):
    # tests/python/helper/mb_reference.c calls the same kn_mb_* functions from C: bitwise equal
    import subprocess

    ref = os.environ.get("KNEAD_MB_REFERENCE")
    if not ref:
        pytest.skip("KNEAD_MB_REFERENCE not set (ctest sets it)")
    urdf = os.path.join(source_dir, "examples", "models", "knead_arm7.urdf")
    arm = knead.Robot(urdf)
    rng = np.random.default_rng(7)
    q, v, x = rng.uniform(-1, 1, 7), rng.uniform(-2, 2, 7), rng.uniform(-20, 20, 7)
    args = [ref, urdf] + [repr(float(a)) for a in np.concatenate([q, v, x])]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    c = {line.split()[0]: np.array([float(t) for t in line.split()[1:]]) for line in out.splitlines()}
    np.testing.assert_array_equal(arm.mass_matrix(q).ravel(), c["M"])
    np.testing.assert_array_equal(arm.inverse_dynamics(q, v, x), c["tau"])
    np.testing.assert_array_equal(arm.forward_dynamics(q, v, x), c["qdd"])
    np.testing.assert_array_equal(arm.jacobian(q, len(arm.bodies) - 1).ravel(), c["J"])
