/* Environments: the sandbox's default for spawned processes (SET_ENV changes it) and each child's. */
#ifndef SANDPIT_ENV_H
#define SANDPIT_ENV_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "user.h"

struct conn;

/* The agent's own environment becomes the default; -1 when out of memory. */
int env_init(void);
/* SET_ENV. Same return codes as handle_frame. */
int handle_set_env(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen);

/* A child's environment; envp's entries point into this struct, the default environment and the request. */
struct child_env {
  char **envp;
  char home[PATH_MAX + 8], user[300], logname[300], shell[PATH_MAX + 8];
};

/*
 * Sandbox default, then the user's identity, then the request (env, envc); PATH (and TERM for a
 * pty) when absent. 0, or -1 when out of memory; ce->envp is the caller's to free either way.
 */
int child_env_build(struct child_env *ce, const struct user_info *u, const char *uname, char **env, size_t envc, int pty);

#endif
