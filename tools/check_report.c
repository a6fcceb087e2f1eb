/* `knead check`: one scene's report, from its child's result file (check.h): lines on stdout and a
 * JUnit <testsuite> (junit-10.xsd, as Jenkins and GitLab read it: name, tests, failures, errors,
 * skipped, time, timestamp, the scene file as a property; a <testcase> per check and one for the
 * golden baseline, failures with a body listing the measured values). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "tools/check.h"

static void xml_text(FILE* f, const char* s) {
  for (; s && *s; s++) {
    unsigned char c = (unsigned char)*s;
    if (c == '<') fputs("&lt;", f);
    else if (c == '>') fputs("&gt;", f);
    else if (c == '&') fputs("&amp;", f);
    else if (c == '"') fputs("&quot;", f);
    else if (c == '\'') fputs("&apos;", f);
    else if (c < 0x20 && c != '\n' && c != '\t') fputc(' ', f); /* not allowed in XML 1.0 */
    else fputc(c, f);
  }
}

// a number field, "nan" / "-1" for nothing measured => printed with its unit, or "none"
static void value_with_unit(FILE* f, const char* v, const char* unit) {
  double x = atof(v);
  if (isnan(x)) fputs("none", f);
  else fprintf(f, "%.6g %s", x, unit);
}

/* (check's fields: name type passed xfail message unit measured t measured2 t2 lo hi) => the
 * failure body: what was measured, when, against what */
static void check_body(FILE* f, char** fld, int n) {
  fputs("check: ", f);
  xml_text(f, fld[1]);
  fprintf(f, " (%s)\nresult: ", fld[2]);
  xml_text(f, fld[5]);
  if (n < 13) {
    fputc('\n', f);
    return;
  }
  fputs("\nmeasured (worst): ", f);
  value_with_unit(f, fld[7], fld[6]);
  double t = atof(fld[8]);
  if (t >= 0) fprintf(f, " at t = %.6g s", t);
  if (!strcmp(fld[2], "grasp_held")) {
    fputs("\nrotation drift (worst): ", f);
    value_with_unit(f, fld[9], "deg");
    double t2 = atof(fld[10]);
    if (t2 >= 0) fprintf(f, " at t = %.6g s", t2);
  }
  if (!strcmp(fld[2], "contact_force")) {
    fputs("\nobserved range: [", f);
    value_with_unit(f, fld[11], "N");
    fputs(", ", f);
    value_with_unit(f, fld[12], "N");
    fputs("]", f);
  }
  fputc('\n', f);
}

// "\n" written by the child as two characters => XML text with real newlines
static void xml_details(FILE* f, const char* s) {
  for (; *s; s++) {
    if (s[0] == '\\' && s[1] == 'n') {
      fputc('\n', f);
      s++;
    } else {
      char c[2] = {*s, 0};
      xml_text(f, c);
    }
  }
}

static void testcase_open(FILE* cf, const char* classname, const char* name) {
  fprintf(cf, "    <testcase classname=\"");
  xml_text(cf, classname);
  fprintf(cf, "\" name=\"");
  xml_text(cf, name);
  fprintf(cf, "\">\n");
}

