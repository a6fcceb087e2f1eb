# knead.World: loading, stepping, hashes, errors, zero-copy views (python/knead_module.c).
import os
import re
import subprocess
import threading

import numpy as np
import pytest

import knead
from scenes import FEM, MPM, RIGID


def test_grasp_hash_matches_knead_run(source_dir, tmp_path):
    scene = os.path.join(source_dir, "examples", "grasp_box.yaml")
    w = knead.World(scene)
    assert w.total_steps == 550
    w.step(w.total_steps)
    assert w.step_count == 550 and w.t == pytest.approx(5.5)
    cli = os.environ.get("KNEAD_CLI")
    if not cli:
        pytest.skip("KNEAD_CLI not set (ctest sets it)")
    out = subprocess.run([cli, "run", scene, "--out", str(tmp_path / "out")], capture_output=True, text=True,
                         check=True).stdout
    assert re.search(r"state hash ([0-9a-f]{16})", out).group(1) == w.state_hash


def test_run_equals_steps_and_hash_format():
    a, b = knead.World(yaml=RIGID), knead.World(yaml=RIGID)
    a.run()
    for _ in range(b.total_steps):
        b.step()
    assert a.state_hash == b.state_hash and re.fullmatch(r"[0-9a-f]{16}", a.state_hash)
    assert a.step_count == 30


def test_overrides_change_the_scene():
    w = knead.World(yaml=RIGID, overrides=["duration=0.1", "objects[1].pose.xyz[2]=0.5"])
    assert w.total_steps == 10
    assert w.q("box")[2] == 0.5


def test_bad_scene_raises_with_file_and_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(RIGID.replace("mass: 1", "mass: -1"))
    with pytest.raises(knead.Error, match=r"bad\.yaml:6: objects\[1\]\.mass"):
        knead.World(str(bad))
    assert issubclass(knead.Error, RuntimeError)
    with pytest.raises(knead.Error, match=r"--set objects\[1\]\.nope=1"):
        knead.World(yaml=RIGID, overrides=["objects[1].nope=1"])
    with pytest.raises(knead.Error, match="missing.yaml"):
        knead.World(str(tmp_path / "missing.yaml"))


def test_failed_step_leaves_the_world_at_step_n():
    # a diverging time step fails (KN_ERR_NUMERIC); the state stays at the last good step
    w = knead.World(yaml=RIGID, overrides=["time_step=1e300", "duration=1e301"])
    h = w.state_hash
    with pytest.raises(knead.Error, match="step"):
        w.step(5)
    assert w.state_hash == h and w.step_count == 0


def test_views_alias_library_memory():
    w = knead.World(yaml=RIGID)
    q, v = w.q("box"), w.v("box")
    assert q.shape == (7,) and v.shape == (6,)
    assert q.__array_interface__["data"][0] == w._address_of("q", "box")
    assert v.__array_interface__["data"][0] == w._address_of("v", "box")
    assert not q.flags.writeable and not q.flags.owndata
    with pytest.raises(ValueError):
        q[0] = 1.0
    before = q.copy()
    w.step(10)
    assert not np.array_equal(before, q)  # the same view shows the new state
    assert q.base is w or q.base.base is w
    del w
    assert np.isfinite(q).all()  # the view keeps the world alive


def test_robot_views(source_dir):
    w = knead.World(os.path.join(source_dir, "examples", "grasp_box.yaml"))
    assert w.robots == ["arm", "gripper"] and w.objects == ["floor", "box"]
    assert w.q("arm").shape == (7,) and w.q("gripper").shape == (2,)
    np.testing.assert_allclose(w.q("gripper"), [0.04, 0.04])
    assert w.q("floor").shape == (0,)
    with pytest.raises(KeyError):
        w.q("nothing")


def test_fem_view():
    w = knead.World(yaml=FEM)
    assert w.fems == ["cube"]
    x = w.fem_x("cube")
    assert x.ndim == 2 and x.shape[1] == 3 and x.shape[0] >= 8
    assert x.__array_interface__["data"][0] == w._address_of("fem", "cube")
    z0 = x[:, 2].mean()
    w.step(5)
    assert x[:, 2].mean() != z0
    assert not x.flags.writeable


def test_mpm_view():
    w = knead.World(yaml=MPM)
    assert w.mpms == ["block"]
    x = w.mpm_x("block")
    assert x.ndim == 2 and x.shape[1] == 3 and x.shape[0] > 0
    assert x.__array_interface__["data"][0] == w._address_of("mpm", "block")
    before = x.copy()
    w.step(3)
    assert not np.array_equal(before, x)


def test_step_releases_the_gil():
    w = knead.World(yaml=MPM, overrides=["duration=1"])
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)

    th = threading.Thread(target=count)
    th.start()
    try:
        w.step(40)
    finally:
        stop.set()
        th.join()
    assert len(ticks) > 0


def test_squeeze_sweep_example(source_dir):
    # examples/python/squeeze_sweep.py (quick: about 20 ms a run): a weak grip drops the box, the
    # scene's 20 N holds it within the ~1 mm sag of the design
    import importlib.util

    path = os.path.join(source_dir, "examples", "python", "squeeze_sweep.py")
    spec = importlib.util.spec_from_file_location("squeeze_sweep", path)
    sweep = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sweep)
    assert sweep.run(2.0)[0] > 0.15
    assert abs(sweep.run(20.0)[0]) < 0.002
