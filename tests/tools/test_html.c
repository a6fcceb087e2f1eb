/* output.html: `knead run` on the default scene writes replay.html, which headless Chromium
 * (found at configure time: KNEAD_CHROMIUM) loads from disk with the network off. Checks: the
 * page reached its first drawn frame (document.title marker, a canvas in the DOM), and its
 * screenshot (decoded here with zlib) shows the scene: many colours, the orange arm links of
 * knead_arm7.urdf and the green box. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <zlib.h>

static char tmpdir[256];

static void make_tmpdir(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/knead_test_html_XXXXXX");
  cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_tmpdir(void) {
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(html, .init = make_tmpdir, .fini = remove_tmpdir, .timeout = 240);

static unsigned char* slurp(const char* path, size_t* len) {
  FILE* f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char* s = malloc((size_t)n + 1);
  size_t got = fread(s, 1, (size_t)n, f);
  s[got] = 0;
  fclose(f);
  if (len) *len = got;
  return s;
}

static int sh(const char* cmd) {
  int st = system(cmd);
  cr_assert(WIFEXITED(st), "%s", cmd);
  return WEXITSTATUS(st);
}

#define CHROMIUM_FLAGS                                                                                  \
  "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking " \
  "--disable-component-update --disable-sync --window-size=800,600 --virtual-time-budget=3000"

static uint32_t be32(const unsigned char* p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }

static int paeth(int a, int b, int c) {
  int p = a + b - c, pa = abs(p - a), pb = abs(p - b), pc = abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// (8-bit RGB or RGBA, non-interlaced PNG) => RGB pixels, or NULL (PNG spec, ISO 15948 §9 filters)
static unsigned char* png_rgb(const unsigned char* png, size_t len, int* w, int* h) {
  if (len < 33 || memcmp(png, "\x89PNG\r\n\x1a\n", 8)) return NULL;
  *w = (int)be32(png + 16), *h = (int)be32(png + 20);
  int depth = png[24], type = png[25], interlace = png[28];
  if (depth != 8 || (type != 2 && type != 6) || interlace) return NULL;
  int bpp = type == 6 ? 4 : 3;
  size_t nz = 0, cap = len;
  unsigned char* z = malloc(cap);
  for (size_t p = 8; p + 12 <= len;) {
    uint32_t n = be32(png + p);
    if (!memcmp(png + p + 4, "IDAT", 4)) memcpy(z + nz, png + p + 8, n), nz += n;
    p += 12 + n;
  }
  size_t stride = (size_t)*w * bpp, raw_len = (stride + 1) * (size_t)*h;
  unsigned char* raw = malloc(raw_len);
  uLongf out = raw_len;
  if (uncompress(raw, &out, z, nz) != Z_OK || out != raw_len) {
    free(z), free(raw);
    return NULL;
  }
  free(z);
  unsigned char* img = malloc(stride * (size_t)*h);
  for (int y = 0; y < *h; y++) {
    int f = raw[y * (stride + 1)];
    const unsigned char* s = raw + y * (stride + 1) + 1;
    unsigned char* d = img + y * stride;
    const unsigned char* up = y ? d - stride : NULL;
    for (size_t x = 0; x < stride; x++) {
      int a = x >= (size_t)bpp ? d[x - bpp] : 0, b = up ? up[x] : 0, c = up && x >= (size_t)bpp ? up[x - bpp] : 0;
      int v = f == 0 ? 0 : f == 1 ? a : f == 2 ? b : f == 3 ? (a + b) / 2 : paeth(a, b, c);
      d[x] = (unsigned char)(s[x] + v);
    }
  }
  free(raw);
  unsigned char* rgb = malloc((size_t)*w * *h * 3);
  for (long i = 0; i < (long)*w * *h; i++) memcpy(rgb + 3 * i, img + bpp * i, 3);
  free(img);
  return rgb;
}

Test(html, default_scene_replay_in_headless_chromium) {
  char cmd[4096], path[512];
  /* the default scene with output.html */
  size_t n;
  char* scene = (char*)slurp(KNEAD_SOURCE_DIR "/examples/default_scene.yaml", &n);
  cr_assert_not_null(scene);
  char* o = strstr(scene, "\noutput:");
  cr_assert_not_null(o);
  *o = 0;
  snprintf(path, sizeof path, "%s/scene.yaml", tmpdir);
  FILE* f = fopen(path, "w");
  fprintf(f, "%s\noutput: {html: true, frame_rate: 30}\n", scene);
  fclose(f);
  free(scene);
  snprintf(cmd, sizeof cmd, "cd '%s' && %s run scene.yaml --out out >run.txt 2>&1", tmpdir, KNEAD_CLI);
  cr_assert_eq(sh(cmd), 0, "knead run failed (three.js installed at build time? see run.txt)");
  snprintf(path, sizeof path, "%s/out/replay.html", tmpdir);
  unsigned char* html = slurp(path, &n);
  cr_assert_not_null(html);
  cr_expect(strstr((char*)html, "https://threejs.org") && !strstr((char*)html, "<script src"),
            "three.js must be inlined, nothing loaded from elsewhere");
  free(html);

  /* the DOM after the page ran: the title is set after the first rendered frame */
  snprintf(cmd, sizeof cmd, "cd '%s' && %s " CHROMIUM_FLAGS " --user-data-dir='%s/profile1' --dump-dom 'file://%s/out/replay.html' >dom.html 2>chromium1.txt",
           tmpdir, KNEAD_CHROMIUM, tmpdir, tmpdir);
  cr_assert_eq(sh(cmd), 0, "chromium --dump-dom failed");
  snprintf(path, sizeof path, "%s/dom.html", tmpdir);
  char* dom = (char*)slurp(path, NULL);
  cr_assert_not_null(dom);
  cr_expect(strstr(dom, "<title>knead replay ready</title>") != NULL, "the replay never drew a frame");
  cr_expect(strstr(dom, "<canvas") != NULL, "no canvas in the page");
  free(dom);

  snprintf(cmd, sizeof cmd, "cd '%s' && %s " CHROMIUM_FLAGS " --user-data-dir='%s/profile2' --screenshot='%s/shot.png' 'file://%s/out/replay.html' >chromium2.txt 2>&1",
           tmpdir, KNEAD_CHROMIUM, tmpdir, tmpdir, tmpdir);
  cr_assert_eq(sh(cmd), 0, "chromium --screenshot failed");
  snprintf(path, sizeof path, "%s/shot.png", tmpdir);
  unsigned char* png = slurp(path, &n);
  cr_assert_not_null(png);
  int w, h;
  unsigned char* rgb = png_rgb(png, n, &w, &h);
  free(png);
  cr_assert_not_null(rgb, "cannot decode the screenshot");
  cr_expect(w == 800 && h == 600, "screenshot %d x %d", w, h);
  /* colours in 4-bit bins; background #eef2f6; arm links orange (URDF rgba 0.9 0.55 0.2 or the
   * like: r > g + 40 > b + 80), objects green (g > r + 40 and g > b + 30) */
  static unsigned char seen[4096];
  long distinct = 0, background = 0, orange = 0, green = 0;
  for (long i = 0; i < (long)w * h; i++) {
    int r = rgb[3 * i], g = rgb[3 * i + 1], b = rgb[3 * i + 2];
    int bin = (r >> 4) << 8 | (g >> 4) << 4 | (b >> 4);
    if (!seen[bin]) seen[bin] = 1, distinct++;
    background += abs(r - 0xee) < 3 && abs(g - 0xf2) < 3 && abs(b - 0xf6) < 3;
    orange += r > g + 40 && g > b + 40;
    green += g > r + 40 && g > b + 30;
  }
  free(rgb);
  cr_expect_gt(distinct, 50, "%ld distinct colours: blank page?", distinct);
  cr_expect_lt(background, (long)w * h * 9 / 10, "%ld of %d pixels are background", background, w * h);
  cr_expect_gt(orange, 2000, "%ld orange (arm) pixels", orange);
  cr_expect_gt(green, 50, "%ld green (box) pixels", green);
}