void check_report_scene(const scene_job* job, int status, FILE* junit, check_counts* all) {
  FILE* f = fopen(job->result, "r");
  char line[16384];
  char* fld[16];
  char name[1024];
  snprintf(name, sizeof name, "%s", job->path);
  char* slash = strrchr(name, '/');
  if (slash) memmove(name, slash + 1, strlen(slash + 1) + 1);
  char* dot = strrchr(name, '.');
  if (dot) *dot = 0;
  /* cases are buffered to write the testsuite's counts first */
  char* cases = NULL;
  size_t ncases = 0;
  FILE* cf = open_memstream(&cases, &ncases);
  check_counts c = {0};
  int complete = 0;
  long long start = 0;
  printf("%s\n", job->path);
  while (f && fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    if (!strcmp(line, "END")) {
      complete = 1;
      break;
    }
    int n = check_split_fields(line, fld, 16);
    if (fld[0][0] == 'S' && n >= 4) {
      snprintf(name, sizeof name, "%s", fld[2]);
      if (n >= 6) start = atoll(fld[4]), c.time = atof(fld[5]);
      if (!strcmp(fld[1], "error")) {
        printf("  ERROR  %-24s %s\n", "(scene)", fld[3]);
        c.tests++, c.errors++;
        testcase_open(cf, name, "(scene)");
        fprintf(cf, "      <error message=\"");
        xml_text(cf, fld[3]);
        fprintf(cf, "\">");
        xml_text(cf, fld[3]);
        fprintf(cf, "</error>\n    </testcase>\n");
      }
    } else if (fld[0][0] == 'C' && n >= 6) {
      int passed = atoi(fld[3]), xfail = atoi(fld[4]);
      const char* tag = passed ? (xfail ? "XPASS" : "PASS") : (xfail ? "XFAIL" : "FAIL");
      printf("  %-6s %-24s %s: %s%s\n", tag, fld[1], fld[2], fld[5],
             xfail ? (passed ? " (expected to fail, but passed)" : " (expected failure)") : "");
      c.tests++;
      testcase_open(cf, name, fld[1]);
      if (passed == !xfail) {
        passed ? c.passed++ : c.expected++;
        fprintf(cf, "      <system-out>");
        if (xfail) fputs("expected failure: ", cf);
        xml_text(cf, fld[5]);
        fprintf(cf, "</system-out>\n    </testcase>\n");
      } else {
        c.failures++;
        fprintf(cf, "      <failure type=\"%s\" message=\"", fld[2]);
        if (xfail) fputs("expected to fail, but passed: ", cf);
        xml_text(cf, fld[5]);
        fprintf(cf, "\">");
        if (xfail) fputs("expected to fail, but passed\n", cf);
        check_body(cf, fld, n);
        fprintf(cf, "</failure>\n    </testcase>\n");
      }
    } else if (fld[0][0] == 'G' && n >= 3) {
      int error = !strcmp(fld[1], "error");
      int bad = error || !strcmp(fld[1], "diverged");
      printf("  %-6s %-24s %s\n", bad ? (error ? "ERROR" : "FAIL") : "PASS", "golden", fld[2]);
      c.tests++;
      testcase_open(cf, name, "golden");
      if (bad) {
        error ? c.errors++ : c.failures++;
        fprintf(cf, "      <%s message=\"", error ? "error" : "failure");
        xml_text(cf, fld[2]);
        fprintf(cf, "\">");
        xml_text(cf, fld[2]);
        fputc('\n', cf);
        if (n >= 4) xml_details(cf, fld[3]);
        fprintf(cf, "</%s>\n", error ? "error" : "failure");
      } else {
        c.passed++;
        fprintf(cf, "      <system-out>");
        xml_text(cf, fld[2]);
        if (n >= 4 && fld[3][0]) {
          fputc('\n', cf);
          xml_details(cf, fld[3]);
        }
        fprintf(cf, "</system-out>\n");
      }
      fprintf(cf, "    </testcase>\n");
    } else if (fld[0][0] == 'K' && n >= 2) {
      printf("  kept its outputs in %s\n", fld[1]);
      c.kept++;
    }
  }
  if (f) fclose(f);
  if (!complete) {
    char msg[256];
    if (WIFSIGNALED(status))
      snprintf(msg, sizeof msg, "the scene's process was killed by signal %d (%s)", WTERMSIG(status),
               strsignal(WTERMSIG(status)));
    else
      snprintf(msg, sizeof msg, "the scene's process ended without results (exit status %d)",
               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    printf("  ERROR  %-24s %s\n", "(scene)", msg);
    c.tests++, c.errors++;
    testcase_open(cf, name, "(scene)");
    fprintf(cf, "      <error message=\"%s\">%s</error>\n    </testcase>\n", msg, msg);
  }
  fclose(cf);
  if (junit) {
    char stamp[32] = "1970-01-01T00:00:00";
    time_t t0 = (time_t)start;
    struct tm tm;
    if (start > 0 && gmtime_r(&t0, &tm)) strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(junit, "  <testsuite name=\"");
    xml_text(junit, name);
    /* timestamp: when the scene started, UTC, ISO 8601 without a zone (the schema's pattern); the
     * scene file as a property (junit-10.xsd has no file attribute on <testsuite>) */
    fprintf(junit, "\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"0\" time=\"%.3f\" timestamp=\"%s\">\n",
            c.tests, c.failures, c.errors, c.time, stamp);
    fprintf(junit, "    <properties>\n      <property name=\"file\" value=\"");
    xml_text(junit, job->path);
    fprintf(junit, "\"/>\n    </properties>\n");
    fputs(cases ? cases : "", junit);
    fprintf(junit, "  </testsuite>\n");
  }
  free(cases);
  all->tests += c.tests, all->failures += c.failures, all->errors += c.errors, all->expected += c.expected;
  all->passed += c.passed, all->kept += c.kept, all->time += c.time;
}
