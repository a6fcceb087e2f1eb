/* Formulas of t (checks' analytic curves, follows_curve): a small expression language compiled once
 * to a postfix program and evaluated every step without allocating.
 *   expr    := term (('+' | '-') term)*
 *   term    := unary (('*' | '/') unary)*
 *   unary   := ('-' | '+') unary | power
 *   power   := primary ('^' unary)?            right associative: 2^3^2 = 2^9; -2^2 = -4
 *   primary := number | name | function '(' expr (',' expr)? ')' | '(' expr ')'
 * Names: t (time [s]), pi, and whatever the caller's resolver knows (the scene's g, dt, duration
 * and key paths such as objects[1].friction), read once at compile time: a formula is a function
 * of t alone. Functions: sin cos tan sqrt exp log abs (one argument), min max (two). Nothing else
 * is accepted (no assignment, no calls out of this file), so a scene cannot run code. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scene/scene.h"

enum { OP_CONST, OP_T, OP_NEG, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_FN1, OP_FN2 };
enum { FN_SIN, FN_COS, FN_TAN, FN_SQRT, FN_EXP, FN_LOG, FN_ABS, FN_MIN, FN_MAX };
#define EXPR_MAX_DEPTH 64 /* evaluation stack; deeper formulas are refused */
#define EXPR_MAX_OPS 4096

typedef struct {
  int op, fn;
  double value;
} expr_op;

struct kn_expr {
  int n;
  expr_op* ops;
};

static const struct {
  const char* name;
  int fn, nargs;
} functions[] = {{"sin", FN_SIN, 1},   {"cos", FN_COS, 1}, {"tan", FN_TAN, 1}, {"sqrt", FN_SQRT, 1},
                 {"exp", FN_EXP, 1},   {"log", FN_LOG, 1}, {"abs", FN_ABS, 1}, {"min", FN_MIN, 2},
                 {"max", FN_MAX, 2}};

typedef struct {
  const char* text;
  const char* p;
  kn_expr_name_fn names;
  void* ctx;
  expr_op* ops;
  int n, depth, max_depth;
  int nest;       /* recursion depth of parse_unary (every nesting passes through it) */
  kn_error* err;
  int failed;
} parser;

//---- compiling ----

static int fail_at(parser* ps, const char* where, const char* fmt, const char* what) {
  if (ps->failed) return -1;
  ps->failed = 1;
  char why[200];
  snprintf(why, sizeof why, fmt, what);
  kn_fail(ps->err, KN_ERR_PARSE, "at column %d: %s", (int)(where - ps->text) + 1, why);
  return -1;
}

static void skip_space(parser* ps) {
  while (*ps->p == ' ' || *ps->p == '\t') ps->p++;
}

// (op, its effect on the stack depth) => appended
static int emit(parser* ps, int op, int fn, double value, int push) {
  if (ps->n >= EXPR_MAX_OPS) return fail_at(ps, ps->p, "%s", "formula too long");
  ps->ops[ps->n++] = (expr_op){op, fn, value};
  ps->depth += push;
  if (ps->depth > ps->max_depth) ps->max_depth = ps->depth;
  if (ps->max_depth > EXPR_MAX_DEPTH) return fail_at(ps, ps->p, "%s", "formula nested too deeply");
  return 0;
}

static int parse_expr(parser* ps);
static int parse_unary(parser* ps);

