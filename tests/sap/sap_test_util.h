/* Shared helpers for the sap/ tests: relative/absolute comparisons that report measured values. */
#ifndef KNEAD_TESTS_SAP_UTIL_H
#define KNEAD_TESTS_SAP_UTIL_H
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* |x - e| <= tol |e| (tol relative); the measured value goes to stderr for the record */
#define EXPECT_REL(name, x, e, tol)                                                                     \
  do {                                                                                                  \
    double x_ = (x), e_ = (e);                                                                          \
    fprintf(stderr, "  %-28s measured %.12g expected %.12g (rel err %.2e)\n", name, x_, e_,             \
            e_ != 0 ? fabs(x_ - e_) / fabs(e_) : fabs(x_));                                             \
    cr_expect(fabs(x_ - e_) <= (tol) * fabs(e_), "%s: measured %.15g expected %.15g (rel tol %g)", name, \
              x_, e_, (double)(tol));                                                                   \
  } while (0)

#define EXPECT_ABS(name, x, e, tol)                                                                     \
  do {                                                                                                  \
    double x_ = (x), e_ = (e);                                                                          \
    fprintf(stderr, "  %-28s measured %.12g expected %.12g (abs err %.2e)\n", name, x_, e_,             \
            fabs(x_ - e_));                                                                             \
    cr_expect(fabs(x_ - e_) <= (tol), "%s: measured %.15g expected %.15g (abs tol %g)", name, x_, e_,   \
              (double)(tol));                                                                           \
  } while (0)

#endif
