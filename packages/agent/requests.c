/* Request routing (requests.h), and the requests small enough to need no unit of their own. */
#define _GNU_SOURCE
#include "requests.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent.h"
#include "env.h"
#include "files-now.h"
#include "procs.h"
#include "proto.h"
#include "pty.h"
#include "spawn.h"
#include "wire.h"

/* A TLV string value into a PATH_MAX buffer; -1 (a broken payload) when it does not fit or holds a NUL. */
static int copy_path(char *dst, const uint8_t *v, uint32_t len) {
  if (len >= PATH_MAX || memchr(v, 0, len)) return -1;
  memcpy(dst, v, len);
  dst[len] = 0;
  return 0;
}

/* READ: a small file read by the agent itself, as root, to EOF, answered with OK and the bytes:
   no child process, so a /proc file costs a few syscalls (the host checks /proc/net/tcp before a
   gVisor checkpoint). Regular files only, opened non-blocking: the loop must never wait on a FIFO. */
static int handle_read(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen) {
  struct tlv_it it = {pl, pl + plen};
  uint16_t tag;
  const uint8_t *v;
  uint32_t len;
  int rc;
  char path[PATH_MAX] = "";
  while ((rc = tlv_next(&it, &tag, &v, &len)) == 1)
    if (tag == READ_PATH && copy_path(path, v, len) < 0) return -1;
  if (rc < 0) return -1;
  if (!path[0]) {
    send_error(c, id, EINVAL, "read: no path");
    return 0;
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) < 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    send_error(c, id, e, "open %s: %s", path, strerror(e));
    return 0;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    send_error(c, id, EINVAL, "read %s: not a regular file", path);
    return 0;
  }
  uint8_t *b = malloc(READ_MAX + 1);
  size_t n = 0;
  ssize_t k = 0;
  while (b && n <= READ_MAX) {
    k = read(fd, b + n, READ_MAX + 1 - n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    n += (size_t)k;
  }
  int e = errno;
  close(fd);
  if (!b) send_error(c, id, ENOMEM, "read %s: out of memory", path);
  else if (k < 0) send_error(c, id, e, "read %s: %s", path, strerror(e));
  else if (n > READ_MAX) send_error(c, id, EFBIG, "read %s: larger than %u bytes", path, READ_MAX);
  else send_frame(c, T_OK, id, b, n);
  free(b);
  return 0;
}

/* MOUNT: binds SOURCE at TARGET inside the sandbox, making TARGET's missing directories (root's,
   0755), read-only with flag 1. Under gVisor the host hands a volume to a running sandbox in its gofer's
   view of a directory mounted at start (runtime/gvisor/volume-hub.ts); this binds it where the caller
   asked. Needs CAP_SYS_ADMIN, which only the agent holds (children drop it, spawn.c). */
static int handle_mount(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen) {
  struct tlv_it it = {pl, pl + plen};
  uint16_t tag;
  const uint8_t *v;
  uint32_t len;
  int rc;
  char source[PATH_MAX] = "", target[PATH_MAX] = "";
  uint32_t flags = 0;
  while ((rc = tlv_next(&it, &tag, &v, &len)) == 1) {
    char *dst = tag == MOUNT_SOURCE ? source : tag == MOUNT_TARGET ? target : NULL;
    if (dst) {
      if (copy_path(dst, v, len) < 0) return -1;
    } else if (tag == MOUNT_FLAGS) {
      if (len != 4) return -1;
      flags = get32(v);
    }
  }
  if (rc < 0) return -1;
  if (source[0] != '/' || target[0] != '/') {
    send_error(c, id, EINVAL, "mount: source and target must be absolute paths");
    return 0;
  }
  for (char *p = target + 1;; p++) {
    if (*p != '/' && *p) continue;
    char was = *p;
    *p = 0;
    int made = mkdir(target, 0755);
    int e = errno;
    *p = was;
    if (made < 0 && e != EEXIST) {
      send_error(c, id, e, "mount: mkdir %s: %s", target, strerror(e));
      return 0;
    }
    if (!was) break;
  }
  unsigned long ro = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV;
  if (mount(source, target, NULL, MS_BIND, NULL) < 0 || ((flags & MOUNT_FLAG_READ_ONLY) && mount(NULL, target, NULL, ro, NULL) < 0)) {
    int e = errno;
    send_error(c, id, e, "mount %s at %s: %s", source, target, strerror(e));
    return 0;
  }
  send_frame(c, T_OK, id, NULL, 0);
  return 0;
}

