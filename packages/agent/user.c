#define _GNU_SOURCE
#include "user.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits a colon-separated line in place; returns the number of fields. */
static int split(char *line, char **f, int max) {
  int n = 0;
  line[strcspn(line, "\n")] = 0;
  while (n < max) {
    f[n++] = line;
    char *c = strchr(line, ':');
    if (!c) break;
    *c = 0;
    line = c + 1;
  }
  return n;
}

static int parse_id(const char *s, unsigned *out) {
  char *end;
  errno = 0;
  unsigned long v = strtoul(s, &end, 10);
  if (!*s || *end || errno || v > 0xfffffffeul) return -1;
  *out = (unsigned)v;
  return 0;
}

static void add_group(struct user_info *u, gid_t g) {
  for (int i = 0; i < u->ngroups; i++)
    if (u->groups[i] == g) return;
  if (u->ngroups < USER_MAX_GROUPS) u->groups[u->ngroups++] = g;
}

int user_lookup(const char *name, struct user_info *u) {
  FILE *f = fopen("/etc/passwd", "re");
  if (!f) return -1;
  char *line = NULL, *fld[7];
  size_t cap = 0;
  int found = 0;
  while (!found && getline(&line, &cap, f) > 0) {
    unsigned uid, gid;
    if (split(line, fld, 7) != 7 || strcmp(fld[0], name)) continue;
    if (parse_id(fld[2], &uid) || parse_id(fld[3], &gid)) continue;
    u->uid = uid;
    u->gid = gid;
    snprintf(u->home, sizeof u->home, "%s", *fld[5] ? fld[5] : "/");
    snprintf(u->shell, sizeof u->shell, "%s", *fld[6] ? fld[6] : "/bin/sh");
    found = 1;
  }
  fclose(f);
  if (!found) {
    free(line);
    errno = ENOENT;
    return -1;
  }
  u->ngroups = 0;
  add_group(u, u->gid);
  f = fopen("/etc/group", "re");
  if (f) {
    while (getline(&line, &cap, f) > 0) {
      unsigned gid;
      if (split(line, fld, 4) != 4 || parse_id(fld[2], &gid)) continue;
      for (char *m = strtok(fld[3], ","); m; m = strtok(NULL, ","))
        if (!strcmp(m, name)) add_group(u, gid);
    }
    fclose(f);
  }
  free(line);
  return 0;
}
