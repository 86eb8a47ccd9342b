/*
 * FILE_NOW: small file operations the agent runs itself, in its loop, as the requesting user, so a
 * small upload or download costs a few syscalls instead of a forked helper (under gVisor a fork
 * copies the agent's address space into a new host process, 10-30 ms). The loop thread takes the
 * user's groups, gid and uid as its effective ids for the operation only: raw syscalls change the
 * calling thread alone, and the saved set-user-ID stays root, so the thread can take root back.
 * Only operations bounded by READ_MAX bytes run here; the host sends the rest as FILE.
 */
#define _GNU_SOURCE
#include "files-now.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "files.h"
#include "proto.h"
#include "user.h"
#include "wire.h"

static gid_t root_groups[USER_MAX_GROUPS];
static int root_ngroups = -1;

/* Takes the user's ids as this thread's effective ones; -1 with errno (nothing changed) on failure. */
static int become(const struct user_info *u) {
  if (geteuid() != 0) return u->uid == geteuid() ? 0 : (errno = EPERM, -1);
  if (root_ngroups < 0) {
    root_ngroups = getgroups(USER_MAX_GROUPS, root_groups);
    if (root_ngroups < 0) root_ngroups = 0;
  }
  if (syscall(SYS_setgroups, (size_t)u->ngroups, u->groups) < 0) return -1;
  if (syscall(SYS_setresgid, -1, u->gid, -1) < 0 || syscall(SYS_setresuid, -1, u->uid, -1) < 0) {
    int err = errno;
    syscall(SYS_setresgid, -1, 0, -1);
    syscall(SYS_setgroups, (size_t)root_ngroups, root_groups);
    return errno = err, -1;
  }
  return 0;
}

/* Back to root. Cannot fail while the saved ids are root; if it did, the agent must not go on as the user. */
static void unbecome(uid_t was) {
  if (was != 0) return;
  if (syscall(SYS_setresuid, -1, 0, -1) < 0 || syscall(SYS_setresgid, -1, 0, -1) < 0 || syscall(SYS_setgroups, (size_t)root_ngroups, root_groups) < 0) {
    dprintf(2, "sandpit-agent: cannot take back root after a file operation: %s\n", strerror(errno));
    abort();
  }
}

/* The answer: an ENTRY record, then (read) a DATA record. */
static void send_entry(struct conn *c, uint32_t id, const struct stat *st, const char *path, const uint8_t *data, size_t n) {
  static struct tlv_w w;
  entry_tlv(&w, NULL, st, AT_FDCWD, path);
  size_t size = 6 + w.n + (data ? 6 + n : 0);
  uint8_t *b = malloc(size);
  if (!b) {
    send_error(c, id, ENOMEM, "out of memory");
    return;
  }
  put16(b, REC_ENTRY);
  put32(b + 2, (uint32_t)w.n);
  memcpy(b + 6, w.b, w.n);
  if (data) {
    put16(b + 6 + w.n, REC_DATA);
    put32(b + 8 + w.n, (uint32_t)n);
    memcpy(b + 12 + w.n, data, n);
  }
  send_frame(c, T_OK, id, b, size);
  free(b);
}

/* Each returns 0 with the answer sent, or -1 with errno and what failed. */

static int now_read(struct conn *c, uint32_t id, const struct file_req *r, const char **what) {
  *what = "open";
  /* Non-blocking: the loop must never wait on a FIFO (it is refused below anyway). */
  int fd = open(r->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) return -1;
  struct stat st;
  int err = 0;
  uint8_t *b = NULL;
  size_t n = 0;
  if (fstat(fd, &st) < 0) err = errno, *what = "stat";
  else if (S_ISDIR(st.st_mode)) err = EISDIR, *what = "read";
  else if (!S_ISREG(st.st_mode)) err = EINVAL, *what = "read (not a regular file)";
  else if (st.st_size > READ_MAX) err = EFBIG, *what = "read (larger than the agent reads itself)";
  else if (!(b = malloc(READ_MAX + 1))) err = ENOMEM, *what = "read";
  while (!err && n <= READ_MAX) {
    ssize_t k = read(fd, b + n, READ_MAX + 1 - n);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) err = errno, *what = "read";
    if (k <= 0) break;
    n += (size_t)k;
  }
  if (!err && n > READ_MAX) err = EFBIG, *what = "read (larger than the agent reads itself)";
  close(fd);
  if (!err) {
    st.st_size = (off_t)n; /* what was read: the file may have changed since the fstat */
    send_entry(c, id, &st, r->path, b, n);
  }
  free(b);
  return err ? (errno = err, -1) : 0;
}

