/*
 * File operations of the agent. Each runs in its own forked helper that has already taken the
 * user's uid, gids and home directory, so permission checks and symlink resolution are exactly
 * what that user would see, and a slow disk only ever blocks the helper, never the agent's loop.
 */
#define _GNU_SOURCE
#include "files.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proto.h"

#define IO_CHUNK (1u << 20)

static int exec_fd = -1;
/* Reads and writes of file data: a chunk, with room for a frame header on either side. */
static uint8_t iobuf[HDR + IO_CHUNK + HDR];

static void __attribute__((noreturn)) fail(const char *what, const char *arg) {
  struct {
    int32_t err;
    char msg[400];
  } r;
  r.err = errno ? errno : EIO;
  int n = snprintf(r.msg, sizeof r.msg, "%s %s: %s", what, arg, strerror(r.err));
  if (n < 0) n = 0;
  if (n >= (int)sizeof r.msg) n = sizeof r.msg - 1;
  ssize_t ignored = write(exec_fd, &r, 4 + (size_t)n);
  (void)ignored;
  _exit(127);
}

/* After the start was reported, a failure is a message on stderr and errno as the exit status. */
static void __attribute__((noreturn)) fail_late(int err, const char *what, const char *arg) {
  dprintf(2, "%s %s: %s", what, arg, strerror(err));
  _exit(err > 0 && err < 256 ? err : EIO);
}

static void report_ok(uint64_t size) {
  uint8_t b[12] = {0};
  put64(b + 4, size);
  ssize_t ignored = write(exec_fd, b, sizeof b);
  (void)ignored;
  close(exec_fd);
  exec_fd = -1;
}

int file_req_parse(const uint8_t *pl, size_t plen, struct file_req *r, char **user, char *arena) {
  struct tlv_it it = {pl, pl + plen};
  uint16_t tag;
  const uint8_t *v;
  uint32_t len;
  int rc;
  memset(r, 0, sizeof *r);
  *user = NULL;
  while ((rc = tlv_next(&it, &tag, &v, &len)) == 1)
    if ((tag == FILE_OP || tag == FILE_FLAGS) && len != 4) return -1;
  if (rc < 0) return -1;
  if (!arena) return 1;
  it.p = pl;
  while (tlv_next(&it, &tag, &v, &len) == 1) {
    switch (tag) {
      case FILE_OP: r->op = get32(v); break;
      case FILE_FLAGS: r->flags = get32(v); break;
      case FILE_PATH:
        if (!len || !(r->path = arena_str(&arena, v, len))) return 1;
        break;
      case FILE_PATH2:
        if (!len || !(r->path2 = arena_str(&arena, v, len))) return 1;
        break;
      case FILE_USER:
        if (!(*user = arena_str(&arena, v, len))) return 1;
        break;
      case FILE_DATA:
        r->data = v;
        r->data_len = len;
        break;
      default:
        break;
    }
  }
  return !r->op || !r->path || (r->op == OP_RENAME && !r->path2) ? 1 : 0;
}

/* ---- direct transfers: frames on the connection itself ---- */

/* Blocking I/O on the connection: under gVisor every call is a trap, and a blocking send moves a
   whole frame in one call where the agent's loop needs several writes and waits. (No MSG_WAITALL on
   receives: this gVisor then waits for news from the host even with data still queued, and stalls.) */
static void conn_blocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK); }

