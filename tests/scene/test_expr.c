/* scene/scene_expr.c: the formulas of follows_curve checks, evaluated against C's own arithmetic
 * (the same operations in the same order, so equal to the last bit), precedence and associativity
 * by hand-worked values, and every error with its column. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "knead.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static kn_status name_table(void* ctx, const char* name, double* value, kn_error* err) {
  (void)ctx;
  if (!strcmp(name, "g")) return (*value = 9.81), KN_OK;
  if (!strcmp(name, "objects[1].friction")) return (*value = 0.3), KN_OK;
  if (!strcmp(name, "objects[0].name")) return kn_fail(err, KN_ERR_PARSE, "'objects[0].name' is 'slope', not a number");
  return KN_ERR_PARSE;
}

static double eval(const char* text, double t) {
  kn_expr* e = NULL;
  kn_error err = {0};
  cr_assert_eq(kn_expr_compile(text, name_table, NULL, &e, &err), KN_OK, "%s: %s", text, err.msg);
  double v = kn_expr_eval(e, t);
  kn_expr_free(e);
  return v;
}

static const char* error_of(const char* text) {
  static kn_error err;
  memset(&err, 0, sizeof err);
  kn_expr* e = NULL;
  cr_assert_eq(kn_expr_compile(text, name_table, NULL, &e, &err), KN_ERR_PARSE, "%s compiled", text);
  cr_assert_null(e);
  return err.msg;
}

Test(expr, arithmetic_precedence_and_associativity) {
  cr_assert_eq(eval("1 + 2 * 3", 0), 7.0);
  cr_assert_eq(eval("(1 + 2) * 3", 0), 9.0);
  cr_assert_eq(eval("8 / 4 / 2", 0), 1.0);     /* left associative */
  cr_assert_eq(eval("10 - 4 - 3", 0), 3.0);
  cr_assert_eq(eval("2 ^ 3 ^ 2", 0), 512.0);   /* right associative: 2^9 */
  cr_assert_eq(eval("-2 ^ 2", 0), -4.0);       /* ^ binds tighter than unary minus */
  cr_assert_eq(eval("2 ^ -1", 0), 0.5);
  cr_assert_eq(eval("--3", 0), 3.0);
  cr_assert_eq(eval("+3 * -2", 0), -6.0);
  cr_assert_eq(eval("1.5e2 + .5", 0), 150.5);
  cr_assert_eq(eval("  t*t  ", 3), 9.0);
}

Test(expr, functions_constants_and_names) {
  const double t = 0.37;
  cr_assert_eq(eval("sin(t) + cos(t) * tan(t)", t), sin(t) + cos(t) * tan(t));
  cr_assert_eq(eval("sqrt(t) - exp(t) / log(t)", t), sqrt(t) - exp(t) / log(t));
  cr_assert_eq(eval("abs(-t) + min(t, 0.2) + max(t, 0.2)", t), t + 0.2 + t);
  cr_assert_eq(eval("pi", 0), M_PI);
  /* the rolling ball's distance, a t^2 / 2 with a = (5/7) g sin 45 deg, and the slipping one */
  cr_assert_eq(eval("0.5*(5/7)*g*sin(pi/4)*t^2", t), 0.5 * (5.0 / 7.0) * 9.81 * sin(M_PI / 4) * pow(t, 2));
  cr_assert_eq(eval("0.5*g*(sin(pi/4) - objects[1].friction*cos(pi/4))*t^2", t),
               0.5 * 9.81 * (sin(M_PI / 4) - 0.3 * cos(M_PI / 4)) * pow(t, 2));
  /* the sphere launched at v0 = 1 m/s without spin: slides until t_s = 2 v0 / (7 mu g), then rolls
   * at 5 v0 / 7; with tau = min(t, t_s), x = v0 tau - mu g tau^2 / 2 + (5/7) v0 (t - tau) */
  const char* x = "1*min(t, 2/(7*0.3*g)) - 0.5*0.3*g*min(t, 2/(7*0.3*g))^2 + 5/7*(t - min(t, 2/(7*0.3*g)))";
  const double ts = 2.0 / (7 * 0.3 * 9.81);
  cr_assert_float_eq(eval(x, 0.05), 0.05 - 0.5 * 0.3 * 9.81 * 0.0025, 1e-15); /* t_s = 0.0971 s */
  cr_assert_float_eq(eval(x, 1.0), ts - 0.5 * 0.3 * 9.81 * ts * ts + 5.0 / 7.0 * (1.0 - ts), 1e-15);
}

