#define _GNU_SOURCE
#include "user.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "wire.h"

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

static int read_user(const char *name, struct user_info *u) {
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

/* The account files' identity: a lookup is reused until either changes (two stats instead of two reads). */
struct files_id {
  struct timespec mtime[2];
  ino_t ino[2];
  off_t size[2];
};

static int files_id(struct files_id *id) {
  static const char *const paths[2] = {"/etc/passwd", "/etc/group"};
  memset(id, 0, sizeof *id);
  for (int i = 0; i < 2; i++) {
    struct stat st;
    if (stat(paths[i], &st) < 0) {
      if (i == 1 && errno == ENOENT) continue; /* /etc/group is optional */
      return -1;
    }
    id->mtime[i] = st.st_mtim;
    id->ino[i] = st.st_ino;
    id->size[i] = st.st_size;
  }
  return 0;
}

int user_lookup(const char *name, struct user_info *u) {
  static struct {
    int valid;
    char name[64];
    struct files_id id;
    struct user_info info;
  } cache;
  struct files_id id;
  if (files_id(&id) < 0) return -1;
  if (cache.valid && !strcmp(cache.name, name) && !memcmp(&cache.id, &id, sizeof id)) {
    *u = cache.info;
    return 0;
  }
  if (read_user(name, u) < 0) return -1;
  if (strlen(name) < sizeof cache.name) {
    cache.valid = 1;
    snprintf(cache.name, sizeof cache.name, "%s", name);
    cache.id = id;
    cache.info = *u;
  }
  return 0;
}

int user_lookup_or_answer(struct conn *c, uint32_t id, const char *name, struct user_info *u) {
  if (user_lookup(name, u) == 0) return 0;
  int e = errno;
  send_error(c, id, e, e == ENOENT ? "user %s: no such user" : "user %s: %s", name, strerror(e));
  return -1;
}