static int now_write(struct conn *c, uint32_t id, const struct file_req *r, const char **what, const char **arg) {
  struct upload u;
  if (upload_open(&u, r->path, r->flags, what, arg) < 0) return -1;
  struct stat st;
  int err = write_all(u.fd, r->data, r->data_len);
  if (!err && fstat(u.fd, &st) < 0) err = errno;
  if (err) {
    upload_abort(&u);
    return errno = err, -1;
  }
  if (upload_commit(&u) < 0) return -1;
  send_entry(c, id, &st, r->path, NULL, 0);
  return 0;
}

static int now_stat_of(struct conn *c, uint32_t id, const char *path, const char **what) {
  struct stat st;
  *what = "stat";
  if (lstat(path, &st) < 0) return -1;
  send_entry(c, id, &st, path, NULL, 0);
  return 0;
}

static int run(struct conn *c, uint32_t id, const struct file_req *r, const char **what, const char **arg) {
  *what = "file operation";
  *arg = r->path;
  switch (r->op) {
    case OP_STAT:
      return now_stat_of(c, id, r->path, what);
    case OP_READ:
      return now_read(c, id, r, what);
    case OP_WRITE:
      return now_write(c, id, r, what, arg);
    case OP_MKDIR:
      *what = "mkdir";
      if ((r->flags & FILE_FLAG_PARENTS) ? mkdir_p(r->path) : mkdir(r->path, 0777)) return -1;
      return now_stat_of(c, id, r->path, what);
    case OP_RENAME:
      *what = "rename";
      if ((r->flags & FILE_FLAG_NO_OVERWRITE) ? renameat2(AT_FDCWD, r->path, AT_FDCWD, r->path2, RENAME_NOREPLACE) : rename(r->path, r->path2)) return -1;
      *arg = r->path2;
      return now_stat_of(c, id, r->path2, what);
    case OP_REMOVE:
      *what = "remove";
      if (r->flags & FILE_FLAG_RECURSIVE) return errno = EINVAL, -1; /* a tree is a helper's work */
      if (remove_path(r->path, 0) < 0) return -1;
      break;
    default:
      return errno = ENOSYS, -1;
  }
  send_frame(c, T_OK, id, NULL, 0);
  return 0;
}

/* Runs the operation as the user, answering it; the thread is root again afterwards. */
static void run_as(struct conn *c, uint32_t id, const struct file_req *r, const struct user_info *u, const char *uname) {
  uid_t was = geteuid();
  if (become(u) < 0) {
    int e = errno;
    send_error(c, id, e, "user %s: %s", uname, strerror(e));
    return;
  }
  mode_t mask = umask(022);
  const char *what, *arg;
  int rc = run(c, id, r, &what, &arg);
  int err = errno;
  umask(mask);
  unbecome(was);
  if (rc < 0) send_error(c, id, err, "%s %s: %s", what, arg, strerror(err));
}

int handle_file_now(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen) {
  struct file_req r;
  char *user;
  char *arena = malloc(plen + 8);
  int rc = file_req_parse(pl, plen, &r, &user, arena);
  if (rc < 0) {
    free(arena);
    return -1;
  }
  static struct user_info u;
  const char *uname = user && *user ? user : "user";
  if (rc) send_error(c, id, arena ? EINVAL : ENOMEM, arena ? "invalid file request" : "out of memory");
  else if (r.path[0] != '/' || (r.op == OP_RENAME && r.path2[0] != '/')) send_error(c, id, EINVAL, "file operation: paths must be absolute");
  else if (r.data_len > READ_MAX) send_error(c, id, EFBIG, "write %s: larger than the agent writes itself", r.path);
  else if (user_lookup_or_answer(c, id, uname, &u) == 0) run_as(c, id, &r, &u, uname);
  free(arena);
  return 0;
}
