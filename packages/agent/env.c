/* Environments (env.h). Entries are "KEY=value" strings; a key is everything before the first '='. */
#define _GNU_SOURCE
#include "env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto.h"
#include "wire.h"

extern char **environ;

static char **denv; /* default environment for spawned processes */
static size_t denv_n;

static int env_key_eq(const char *a, const char *b) {
  size_t ka = strcspn(a, "="), kb = strcspn(b, "=");
  return ka == kb && !memcmp(a, b, ka);
}

static int env_find(char **e, size_t n, const char *kv) {
  for (size_t i = 0; i < n; i++)
    if (env_key_eq(e[i], kv)) return (int)i;
  return -1;
}

/* Sets by pointer (no copy) in an array with room for one more entry. */
static void env_put(char **e, size_t *n, char *kv) {
  int i = env_find(e, *n, kv);
  if (i >= 0) e[i] = kv;
  else e[(*n)++] = kv;
}

int env_init(void) {
  for (char **e = environ; *e; e++) denv_n++;
  denv = calloc(denv_n + 1, sizeof *denv);
  if (!denv) return -1;
  for (size_t i = 0; i < denv_n; i++)
    if (!(denv[i] = strdup(environ[i]))) return -1;
  return 0;
}

int child_env_build(struct child_env *ce, const struct user_info *u, const char *uname, char **env, size_t envc, int pty) {
  char **envp = ce->envp = calloc(denv_n + envc + 8, sizeof *envp);
  if (!envp) return -1;
  size_t en = 0;
  for (size_t i = 0; i < denv_n; i++) env_put(envp, &en, denv[i]);
  snprintf(ce->home, sizeof ce->home, "HOME=%s", u->home);
  snprintf(ce->user, sizeof ce->user, "USER=%s", uname);
  snprintf(ce->logname, sizeof ce->logname, "LOGNAME=%s", uname);
  snprintf(ce->shell, sizeof ce->shell, "SHELL=%s", u->shell);
  env_put(envp, &en, ce->home);
  env_put(envp, &en, ce->user);
  env_put(envp, &en, ce->logname);
  env_put(envp, &en, ce->shell);
  for (size_t i = 0; i < envc; i++) env_put(envp, &en, env[i]);
  if (env_find(envp, en, "PATH=") < 0)
    env_put(envp, &en, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  if (pty && env_find(envp, en, "TERM=") < 0) env_put(envp, &en, "TERM=xterm-256color");
  return 0;
}

int handle_set_env(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen) {
  struct tlv_it it = {pl, pl + plen};
  uint16_t tag;
  const uint8_t *v;
  uint32_t len;
  int rc;
  size_t nset = 0;
  uint32_t flags = 0;
  /* Validate everything first so a bad request changes nothing. */
  while ((rc = tlv_next(&it, &tag, &v, &len)) == 1) {
    if ((tag == SETENV_SET || tag == SETENV_UNSET) && memchr(v, 0, len)) goto invalid;
    if (tag == SETENV_SET && (len == 0 || v[0] == '=' || !memchr(v, '=', len))) goto invalid;
    if (tag == SETENV_SET) nset++;
    if (tag == SETENV_FLAGS) {
      if (len != 4) return -1;
      flags = get32(v);
    }
  }
  if (rc < 0) return -1;
  size_t base = (flags & SETENV_FLAG_REPLACE) ? 0 : denv_n;
  char **e = malloc((base + nset + 1) * sizeof *e);
  if (!e) {
    send_error(c, id, ENOMEM, "out of memory");
    return 0;
  }
  size_t n = 0;
  if (base) memcpy(e, denv, base * sizeof *e);
  n = base;
  if (flags & SETENV_FLAG_REPLACE)
    for (size_t i = 0; i < denv_n; i++) free(denv[i]);
  it.p = pl;
  while (tlv_next(&it, &tag, &v, &len) == 1) {
    if (tag != SETENV_SET && tag != SETENV_UNSET) continue;
    char *kv = strndup((const char *)v, len);
    if (!kv) continue;
    int i = env_find(e, n, kv);
    if (i >= 0) free(e[i]);
    if (tag == SETENV_SET) {
      if (i >= 0) e[i] = kv;
      else e[n++] = kv;
    } else {
      if (i >= 0) e[i] = e[--n];
      free(kv);
    }
  }
  free(denv);
  denv = e;
  denv_n = n;
  send_frame(c, T_OK, id, NULL, 0);
  return 0;
invalid:
  send_error(c, id, EINVAL, "invalid environment entry");
  return 0;
}
