// knead replay viewer: reads the KNEAD object written by output/output_html.c (shapes in their body
// frames, per frame [t, body poses (x y z qx qy qz qw), FEM surface positions]; MPM particles in
// mpm_frames, one every mpm_stride frames, per body [3 n positions, n colour values]) and animates
// it with three.js. Embedded into libknead at build time; z is up, as in the simulation.
(function () {
  'use strict';
  const D = KNEAD;
  const info = document.getElementById('info');
  const slider = document.getElementById('slider');
  const playButton = document.getElementById('play');
  const timeLabel = document.getElementById('time');
  let renderer;
  try {
    renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  } catch (e) {
    info.textContent = 'knead replay: WebGL is not available in this browser (' + e.message + ')';
    document.title = 'knead replay: no WebGL';
    return;
  }
  renderer.setPixelRatio(window.devicePixelRatio || 1);
  renderer.setSize(window.innerWidth, window.innerHeight);
  document.body.insertBefore(renderer.domElement, document.body.firstChild);

  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xeef2f6);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x8090a0, 1.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.8);
  sun.position.set(2, -3, 5);
  scene.add(sun);
  const camera = new THREE.PerspectiveCamera(40, window.innerWidth / window.innerHeight, 0.005, 200);
  camera.up.set(0, 0, 1);

  // one group per rigid body, moved every frame; shapes sit in it at their X_bg
  const bodies = [];
  for (let b = 0; b < D.nbody; b++) {
    const g = new THREE.Group();
    g.name = D.bodies[b];
    scene.add(g);
    bodies.push(g);
  }
  const planes = [];
  for (const s of D.shapes) {
    let geom = new THREE.BufferGeometry();
    geom.setAttribute('position', new THREE.Float32BufferAttribute(s.v, 3));
    geom.setIndex(s.i);
    if (s.flat) geom = geom.toNonIndexed(); // one normal per face: sharp box edges
    geom.computeVertexNormals();
    const mat = new THREE.MeshStandardMaterial({
      color: new THREE.Color(s.c[0], s.c[1], s.c[2]), opacity: s.c[3], transparent: s.c[3] < 1,
      roughness: 0.7, metalness: 0.1, flatShading: !!s.flat, side: s.plane ? THREE.DoubleSide : THREE.FrontSide
    });
    const mesh = new THREE.Mesh(geom, mat);
    mesh.position.set(s.X[0], s.X[1], s.X[2]);
    mesh.quaternion.set(s.X[3], s.X[4], s.X[5], s.X[6]);
    bodies[s.b].add(mesh);
    if (s.plane) planes.push(mesh);
  }
  // FEM surfaces: vertex positions rewritten every frame
  const fems = [];
  for (const f of D.fems) {
    const geom = new THREE.BufferGeometry();
    geom.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * f.n), 3));
    geom.setIndex(f.i);
    const mesh = new THREE.Mesh(geom, new THREE.MeshStandardMaterial({ color: 0x4fa3d9, roughness: 0.8 }));
    scene.add(mesh);
    fems.push({ geom: geom, n: f.n });
  }
  // MPM particles: THREE.Points, positions and colours rewritten every frame; the colour ramps
  // from blue (0) to red (the run's maximum of the body's quantity: plastic strain or speed)
  const mpms = [];
  const mpmBodies = D.mpm || [];
  for (const m of mpmBodies) {
    const geom = new THREE.BufferGeometry();
    geom.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * m.n), 3));
    geom.setAttribute('color', new THREE.BufferAttribute(new Float32Array(3 * m.n), 3));
    const mat = new THREE.PointsMaterial({ size: m.size, sizeAttenuation: true, vertexColors: true });
    const pts = new THREE.Points(geom, mat);
    pts.name = m.name;
    pts.frustumCulled = false;
    scene.add(pts);
    mpms.push({ geom: geom, n: m.n, max: m.max > 0 ? m.max : 1 });
  }
  const rampColor = new THREE.Color();
  function setParticles(k) {
    if (!mpms.length || !D.mpm_frames.length) return;
    const d = D.mpm_frames[Math.min(D.mpm_frames.length - 1, Math.floor(k / D.mpm_stride))];
    let o = 0;
    for (const m of mpms) {
      const a = m.geom.attributes.position.array, c = m.geom.attributes.color.array;
      for (let j = 0; j < 3 * m.n; j++) a[j] = d[o + j];
      o += 3 * m.n;
      for (let j = 0; j < m.n; j++) {
        const u = Math.max(0, Math.min(1, d[o + j] / m.max));
        rampColor.setHSL(0.66 * (1 - u), 0.85, 0.5);
        c[3 * j] = rampColor.r, c[3 * j + 1] = rampColor.g, c[3 * j + 2] = rampColor.b;
      }
      o += m.n;
      m.geom.attributes.position.needsUpdate = true;
      m.geom.attributes.color.needsUpdate = true;
      m.geom.computeBoundingSphere();
    }
  }

  const nframe = D.frames.length;
  slider.max = String(Math.max(0, nframe - 1));

  function setFrame(k) {
    const d = D.frames[k];
    let o = 1;
    for (let b = 0; b < D.nbody; b++, o += 7) {
      bodies[b].position.set(d[o], d[o + 1], d[o + 2]);
      bodies[b].quaternion.set(d[o + 3], d[o + 4], d[o + 5], d[o + 6]);
    }
    for (const f of fems) {
      const a = f.geom.attributes.position.array;
      for (let j = 0; j < 3 * f.n; j++) a[j] = d[o + j];
      o += 3 * f.n;
      f.geom.attributes.position.needsUpdate = true;
      f.geom.computeVertexNormals();
      f.geom.computeBoundingSphere();
    }
    setParticles(k);
    slider.value = String(k);
    timeLabel.textContent = 't = ' + d[0].toFixed(3) + ' s  (' + (k + 1) + ' / ' + nframe + ')';
  }

  // camera: look at everything but the floor planes, from the front right and above
  setFrame(0);
  scene.updateMatrixWorld(true);
  const box = new THREE.Box3();
  for (const g of bodies) {
    g.traverse(function (m) {
      if (m.isMesh && planes.indexOf(m) < 0) box.expandByObject(m);
    });
  }
  for (const f of fems) {
    f.geom.computeBoundingBox();
    box.union(f.geom.boundingBox);
  }
  for (const m of mpms) {
    m.geom.computeBoundingBox();
    box.union(m.geom.boundingBox);
  }
  if (box.isEmpty()) box.set(new THREE.Vector3(-1, -1, 0), new THREE.Vector3(1, 1, 1));
  const target = box.getCenter(new THREE.Vector3());
  let radius = Math.max(0.3, box.getSize(new THREE.Vector3()).length() * 1.5);
  let azimuth = -1.15, elevation = 0.5;
  function placeCamera() {
    camera.position.set(target.x + radius * Math.cos(elevation) * Math.cos(azimuth),
      target.y + radius * Math.cos(elevation) * Math.sin(azimuth), target.z + radius * Math.sin(elevation));
    camera.lookAt(target);
  }
  placeCamera();

  // drag to orbit, wheel to zoom
  let drag = null;
  renderer.domElement.addEventListener('pointerdown', function (e) { drag = [e.clientX, e.clientY]; });
  window.addEventListener('pointerup', function () { drag = null; });
  window.addEventListener('pointermove', function (e) {
    if (!drag) return;
    azimuth -= 0.01 * (e.clientX - drag[0]);
    elevation = Math.max(-1.5, Math.min(1.5, elevation + 0.01 * (e.clientY - drag[1])));
    drag = [e.clientX, e.clientY];
    placeCamera();
  });
  renderer.domElement.addEventListener('wheel', function (e) {
    radius *= Math.exp(0.001 * e.deltaY);
    placeCamera();
    e.preventDefault();
  }, { passive: false });
  window.addEventListener('resize', function () {
    camera.aspect = window.innerWidth / window.innerHeight;
    camera.updateProjectionMatrix();
    renderer.setSize(window.innerWidth, window.innerHeight);
  });

  // playback in simulated time; the slider picks a frame and pauses
  let playing = true, frame = 0, clock = 0, last = null;
  const t0 = D.frames[0][0], t1 = D.frames[nframe - 1][0];
  playButton.addEventListener('click', function () {
    playing = !playing;
    if (playing && frame >= nframe - 1) clock = 0;
    playButton.textContent = playing ? 'pause' : 'play';
  });
  slider.addEventListener('input', function () {
    playing = false;
    playButton.textContent = 'play';
    frame = Number(slider.value);
    clock = D.frames[frame][0] - t0;
    setFrame(frame);
  });
  // a page showing several replays side by side (knead compare's DIR/<scene>/replay.html) drives
  // them in step: a message {knead: 'seek', t} shows the frame at simulated time t and pauses
  window.addEventListener('message', function (e) {
    const m = e.data;
    if (!m || m.knead !== 'seek' || typeof m.t !== 'number') return;
    playing = false;
    playButton.textContent = 'play';
    clock = Math.max(0, Math.min(t1 - t0, m.t - t0));
    while (frame + 1 < nframe && D.frames[frame + 1][0] - t0 <= clock) frame++;
    while (frame > 0 && D.frames[frame][0] - t0 > clock) frame--;
    setFrame(frame);
  });
  info.textContent = D.name + ': ' + D.bodies.length + ' bodies, ' + D.fems.length + ' FEM bodies, ' +
    (mpmBodies.length ? mpmBodies.length + ' MPM bodies, ' : '') + nframe +
    ' frames, ' + (t1 - t0).toFixed(2) + ' s';

  let ready = false;
  function tick(now) {
    if (last !== null && playing) {
      clock += (now - last) / 1000;
      if (clock > t1 - t0) clock = 0; // loop
      while (frame + 1 < nframe && D.frames[frame + 1][0] - t0 <= clock) frame++;
      while (frame > 0 && D.frames[frame][0] - t0 > clock) frame--;
      setFrame(frame);
    }
    last = now;
    renderer.render(scene, camera);
    if (!ready) {
      ready = true;
      document.title = 'knead replay ready'; // a marker for headless checks: the first frame is drawn
    }
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
})();
