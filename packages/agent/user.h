/* Account lookup from /etc/passwd and /etc/group: NSS cannot work in a static binary. */
#ifndef SANDPIT_USER_H
#define SANDPIT_USER_H

#include <limits.h>
#include <stdint.h>
#include <sys/types.h>

#define USER_MAX_GROUPS 256

struct user_info {
  uid_t uid;
  gid_t gid;
  char home[PATH_MAX];
  char shell[PATH_MAX];
  gid_t groups[USER_MAX_GROUPS];
  int ngroups;
};

/* 0 on success; -1 with errno (ENOENT: no such user). */
int user_lookup(const char *name, struct user_info *u);

struct conn;
/* user_lookup, or -1 with the request answered by the error ("user X: no such user" for ENOENT). */
int user_lookup_or_answer(struct conn *c, uint32_t id, const char *name, struct user_info *u);

#endif
