/* urdf/: inputs found by tests/fuzz/fuzz_urdf.c, kept as regression tests (CI runs them under
 * AddressSanitizer). */
#include <criterion/criterion.h>
#include <string.h>

#include "urdf/urdf.h"

/* TinyXML 2.6.2 skips a UTF-8 lead byte's sequence length without looking, so a sequence cut
 * short by the end of the text made it read past the NUL (heap-buffer-overflow in
 * TiXmlBase::ReadName). The shim now refuses text that is not UTF-8 before TinyXML sees it. */
Test(urdf_fuzz, a_truncated_utf8_sequence_is_refused_before_tinyxml) {
  const char* texts[] = {"<robot name=\"r\">\n<link name=\"a\xee", "<robot name=\"r\">\n<link name=\"a\xee\x80",
                         "<robot name=\"r\"><link name=\"\xc3\"/></robot>"};
  const char* want[] = {
      "t.urdf:2: not UTF-8 text: byte 0xee at offset 30 does not start a complete UTF-8 sequence (a URDF must be "
      "UTF-8)",
      "t.urdf:2: not UTF-8 text: byte 0xee at offset 30 does not start a complete UTF-8 sequence (a URDF must be "
      "UTF-8)",
      "t.urdf:1: not UTF-8 text: byte 0xc3 at offset 28 does not start a complete UTF-8 sequence (a URDF must be "
      "UTF-8)"};
  for (int i = 0; i < 3; i++) {
    kn_robot* r = NULL;
    kn_error err = {0};
    cr_expect_eq(kn_urdf_load_string(texts[i], "t.urdf", NULL, NULL, &r, &err), KN_ERR_PARSE);
    cr_expect_null(r);
    cr_expect_str_eq(err.msg, want[i]);
  }
  /* UTF-8 names still load */
  kn_robot* r = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_urdf_load_string("<robot name=\"r\"><link name=\"b\xc3\xa9ton\"/></robot>", "t.urdf", NULL, NULL,
                                   &r, &err),
               KN_OK, "%s", err.msg);
  cr_expect_str_eq(r->model->bodies[0].name, "b\xc3\xa9ton");
  kn_robot_free(r);
}

/* urdfdom 3.0.1 logs a bad material as CONSOLE_BRIDGE_logError(("Material [" + name + "] has
 * malformed color rgba values: " + piece).c_str()): the material's name and its rgba text are
 * vsnprintf's format, so '%s' read and '%n' wrote through garbage va_list slots: SEGV, bad-free,
 * heap-use-after-free under AddressSanitizer (which lets %n through), a urdfdom delete redirected
 * to another live block; glibc's fortify aborts on the %n without it. The shim refuses a '%' in
 * those two places before urdfdom sees the text. */
Test(urdf_fuzz, a_percent_in_a_material_name_or_rgba_is_refused_before_urdfdom) {
  const char* texts[] = {
      "<robot name=\"r\">\n<material name=\"m%n%n%s\"><color rgba=\"x\"/></material><link name=\"a\"/></robot>",
      "<robot name=\"r\"><link name=\"a\"><visual><geometry><box size=\"1 1 1\"/></geometry>\n"
      "<material name=\"m\">\n<color rgba=\"%c%c%c%c%c%c%c%c%n\"/></material></visual></link></robot>",
      "<robot name=\"r\"><link name=\"a\"><visual><geometry><sphere radius=\"1\"/></geometry>"
      "<material name=\"%s%s%s\"/></visual></link></robot>"};
  const char* want[] = {
      "t.urdf:2: <material name=\"m%n%n%s\">: '%' is refused here (urdfdom 3.0 logs this text as a printf format "
      "string)",
      "t.urdf:3: link 'a': <color rgba=\"%c%c%c%c%c%c%c%c%n\">: '%' is refused here (urdfdom 3.0 logs this text as "
      "a printf format string)",
      "t.urdf:1: link 'a': <material name=\"%s%s%s\">: '%' is refused here (urdfdom 3.0 logs this text as a printf "
      "format string)"};
  for (int i = 0; i < 3; i++) {
    kn_robot* r = NULL;
    kn_error err = {0};
    cr_expect_eq(kn_urdf_load_string(texts[i], "t.urdf", NULL, NULL, &r, &err), KN_ERR_PARSE);
    cr_expect_null(r);
    cr_expect_str_eq(err.msg, want[i]);
  }
  /* a '%' elsewhere (a percent-encoded mesh filename, a link name) is not formatted by urdfdom */
  kn_robot* r = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_urdf_load_string("<robot name=\"r\"><link name=\"a%n\"><visual><geometry><mesh filename=\""
                                   "package://p/a%20b.stl\"/></geometry><material name=\"m\"><color rgba=\"1 0 0 1\"/>"
                                   "</material></visual></link></robot>",
                                   "t.urdf", NULL, NULL, &r, &err),
               KN_OK, "%s", err.msg);
  cr_expect_str_eq(r->model->bodies[0].name, "a%n");
  cr_expect_str_eq(r->geoms[0].shape.mesh_uri, "package://p/a%20b.stl");
  kn_robot_free(r);
}
