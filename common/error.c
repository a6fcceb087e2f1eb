/* Status codes, error messages and the warning list. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/common.h"

kn_status kn_fail(kn_error* err, kn_status status, const char* fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->status = status;
  }
  return status;
}

kn_status kn_error_prefix(kn_error* err, const char* fmt, ...) {
  if (!err) return KN_OK;
  char prefix[KN_ERROR_MSG], old[KN_ERROR_MSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, err->msg, sizeof old);
  size_t n = strlen(prefix);
  if (n >= sizeof err->msg) n = sizeof err->msg - 1;
  memcpy(err->msg, prefix, n);
  size_t m = strlen(old);
  if (n + m >= sizeof err->msg) m = sizeof err->msg - 1 - n;
  memcpy(err->msg + n, old, m);
  err->msg[n + m] = 0;
  return err->status;
}

const char* kn_status_name(kn_status s) {
  switch (s) {
    case KN_OK: return "ok";
    case KN_ERR_IO: return "i/o error";
    case KN_ERR_PARSE: return "parse error";
    case KN_ERR_INVALID: return "invalid input";
    case KN_ERR_NUMERIC: return "numerical failure";
    case KN_ERR_NOMEM: return "out of memory";
    case KN_ERR_UNSUPPORTED: return "unsupported";
  }
  return "unknown";
}

void kn_diag_add(kn_diag* d, const char* fmt, ...) {
  char buf[KN_ERROR_MSG];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (d->count == d->capacity) {
    int cap = d->capacity ? 2 * d->capacity : 8;
    char** items = realloc(d->items, (size_t)cap * sizeof *items);
    if (!items) return; /* a warning lost to OOM is not worth failing for */
    d->items = items;
    d->capacity = cap;
  }
  char* s = kn_strdup(buf);
  if (s) d->items[d->count++] = s;
}

void kn_diag_free(kn_diag* d) {
  for (int i = 0; i < d->count; i++) free(d->items[i]);
  free(d->items);
  d->items = NULL;
  d->count = d->capacity = 0;
}

void* kn_calloc(size_t n, size_t size) { return calloc(n ? n : 1, size ? size : 1); }

char* kn_strdup(const char* s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char* c = malloc(n);
  if (c) memcpy(c, s, n);
  return c;
}
