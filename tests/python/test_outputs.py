# knead.World: contacts, solver statistics, checks, controller set-points and saved states.
import os

import numpy as np
import pytest

import knead
from scenes import FEM, MPM, RIGID


def test_contacts_of_the_resting_box():
    w = knead.World(yaml=RIGID)
    w.step(20)
    c = w.contacts()["rigid"]
    n = len(c["pairs"])
    assert n >= 4 and c["points"].shape == (n, 3) and c["normals"].shape == (n, 3)
    assert c["forces"].shape == (n, 3) and c["phi"].shape == (n,)
    assert set(c["pairs"]) == {("floor", "box")}
    # the floor carries the box: total force on the box (side b) is its weight against gravity (2, 0, -9.81)
    np.testing.assert_allclose(c["forces"].sum(axis=0), [-2.0, 0.0, 9.81], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(c["normals"], np.tile([0, 0, 1.0], (n, 1)), atol=1e-12)
    assert w.contacts()["fem"]["points"].shape == (0, 3)


def test_fem_and_mpm_contacts():
    w = knead.World(yaml=FEM)
    w.step(10)
    c = w.contacts()["fem"]
    n = len(c["pairs"])
    assert n > 0 and c["forces"].shape == (n, 3) and c["kind"].shape == (n,)
    assert all(p == ("floor", "cube") for p in c["pairs"])
    assert c["forces"][:, 2].sum() > 0
    w = knead.World(yaml=MPM)
    w.step(10)
    c = w.contacts()["mpm"]
    n = len(c["pairs"])
    assert n > 0 and c["particle"].shape == (n,) and all(p == ("block", "floor") for p in c["pairs"])


def test_stats():
    w = knead.World(yaml=RIGID)
    w.step(5)
    s = w.stats()
    assert s["run"]["steps"] == 5
    assert s["last"]["iterations"] >= 1 and s["last"]["contacts"] >= 4
    assert s["last"]["residual"] >= 0 and s["run"]["max_contacts"] >= s["last"]["contacts"]


def test_checks():
    w = knead.World(yaml=RIGID)
    w.run()
    checks = {c["name"]: c for c in w.checks()}
    assert set(checks) == {"stays_up", "flies"}
    assert checks["stays_up"]["passed"] and checks["stays_up"]["measured"] == pytest.approx(0.05, abs=1e-3)
    assert checks["flies"]["expect_fail"] and not checks["flies"]["passed"]  # fails, as the scene expects
    assert "m" in checks["stays_up"]["message"]
    assert knead.World(yaml=FEM).checks() == []


def test_set_setpoint(source_dir):
    w = knead.World(os.path.join(source_dir, "examples", "grasp_box.yaml"))
    assert [c["name"] for c in w.controllers()] == ["arm", "gripper"]
    assert w.controllers()[1]["reference"] == "sequence"
    w.set_setpoint("gripper", [0.02])
    assert w.controllers()[1]["reference"] == "setpoint"
    q_ref, v_ref = w.reference("gripper")
    np.testing.assert_array_equal(q_ref, [0.02]) and np.testing.assert_array_equal(v_ref, [0.0])
    w.step(100)
    assert w.q("gripper")[0] == pytest.approx(0.02, abs=2e-3)  # the fingers went to the new set-point
    with pytest.raises(knead.Error):
        w.set_setpoint("gripper", [0.01, 0.02])
    with pytest.raises(KeyError):
        w.set_setpoint("box", [0.0])


@pytest.mark.parametrize("scene", [RIGID, FEM, MPM], ids=["rigid", "fem", "mpm"])
def test_state_round_trip(scene):
    ref = knead.World(yaml=scene)
    ref.run()
    w = knead.World(yaml=scene)
    w.step(w.total_steps // 2)
    state = w.get_state()
    assert isinstance(state, bytes) and state.startswith(b"KNSTATE")
    other = knead.World(yaml=scene)
    other.set_state(state)
    assert other.step_count == w.step_count and other.state_hash == w.state_hash
    other.run()
    assert other.state_hash == ref.state_hash


def test_bad_state_is_refused_and_leaves_the_world():
    w = knead.World(yaml=RIGID)
    w.step(3)
    h = w.state_hash
    with pytest.raises(knead.Error, match="^set_state: cannot load the state: truncated"):
        w.set_state(b"garbage")
    with pytest.raises(knead.Error, match="not a knead state file"):
        w.set_state(b"garbage" * 20)
    state = knead.World(yaml=FEM).get_state()
    with pytest.raises(knead.Error, match="another scene"):
        w.set_state(state)
    assert w.state_hash == h and w.step_count == 3