/* 0, or -1 with errno (ECONNRESET for EOF: the host went away). */
static int recv_all(int fd, uint8_t *b, size_t n) {
  while (n) {
    ssize_t k = recv(fd, b, n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return k == 0 ? (errno = ECONNRESET, -1) : -1;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

static int send_all(int fd, const uint8_t *b, size_t n) {
  while (n) {
    ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return -1;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

static void put_header(uint8_t *h, uint8_t type, uint32_t id, size_t plen) {
  put32(h, (uint32_t)(5 + plen));
  h[4] = type;
  put32(h + 5, id);
}

/* What the agent sends for a started file operation (it leaves that to a direct helper). */
static void send_spawned(const struct file_req *r, uint64_t size) {
  struct tlv_w w = {.n = 0};
  tlv_put32(&w, SPAWNED_PID, (uint32_t)getpid());
  tlv_put64(&w, SPAWNED_SIZE, size);
  uint8_t h[HDR];
  put_header(h, T_SPAWNED, r->id, w.n);
  if (send_all(r->conn_fd, h, HDR) < 0 || send_all(r->conn_fd, w.b, w.n) < 0) _exit(EPIPE); /* the host is gone */
}

/* ---- buffered TLV records on stdout ---- */

static uint8_t obuf[65536];
static size_t olen;

static void out_flush(void) {
  size_t off = 0;
  while (off < olen) {
    ssize_t n = write(1, obuf + off, olen - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) _exit(EPIPE); /* the host is gone */
    off += (size_t)n;
  }
  olen = 0;
}

static void out_record(uint16_t tag, const struct tlv_w *w) {
  if (olen + 6 + w->n > sizeof obuf) out_flush();
  put16(obuf + olen, tag);
  put32(obuf + olen + 2, (uint32_t)w->n);
  memcpy(obuf + olen + 6, w->b, w->n);
  olen += 6 + w->n;
}

void entry_tlv(struct tlv_w *w, const char *name, const struct stat *st, int dirfd, const char *rel) {
  w->n = 0;
  if (name) tlv_put(w, ENTRY_NAME, name, (uint32_t)strlen(name));
  uint8_t type = S_ISREG(st->st_mode) ? FT_FILE : S_ISDIR(st->st_mode) ? FT_DIR : S_ISLNK(st->st_mode) ? FT_SYMLINK : FT_OTHER;
  tlv_put(w, ENTRY_TYPE, &type, 1);
  tlv_put64(w, ENTRY_SIZE, (uint64_t)st->st_size);
  tlv_put32(w, ENTRY_MODE, st->st_mode);
  tlv_put64(w, ENTRY_MTIME_MS, (uint64_t)st->st_mtim.tv_sec * 1000 + (uint64_t)st->st_mtim.tv_nsec / 1000000);
  tlv_put32(w, ENTRY_UID, st->st_uid);
  tlv_put32(w, ENTRY_GID, st->st_gid);
  if (S_ISLNK(st->st_mode)) {
    char target[PATH_MAX];
    ssize_t n = readlinkat(dirfd, rel, target, sizeof target);
    if (n > 0) tlv_put(w, ENTRY_TARGET, target, (uint32_t)n);
  }
}

/* ---- operations ---- */

static void op_stat(const char *path) {
  struct stat st;
  if (lstat(path, &st) < 0) fail("stat", path);
  report_ok(0);
  struct tlv_w w;
  entry_tlv(&w, NULL, &st, AT_FDCWD, path);
  out_record(REC_ENTRY, &w);
  out_flush();
}

static void op_list(const char *path) {
  DIR *d = opendir(path);
  if (!d) fail("list", path);
  report_ok(0);
  struct dirent *e;
  struct tlv_w w;
  while ((errno = 0, e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    struct stat st;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) continue; /* removed meanwhile */
    entry_tlv(&w, e->d_name, &st, dirfd(d), e->d_name);
    out_record(REC_ENTRY, &w);
  }
  if (errno) fail_late(errno, "list", path);
  out_flush();
}

/* mkdir -p; 0 or -1 with errno. An existing directory is success, anything else existing is EEXIST/ENOTDIR. */
int mkdir_p(const char *path) {
  char p[PATH_MAX];
  if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) return errno = ENAMETOOLONG, -1;
  for (char *s = p + 1;; s++) {
    if (*s != '/' && *s) continue;
    char saved = *s;
    *s = 0;
    if (mkdir(p, 0777) < 0 && errno != EEXIST) return -1;
    *s = saved;
    if (!saved) break;
  }
  struct stat st;
  if (stat(p, &st) < 0) return -1;
  if (!S_ISDIR(st.st_mode)) return errno = ENOTDIR, -1;
  return 0;
}

static void op_mkdir(const char *path, uint32_t flags) {
  if (flags & FILE_FLAG_PARENTS) {
    if (mkdir_p(path) < 0) fail("mkdir", path);
  } else if (mkdir(path, 0777) < 0) {
    fail("mkdir", path);
  }
  report_ok(0);
}

static int remove_tree(int dirfd, const char *name) {
  if (unlinkat(dirfd, name, 0) == 0) return 0;
  if (errno != EISDIR && errno != EPERM) return -1; /* EPERM: what unlink(2) of a directory reports on Linux */
  int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return -1;
  DIR *d = fdopendir(fd);
  if (!d) {
    close(fd);
    return -1;
  }
  struct dirent *e;
  int rc = 0;
  while (rc == 0 && (e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    rc = remove_tree(fd, e->d_name);
  }
  closedir(d);
  return rc == 0 ? unlinkat(dirfd, name, AT_REMOVEDIR) : -1;
}

int remove_path(const char *path, int recursive) {
  struct stat st;
  if (lstat(path, &st) < 0) return -1;
  if (!S_ISDIR(st.st_mode)) return unlink(path);
  return recursive ? remove_tree(AT_FDCWD, path) : rmdir(path);
}

static void op_remove(const char *path, uint32_t flags) {
  if (remove_path(path, !!(flags & FILE_FLAG_RECURSIVE)) < 0) fail("remove", path);
  report_ok(0);
}

static void op_rename(const char *from, const char *to, uint32_t flags) {
  int rc = (flags & FILE_FLAG_NO_OVERWRITE) ? renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) : rename(from, to);
  if (rc < 0) fail("rename", from);
  report_ok(0);
}

/* Sends exactly the size the file had when opened, so the host can promise a Content-Length. */
static void op_read(const struct file_req *r) {
  const char *path = r->path;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("open", path);
  struct stat st;
  if (fstat(fd, &st) < 0) fail("stat", path);
  if (S_ISDIR(st.st_mode)) {
    errno = EISDIR;
    fail("read", path);
  }
  if (!S_ISREG(st.st_mode)) {
    errno = EINVAL;
    fail("read (not a regular file)", path);
  }
  int direct = r->conn_fd >= 0;
  if (direct) {
    conn_blocking(r->conn_fd);
    send_spawned(r, (uint64_t)st.st_size);
  }
  report_ok((uint64_t)st.st_size);
  /* Plain 1 MiB reads and writes: splice between files and pipes is not reliable under every
     sandbox runtime (gVisor). A direct transfer reads behind room for a frame header and sends
     header and data in one call; only whole frames are sent, so any exit leaves the stream in step. */
  uint8_t *fb = iobuf, *b = iobuf + HDR;
  uint64_t left = (uint64_t)st.st_size;
  while (left) {
    ssize_t n = read(fd, b, left < IO_CHUNK ? (size_t)left : IO_CHUNK);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_late(errno, "read", path);
    if (n == 0) fail_late(EIO, "read (file shrank while being read)", path);
    if (direct) {
      put_header(fb, T_STDOUT, r->id, (size_t)n);
      if (send_all(r->conn_fd, fb, HDR + (size_t)n) < 0) fail_late(errno, "send", path);
    } else {
      for (ssize_t off = 0; off < n;) {
        ssize_t k = write(1, b + off, (size_t)(n - off));
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) fail_late(errno, "send", path);
        off += k;
      }
    }
    left -= (uint64_t)n;
  }
  _exit(0);
}

int write_all(int fd, const uint8_t *b, size_t n) {
  while (n) {
    ssize_t k = write(fd, b, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return k < 0 ? errno : EIO;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

static void __attribute__((noreturn)) write_failed(int err, const char *path, const char *tmp) {
  if (tmp) unlink(tmp);
  fail_late(err, "write", path);
}

static void copy_stdin(int fd, const char *path, const char *tmp) {
  for (;;) {
    ssize_t n = read(0, iobuf, IO_CHUNK);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return;
    int err = n < 0 ? errno : write_all(fd, iobuf, (size_t)n);
    if (err) write_failed(err, path, tmp);
  }
}

/* The host broke the rules of a direct transfer, so the stream is out of step: dying by a signal
   makes the agent close the connection rather than read data as frames. */
static void __attribute__((noreturn)) out_of_step(const char *tmp) {
  if (tmp) unlink(tmp);
  raise(SIGKILL);
  _exit(EPROTO);
}

/*
 * Direct write: STDIN frames straight from the connection into fd, until STDIN_CLOSE. A STDIN frame
 * is always followed by another frame, so its payload and the next header are received together.
 * SIGNAL goes to the helper's process group, as the agent would send it. After a failed write the
 * rest of the frame in hand is still read, so the agent takes over at a frame boundary (and ignores
 * the transfer's later frames).
 */
static void copy_frames(const struct file_req *r, int fd, const char *path, const char *tmp) {
  int sock = r->conn_fd, err = 0;
  uint8_t h[HDR];
  if (recv_all(sock, h, HDR) < 0) goto gone;
  for (;;) {
    uint32_t len = get32(h);
    if (len < 5 || len > MAX_FRAME + 5 || get32(h + 5) != r->id) out_of_step(tmp);
    size_t plen = len - 5;
    int ahead = 0; /* the next header came with this frame's payload */
    if (h[4] == T_STDIN_CLOSE && !plen) {
      if (err) write_failed(err, path, tmp);
      return;
    } else if (h[4] == T_SIGNAL && plen == 4) {
      if (recv_all(sock, iobuf, 4) < 0) goto gone;
      kill(0, (int)get32(iobuf));
    } else if (h[4] == T_STDIN) {
      for (size_t k; plen; plen -= k) {
        k = plen < IO_CHUNK ? plen : IO_CHUNK;
        ahead = k == plen && !err;
        if (recv_all(sock, iobuf, k + (ahead ? HDR : 0)) < 0) goto gone;
        if (!err) err = write_all(fd, iobuf, k);
        if (ahead) memcpy(h, iobuf + k, HDR);
      }
    } else {
      out_of_step(tmp);
    }
    if (err && !ahead) write_failed(err, path, tmp);
    if (!ahead && recv_all(sock, h, HDR) < 0) goto gone;
  }
gone: /* the host closed the connection: the upload was abandoned */
  if (tmp) unlink(tmp);
  fail_late(errno, "receive", path);
}

int upload_open(struct upload *u, const char *path, uint32_t flags, const char **what, const char **arg) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  u->path = path;
  u->named = NULL;
  u->fd = -1;
  *what = "write";
  *arg = path;
  if (!*base) return errno = EISDIR, -1;
  if (!slash) strcpy(u->dir, ".");
  else if (slash == path) strcpy(u->dir, "/");
  else if (snprintf(u->dir, sizeof u->dir, "%.*s", (int)(slash - path), path) >= (int)sizeof u->dir) return errno = ENAMETOOLONG, -1;
  if ((flags & FILE_FLAG_PARENTS) && mkdir_p(u->dir) < 0) {
    *what = "mkdir";
    *arg = u->dir;
    return -1;
  }
  struct stat st;
  int exists = stat(path, &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) return errno = EISDIR, -1;
  if (exists && !S_ISREG(st.st_mode)) {
    *what = "write (not a regular file)";
    return errno = EINVAL, -1;
  }
  mode_t mode = exists ? st.st_mode & 07777 : 0666;
  snprintf(u->tmp, sizeof u->tmp, "%s/.%.200s.sandpit-upload-%d", u->dir, base, (int)getpid());
  u->fd = open(u->dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
  if (u->fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    u->named = u->tmp;
    u->fd = open(u->tmp, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, mode);
  }
  if (u->fd < 0) return -1;
  if (exists) fchmod(u->fd, mode); /* keep the replaced file's permissions, past the umask */
  return 0;
}

int upload_commit(struct upload *u) {
  if (!u->named) {
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", u->fd);
    /* Linking straight to the target is atomic when nothing is there; otherwise link aside and rename over it. */
    if (linkat(AT_FDCWD, self, AT_FDCWD, u->path, AT_SYMLINK_FOLLOW) == 0) {
      close(u->fd);
      u->fd = -1;
      return 0;
    }
    if (errno != EEXIST || linkat(AT_FDCWD, self, AT_FDCWD, u->tmp, AT_SYMLINK_FOLLOW) < 0) {
      int err = errno;
      close(u->fd);
      u->fd = -1;
      return errno = err, -1;
    }
  }
  int rc = close(u->fd);
  u->fd = -1;
  if (rc < 0 || rename(u->tmp, u->path) < 0) {
    int err = errno;
    unlink(u->tmp);
    return errno = err, -1;
  }
  return 0;
}

void upload_abort(struct upload *u) {
  if (u->fd >= 0) close(u->fd);
  u->fd = -1;
  if (u->named) unlink(u->named);
}

/*
 * Writes stdin to path without ever exposing a half-written file: the data goes to an unnamed
 * O_TMPFILE inode in the target directory (freed by the kernel if we die or the disk fills up),
 * which gets a name only when complete. A filesystem without O_TMPFILE gets a hidden temporary name.
 */
static void op_write(const struct file_req *r) {
  struct upload u;
  const char *what, *arg;
  if (upload_open(&u, r->path, r->flags, &what, &arg) < 0) fail(what, arg);
  if (r->conn_fd >= 0) {
    conn_blocking(r->conn_fd);
    send_spawned(r, 0);
    report_ok(0);
    copy_frames(r, u.fd, r->path, u.named);
  } else {
    report_ok(0);
    copy_stdin(u.fd, r->path, u.named);
  }
  if (upload_commit(&u) < 0) fail_late(errno, "write", r->path);
  _exit(0);
}

/* ---- watch ---- */

#define WATCH_MASK (IN_CREATE | IN_DELETE | IN_MODIFY | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

struct wdir {
  int wd;
  char *rel; /* "" for the root */
};
static struct wdir *wdirs;
static size_t nwdirs, capwdirs;
static int ifd, root_wd = -1;
static const char *root_path;

static void emit_event(uint8_t kind, const char *name, uint8_t isdir) {
  struct tlv_w w;
  w.n = 0;
  tlv_put(&w, EVENT_KIND, &kind, 1);
  tlv_put(&w, EVENT_NAME, name, (uint32_t)strlen(name));
  tlv_put(&w, EVENT_IS_DIR, &isdir, 1);
  out_record(REC_EVENT, &w);
}

/*
 * Watches rel (and, recursive, every directory below). `announce`: rel was just created, so what
 * appeared in it before its watch existed raised no event of its own: report each entry as created.
 */
/*
 * An O_TMPFILE inode being written (how uploads land, see op_write) raises events under the
 * kernel's name for it, "#<inode>", which names nothing in the directory: not reported. A real
 * file of that name exists, and is.
 */
static int unnamed_tmpfile(const struct inotify_event *ev, const char *name) {
  if (ev->name[0] != '#' || !ev->name[1] || (ev->mask & IN_ISDIR)) return 0;
  for (const char *c = ev->name + 1; *c; c++)
    if (*c < '0' || *c > '9') return 0;
  char full[2 * PATH_MAX];
  snprintf(full, sizeof full, "%s/%s", root_path, name);
  struct stat st;
  return lstat(full, &st) < 0 && errno == ENOENT;
}

static void watch_add(const char *rel, int recursive, int announce) {
  char full[PATH_MAX];
  snprintf(full, sizeof full, "%s%s%s", root_path, *rel ? "/" : "", rel);
  int wd = inotify_add_watch(ifd, full, WATCH_MASK | IN_ONLYDIR | IN_DONT_FOLLOW);
  if (wd < 0) return; /* gone already, or not readable by the user */
  if (nwdirs == capwdirs) {
    capwdirs = capwdirs ? capwdirs * 2 : 64;
    struct wdir *n = realloc(wdirs, capwdirs * sizeof *n);
    if (!n) fail_late(ENOMEM, "watch", root_path);
    wdirs = n;
  }
  wdirs[nwdirs].wd = wd;
  wdirs[nwdirs++].rel = strdup(rel);
  if (!recursive) return;
  DIR *d = opendir(full);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    uint8_t isdir = e->d_type == DT_DIR;
    if (!isdir && !announce) continue;
    char sub[PATH_MAX];
    snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
    if (announce) emit_event(EV_CREATE, sub, isdir);
    if (isdir) watch_add(sub, 1, announce);
  }
  closedir(d);
}

static const char *wd_rel(int wd) {
  for (size_t i = 0; i < nwdirs; i++)
    if (wdirs[i].wd == wd) return wdirs[i].rel;
  return NULL;
}

static void wd_forget(int wd) {
  for (size_t i = 0; i < nwdirs; i++)
    if (wdirs[i].wd == wd) {
      free(wdirs[i].rel);
      wdirs[i] = wdirs[--nwdirs];
      return;
    }
}

/* Streams one record per change until the watched directory itself goes away (or the host kills us). */
static void op_watch(const char *path, uint32_t flags) {
  int recursive = !!(flags & FILE_FLAG_RECURSIVE);
  struct stat st;
  if (stat(path, &st) < 0) fail("watch", path);
  if (!S_ISDIR(st.st_mode)) {
    errno = ENOTDIR;
    fail("watch", path);
  }
  ifd = inotify_init1(IN_CLOEXEC);
  if (ifd < 0) fail("inotify", path);
  root_path = path;
  watch_add("", recursive, 0);
  if (!nwdirs) fail("watch", path);
  root_wd = wdirs[0].wd;
  report_ok(0);
  static uint8_t b[65536] __attribute__((aligned(__alignof__(struct inotify_event))));
  struct tlv_w w;
  for (;;) {
    ssize_t n = read(ifd, b, sizeof b);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail_late(errno, "watch", path);
    int last_kind = 0, last_wd = -1;
    char last_name[NAME_MAX + 1] = "";
    for (ssize_t off = 0; off < n;) {
      struct inotify_event *ev = (struct inotify_event *)(b + off);
      off += (ssize_t)sizeof *ev + ev->len;
      if (ev->mask & IN_Q_OVERFLOW) continue;
      if (ev->mask & IN_IGNORED) {
        if (ev->wd == root_wd) {
          out_flush();
          _exit(0);
        }
        wd_forget(ev->wd);
        continue;
      }
      if (ev->mask & (IN_DELETE_SELF | IN_MOVE_SELF)) {
        if (ev->wd != root_wd) continue; /* reported by the parent's watch */
        w.n = 0;
        uint8_t kind = EV_REMOVE, isdir = 1;
        tlv_put(&w, EVENT_KIND, &kind, 1);
        tlv_put(&w, EVENT_NAME, "", 0);
        tlv_put(&w, EVENT_IS_DIR, &isdir, 1);
        out_record(REC_EVENT, &w);
        out_flush();
        _exit(0);
      }
      const char *rel = wd_rel(ev->wd);
      if (!rel || !ev->len) continue;
      uint8_t kind = (ev->mask & IN_CREATE) ? EV_CREATE : (ev->mask & IN_DELETE) ? EV_REMOVE : (ev->mask & IN_MODIFY) ? EV_WRITE
                   : (ev->mask & IN_MOVED_FROM) ? EV_RENAME_FROM : (ev->mask & IN_MOVED_TO) ? EV_RENAME_TO : EV_CHMOD;
      /* A large write raises IN_MODIFY per chunk: one event per file and batch is enough. */
      if (kind == EV_WRITE && last_kind == EV_WRITE && last_wd == ev->wd && !strcmp(last_name, ev->name)) continue;
      last_kind = kind;
      last_wd = ev->wd;
      snprintf(last_name, sizeof last_name, "%s", ev->name);
      char name[PATH_MAX];
      snprintf(name, sizeof name, "%s%s%s", rel, *rel ? "/" : "", ev->name);
      if (unnamed_tmpfile(ev, name)) continue;
      uint8_t isdir = !!(ev->mask & IN_ISDIR);
      emit_event(kind, name, isdir);
      if (recursive && isdir && (kind == EV_CREATE || kind == EV_RENAME_TO)) watch_add(name, 1, 1);
    }
    out_flush();
  }
}

void file_main(const struct file_req *r, int exec_w) {
  exec_fd = exec_w;
  umask(022);
  switch (r->op) {
    case OP_STAT: op_stat(r->path); break;
    case OP_LIST: op_list(r->path); break;
    case OP_MKDIR: op_mkdir(r->path, r->flags); break;
    case OP_REMOVE: op_remove(r->path, r->flags); break;
    case OP_RENAME: op_rename(r->path, r->path2 ? r->path2 : "", r->flags); break;
    case OP_READ: op_read(r); break;
    case OP_WRITE: op_write(r); break;
    case OP_WATCH: op_watch(r->path, r->flags); break;
    default:
      errno = ENOSYS;
      fail("file operation", "");
  }
  _exit(0);
}