// a name: letters, digits, '_', and key-path parts ".key" and "[index]"
static size_t name_length(const char* s) {
  size_t n = 0;
  if (!(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
  for (;;) {
    while (isalnum((unsigned char)s[n]) || s[n] == '_') n++;
    if (s[n] == '.' && (isalpha((unsigned char)s[n + 1]) || s[n + 1] == '_')) {
      n++;
      continue;
    }
    if (s[n] == '[' && isdigit((unsigned char)s[n + 1])) {
      size_t k = n + 1;
      while (isdigit((unsigned char)s[k])) k++;
      if (s[k] == ']') {
        n = k + 1;
        continue;
      }
    }
    return n;
  }
}

static int parse_primary(parser* ps) {
  skip_space(ps);
  const char* start = ps->p;
  if (isdigit((unsigned char)*ps->p) || (*ps->p == '.' && isdigit((unsigned char)ps->p[1]))) {
    char* end;
    double v = strtod(ps->p, &end);
    if (isalpha((unsigned char)*end) || *end == '_') return fail_at(ps, start, "%s", "a number runs into a name");
    ps->p = end;
    return emit(ps, OP_CONST, 0, v, 1);
  }
  if (*ps->p == '(') {
    ps->p++;
    if (parse_expr(ps)) return -1;
    skip_space(ps);
    if (*ps->p != ')') return fail_at(ps, ps->p, "%s", "expected ')'");
    ps->p++;
    return 0;
  }
  size_t len = name_length(ps->p);
  if (len == 0) {
    if (!*ps->p) return fail_at(ps, start, "%s", "the formula ends where a number, a name or '(' was expected");
    char c[2] = {*ps->p, 0};
    return fail_at(ps, start, "unexpected '%s': expected a number, a name or '('", c);
  }
  char name[160];
  if (len >= sizeof name) return fail_at(ps, start, "%s", "name too long");
  memcpy(name, ps->p, len);
  name[len] = 0;
  ps->p += len;
  skip_space(ps);
  if (*ps->p == '(') {
    for (size_t i = 0; i < sizeof functions / sizeof *functions; i++) {
      if (strcmp(functions[i].name, name) != 0) continue;
      ps->p++;
      if (parse_expr(ps)) return -1;
      skip_space(ps);
      if (functions[i].nargs == 2) {
        if (*ps->p != ',') return fail_at(ps, ps->p, "%s() takes 2 arguments: expected ','", name);
        ps->p++;
        if (parse_expr(ps)) return -1;
        skip_space(ps);
      }
      if (*ps->p != ')')
        return fail_at(ps, ps->p, *ps->p == ',' ? "%s() takes 1 argument" : "%s(: expected ')'", name);
      ps->p++;
      return emit(ps, functions[i].nargs == 2 ? OP_FN2 : OP_FN1, functions[i].fn, 0, functions[i].nargs == 2 ? -1 : 0);
    }
    return fail_at(ps, start, "unknown function '%s' (known: sin cos tan sqrt exp log abs min max)", name);
  }
  if (!strcmp(name, "t")) return emit(ps, OP_T, 0, 0, 1);
  if (!strcmp(name, "pi")) return emit(ps, OP_CONST, 0, 3.14159265358979323846, 1);
  double v = 0;
  kn_error why = {0};
  if (ps->names && ps->names(ps->ctx, name, &v, &why) == KN_OK) return emit(ps, OP_CONST, 0, v, 1);
  if (why.msg[0]) return fail_at(ps, start, "%s", why.msg);
  return fail_at(ps, start, "unknown name '%s' (known: t, pi)", name);
}

static int parse_power(parser* ps) {
  if (parse_primary(ps)) return -1;
  skip_space(ps);
  if (*ps->p != '^') return 0;
  ps->p++;
  if (parse_unary(ps)) return -1; /* right associative, and 2^-1 */
  return emit(ps, OP_POW, 0, 0, -1);
}

static int parse_unary(parser* ps) {
  skip_space(ps);
  /* parentheses, arguments, exponents and signs all nest through here: bound the C stack */
  if (++ps->nest > EXPR_MAX_DEPTH) return fail_at(ps, ps->p, "%s", "formula nested too deeply");
  int rc;
  if (*ps->p == '-' || *ps->p == '+') {
    int neg = *ps->p == '-';
    ps->p++;
    rc = parse_unary(ps);
    if (!rc && neg) rc = emit(ps, OP_NEG, 0, 0, 0);
  } else {
    rc = parse_power(ps);
  }
  ps->nest--;
  return rc;
}

static int parse_term(parser* ps) {
  if (parse_unary(ps)) return -1;
  for (;;) {
    skip_space(ps);
    char c = *ps->p;
    if (c != '*' && c != '/') return 0;
    ps->p++;
    if (parse_unary(ps) || emit(ps, c == '*' ? OP_MUL : OP_DIV, 0, 0, -1)) return -1;
  }
}

static int parse_expr(parser* ps) {
  if (parse_term(ps)) return -1;
  for (;;) {
    skip_space(ps);
    char c = *ps->p;
    if (c != '+' && c != '-') return 0;
    ps->p++;
    if (parse_term(ps) || emit(ps, c == '+' ? OP_ADD : OP_SUB, 0, 0, -1)) return -1;
  }
}

kn_status kn_expr_compile(const char* text, kn_expr_name_fn names, void* ctx, kn_expr** out, kn_error* err) {
  *out = NULL;
  parser ps = {.text = text, .p = text, .names = names, .ctx = ctx, .err = err};
  ps.ops = malloc(EXPR_MAX_OPS * sizeof *ps.ops);
  if (!ps.ops) return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  if (parse_expr(&ps) == 0) {
    skip_space(&ps);
    if (*ps.p) {
      char c[2] = {*ps.p, 0};
      fail_at(&ps, ps.p, "unexpected '%s' after a complete expression", c);
    }
  }
  if (ps.failed) {
    free(ps.ops);
    return err->status;
  }
  kn_expr* e = malloc(sizeof *e);
  expr_op* ops = realloc(ps.ops, (size_t)ps.n * sizeof *ops);
  if (!e || !ops) {
    free(e);
    free(ps.ops);
    return kn_fail(err, KN_ERR_NOMEM, "out of memory");
  }
  e->n = ps.n;
  e->ops = ops;
  *out = e;
  return KN_OK;
}

//---- evaluating ----

double kn_expr_eval(const kn_expr* e, double t) {
  double s[EXPR_MAX_DEPTH];
  int k = 0;
  for (int i = 0; i < e->n; i++) {
    const expr_op* o = &e->ops[i];
    switch (o->op) {
      case OP_CONST: s[k++] = o->value; break;
      case OP_T: s[k++] = t; break;
      case OP_NEG: s[k - 1] = -s[k - 1]; break;
      case OP_ADD: k--, s[k - 1] += s[k]; break;
      case OP_SUB: k--, s[k - 1] -= s[k]; break;
      case OP_MUL: k--, s[k - 1] *= s[k]; break;
      case OP_DIV: k--, s[k - 1] /= s[k]; break;
      case OP_POW: k--, s[k - 1] = pow(s[k - 1], s[k]); break;
      case OP_FN2:
        k--;
        s[k - 1] = o->fn == FN_MIN ? fmin(s[k - 1], s[k]) : fmax(s[k - 1], s[k]);
        break;
      case OP_FN1: {
        double x = s[k - 1];
        switch (o->fn) {
          case FN_SIN: x = sin(x); break;
          case FN_COS: x = cos(x); break;
          case FN_TAN: x = tan(x); break;
          case FN_SQRT: x = sqrt(x); break;
          case FN_EXP: x = exp(x); break;
          case FN_LOG: x = log(x); break;
          default: x = fabs(x); break;
        }
        s[k - 1] = x;
        break;
      }
    }
  }
  return k == 1 ? s[0] : NAN;
}

void kn_expr_free(kn_expr* e) {
  if (!e) return;
  free(e->ops);
  free(e);
}

//---- a check's reference curve ----

double kn_scene_curve_eval(const kn_scene_curve* c, double t) {
  if (c->formula) return kn_expr_eval(c->formula, t);
  if (c->n < 1 || !(t >= c->t[0] - 1e-12) || !(t <= c->t[c->n - 1] + 1e-12)) return NAN;
  if (c->n == 1 || t <= c->t[0]) return c->value[0];
  if (t >= c->t[c->n - 1]) return c->value[c->n - 1];
  int lo = 0, hi = c->n - 1; /* t[lo] <= t < t[hi] */
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (c->t[mid] <= t) lo = mid;
    else hi = mid;
  }
  double s = (t - c->t[lo]) / (c->t[hi] - c->t[lo]);
  return c->value[lo] + s * (c->value[hi] - c->value[lo]);
}