/* DESCRIPTORS: every process's open descriptors, read by the agent itself as root, answered with OK
   and a line each, "/proc/<pid>/fd <target>" (what `find /proc -path '/proc/[0-9]*' -printf '%h %l'`
   prints). The host reads them before every gVisor checkpoint; spawning find for it cost about a
   hundred milliseconds a pause. At most READ_MAX bytes (EFBIG above). */
static void handle_descriptors(struct conn *c, uint32_t id) {
  DIR *proc = opendir("/proc");
  if (!proc) {
    int e = errno;
    send_error(c, id, e, "opendir /proc: %s", strerror(e));
    return;
  }
  char *b = malloc(READ_MAX);
  size_t n = 0;
  int full = 0;
  struct dirent *d;
  while (b && !full && (d = readdir(proc))) {
    if (!d->d_name[0] || strspn(d->d_name, "0123456789") != strlen(d->d_name)) continue;
    char dir[sizeof d->d_name + 16];
    snprintf(dir, sizeof dir, "/proc/%s/fd", d->d_name);
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) continue; /* the process has exited */
    DIR *fds = fdopendir(dfd);
    if (!fds) {
      close(dfd);
      continue;
    }
    struct dirent *f;
    while ((f = readdir(fds))) {
      if (f->d_name[0] == '.') continue;
      char target[PATH_MAX];
      ssize_t k = readlinkat(dfd, f->d_name, target, sizeof target - 1);
      if (k < 0) continue; /* closed meanwhile */
      target[k] = 0;
      int w = snprintf(b + n, READ_MAX - n, "%s %s\n", dir, target);
      if (w < 0 || (size_t)w >= READ_MAX - n) {
        full = 1;
        break;
      }
      n += (size_t)w;
    }
    closedir(fds);
  }
  closedir(proc);
  if (!b) send_error(c, id, ENOMEM, "descriptors: out of memory");
  else if (full) send_error(c, id, EFBIG, "descriptors: more than %u bytes", READ_MAX);
  else send_frame(c, T_OK, id, b, n);
  free(b);
}

int handle_frame(struct conn *c, uint8_t type, uint32_t id, const uint8_t *pl, size_t plen) {
  struct proc *p;
  switch (type) {
    case T_SPAWN:
      return handle_spawn(c, id, pl, plen, 0);
    case T_FILE:
      return handle_spawn(c, id, pl, plen, 1);
    case T_LIST:
      send_procs(c, id);
      return 0;
    case T_ATTACH:
      return handle_attach(c, id, pl, plen);
    case T_DIAL:
      handle_dial(c, id);
      return 0;
    case T_READ:
      return handle_read(c, id, pl, plen);
    case T_DESCRIPTORS:
      handle_descriptors(c, id);
      return 0;
    case T_FILE_NOW:
      return handle_file_now(c, id, pl, plen);
    case T_MOUNT:
      return handle_mount(c, id, pl, plen);
    case T_STDIN:
      p = find_proc(c, id); /* unknown ids are ignored: the process may have just exited */
      if (p && p->in.fd >= 0 && !p->stdin_close_pending && plen) stdin_push(p, pl, plen);
      return 0;
    case T_STDIN_CLOSE:
      p = find_proc(c, id);
      if (p && p->in.fd >= 0) {
        p->stdin_close_pending = 1;
        stdin_flush(p);
      }
      return 0;
    case T_SIGNAL: {
      if (plen != 4) return -1;
      uint32_t sig = get32(pl);
      if (sig == 0 || sig >= NSIG) {
        send_error(c, id, EINVAL, "invalid signal %u", sig);
        return 0;
      }
      p = find_proc(c, id);
      if (p) proc_kill(p, (int)sig);
      return 0;
    }
    case T_RESIZE:
      if (plen != 4) return -1;
      p = find_proc(c, id);
      if (p && p->pty && p->out.fd >= 0) pty_resize(p->out.fd, get16(pl), get16(pl + 2));
      return 0;
    case T_SET_ENV:
      return handle_set_env(c, id, pl, plen);
    case T_PING:
      send_frame(c, T_PONG, id, pl, plen);
      return 0;
    default: /* answered, not fatal, so a newer host can probe for features */
      send_error(c, id, ENOSYS, "unknown request type %u", type);
      return 0;
  }
}