Test(expr, ieee_results_not_errors) {
  cr_assert(isnan(eval("sqrt(-1)", 0)));
  cr_assert(isinf(eval("1/0", 0)));
  cr_assert(isnan(eval("log(-t)", 1)));
}

Test(expr, errors_give_the_column_and_what_was_expected) {
  const char* m = error_of("1 + ");
  cr_assert(strstr(m, "at column 5") && strstr(m, "ends where a number"), "%s", m);
  m = error_of("2 * (t + 1");
  cr_assert(strstr(m, "at column 11") && strstr(m, "expected ')'"), "%s", m);
  m = error_of("sinh(t)");
  cr_assert(strstr(m, "at column 1") && strstr(m, "unknown function 'sinh'"), "%s", m);
  m = error_of("1 + mu * t");
  cr_assert(strstr(m, "at column 5") && strstr(m, "unknown name 'mu'"), "%s", m);
  m = error_of("objects[0].name * t");
  cr_assert(strstr(m, "at column 1") && strstr(m, "'slope', not a number"), "%s", m);
  m = error_of("min(t)");
  cr_assert(strstr(m, "min() takes 2 arguments"), "%s", m);
  m = error_of("sin(t, 1)");
  cr_assert(strstr(m, "sin() takes 1 argument"), "%s", m);
  m = error_of("t t");
  cr_assert(strstr(m, "at column 3") && strstr(m, "unexpected 't' after a complete expression"), "%s", m);
  m = error_of("2t");
  cr_assert(strstr(m, "at column 1") && strstr(m, "a number runs into a name"), "%s", m);
  m = error_of("t # 2");
  cr_assert(strstr(m, "at column 3") && strstr(m, "unexpected '#'"), "%s", m);
  m = error_of("");
  cr_assert(strstr(m, "at column 1"), "%s", m);
  char deep[400] = "";
  for (int i = 0; i < 70; i++) strcat(deep, "(1+");
  strcat(deep, "1");
  for (int i = 0; i < 70; i++) strcat(deep, ")");
  m = error_of(deep);
  cr_assert(strstr(m, "nested too deeply"), "%s", m);
  /* 100000 signs or parentheses: an error, not a stack overflow */
  static char signs[100002], parens[100002];
  memset(signs, '-', 100000);
  signs[100000] = 't';
  memset(parens, '(', 100001);
  m = error_of(signs);
  cr_assert(strstr(m, "at column 65: formula nested too deeply"), "%s", m);
  m = error_of(parens);
  cr_assert(strstr(m, "nested too deeply"), "%s", m);
  cr_assert_eq(eval("-(-(-(-t)))", 2), 2.0);
}

Test(expr, curve_of_samples_interpolates_linearly) {
  double ts[3] = {0, 1, 3}, vs[3] = {0, 2, 0};
  kn_scene_curve c = {.formula = NULL, .t = ts, .value = vs, .n = 3};
  cr_assert_eq(kn_scene_curve_eval(&c, 0.25), 0.5);
  cr_assert_eq(kn_scene_curve_eval(&c, 1.0), 2.0);
  cr_assert_eq(kn_scene_curve_eval(&c, 2.5), 0.5);
  cr_assert_eq(kn_scene_curve_eval(&c, 3.0), 0.0);
  cr_assert(isnan(kn_scene_curve_eval(&c, 3.5)));
  cr_assert(isnan(kn_scene_curve_eval(&c, -0.1)));
}
