/*
 * sandpit-agent: runs processes inside a sandbox on behalf of the host.
 * Single-threaded epoll loop; PROTOCOL.md describes the wire format and rules.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "oom-guard.h"
#include "proto.h"
#include "user.h"

extern char **environ;

#define CHUNK 65536
#define BULK_CHUNK (1u << 20) /* file transfers: fewer frames and syscalls (they dominate under gVisor) */
#define OUT_HIGH (4u << 20)  /* pause child pipes above this much unsent output */
#define OUT_LOW (1u << 20)   /* ...and resume below this */
#define STDIN_HIGH (4u << 20) /* stdin backlog per process: above it input is dropped (or, for STDIN_BLOCKING, the connection pauses) */
#define DETACHED_KEEP (64u << 10) /* per stream: tail of a named background process's output kept while no host is attached */
#define EXITED_KEEP 64           /* exited named background processes remembered for a later ATTACH */
#define FILE_PIPE_BYTES (1 << 20) /* file transfers relayed by the agent move 1 MiB per pipe read */
#define DRAIN_GRACE_MS 50     /* after the main child exits, wait this long for pipe EOF */
#define FINAL_DRAIN_MAX (2u << 20)
#define BUF_KEEP (256u << 10) /* free idle buffers larger than this: idle memory is budgeted */
#define REDIAL_MIN_MS 5
#define REDIAL_MAX_MS 500

enum { W_LISTEN = 1, W_SIGNAL, W_CONN, W_STDOUT, W_STDERR, W_STDIN, W_EXEC };
enum { ST_STARTING, ST_RUNNING, ST_FAILED };

struct proc;
struct conn;

struct watch {
  int kind;
  int fd;
  uint32_t events;
  int registered;
  struct proc *p;
  struct conn *c;
};

struct buf {
  uint8_t *d;
  size_t off, len, cap;
};

struct conn {
  struct watch w;
  struct buf in, out;
  int want_out;  /* socket full: waiting for EPOLLOUT */
  int throttled; /* child pipes paused: out buffer above OUT_HIGH */
  int in_paused; /* socket reads paused: a child's stdin backlog is above STDIN_HIGH */
  int dead;
  int extra; /* --connect: dialed on request (DIAL); not redialed when it closes */
  int bulk;  /* carries a file transfer: read in large chunks */
  int direct; /* a file helper owns the socket (direct transfer): neither read nor written here */
  struct conn *next;
};

struct proc {
  struct proc *next;
  struct conn *conn; /* NULL once detached (connection gone) */
  uint32_t id;
  pid_t pid;
  int background, pty, stdin_blocking, file;
  int direct; /* a direct transfer: the helper has the connection to itself while it runs */
  char *name; /* host label: makes the process listable and attachable */
  struct watch out, err, in, exec;
  struct buf inbuf;
  struct buf keep_out, keep_err; /* output while detached (named processes only) */
  int exited;                    /* reaped while detached; waits for ATTACH to collect its status */
  int stdin_close_pending;
  int state;
  int reaped, status, timed_out;
  uint64_t deadline, grace;
  int dead;
};

static int epfd;
static struct watch listen_w = {.kind = W_LISTEN, .fd = -1};
static struct watch signal_w = {.kind = W_SIGNAL, .fd = -1};
static struct conn *conns;
static struct proc *procs;
static char **denv; /* default environment for spawned processes */
static size_t denv_n;
static const char *sock_path;
static int connect_mode;
static uint64_t redial_at;
static unsigned redial_backoff = REDIAL_MIN_MS;
static uint8_t scratch[CHUNK];

static void conn_close(struct conn *c);
static void handle_dial(struct conn *c, uint32_t id);
static int handle_read(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen);
static void conn_update_in(struct conn *c);

static uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void logmsg(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("sandpit-agent: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

static void set_nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

/* events == 0 unregisters: epoll reports HUP/ERR even when not asked, which would spin a paused fd. */
static void watch_update(struct watch *w, uint32_t events) {
  if (w->fd < 0) return;
  if (!events) {
    if (w->registered) epoll_ctl(epfd, EPOLL_CTL_DEL, w->fd, NULL);
    w->registered = 0;
    w->events = 0;
    return;
  }
  if (w->registered && w->events == events) return;
  struct epoll_event ev = {.events = events, .data.ptr = w};
  if (epoll_ctl(epfd, w->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, w->fd, &ev) == 0) {
    w->registered = 1;
    w->events = events;
  }
}

/* Explicit DEL: a pty master is registered twice via dup, so close() alone would not unregister it. */
static void watch_close(struct watch *w) {
  if (w->fd < 0) return;
  watch_update(w, 0);
  close(w->fd);
  w->fd = -1;
}

static int buf_reserve(struct buf *b, size_t n) {
  if (b->off + b->len + n <= b->cap) return 0;
  if (b->off && b->off >= b->len) { /* compaction cost is paid for by the consumed bytes */
    memmove(b->d, b->d + b->off, b->len);
    b->off = 0;
    if (b->len + n <= b->cap) return 0;
  }
  size_t cap = b->cap ? b->cap : 4096;
  while (cap < b->off + b->len + n) cap *= 2;
  uint8_t *d = realloc(b->d, cap);
  if (!d) return -1;
  b->d = d;
  b->cap = cap;
  return 0;
}

static void buf_consume(struct buf *b, size_t n) {
  b->off += n;
  b->len -= n;
  if (b->len) return;
  b->off = 0;
  if (b->cap > BUF_KEEP) {
    free(b->d);
    b->d = NULL;
    b->cap = 0;
  }
}

static void buf_free(struct buf *b) {
  free(b->d);
  memset(b, 0, sizeof *b);
}

/* ---- frames out ---- */

static uint8_t *frame_start(struct conn *c, size_t max_payload) {
  if (!c || c->dead) return NULL;
  if (buf_reserve(&c->out, HDR + max_payload) < 0) {
    conn_close(c);
    return NULL;
  }
  return c->out.d + c->out.off + c->out.len + HDR;
}

static void frame_commit(struct conn *c, uint8_t type, uint32_t id, size_t plen) {
  uint8_t *h = c->out.d + c->out.off + c->out.len;
  put32(h, (uint32_t)(5 + plen));
  h[4] = type;
  put32(h + 5, id);
  c->out.len += HDR + plen;
}

static void send_frame(struct conn *c, uint8_t type, uint32_t id, const void *p, size_t n) {
  uint8_t *d = frame_start(c, n);
  if (!d) return;
  if (n) memcpy(d, p, n);
  frame_commit(c, type, id, n);
}

static void send_error(struct conn *c, uint32_t id, int err, const char *fmt, ...) {
  struct tlv_w w = {.n = 0};
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tlv_put32(&w, ERROR_ERRNO, (uint32_t)err);
  tlv_put(&w, ERROR_MESSAGE, msg, (uint32_t)strlen(msg));
  send_frame(c, T_ERROR, id, w.b, w.n);
}

static void conn_watch_update(struct conn *c) {
  watch_update(&c->w, c->direct ? 0 : (c->in_paused ? 0 : EPOLLIN) | (c->want_out ? EPOLLOUT : 0));
}

static void conn_set_throttle(struct conn *c, int on) {
  if (c->throttled == on) return;
  c->throttled = on;
  for (struct proc *p = procs; p; p = p->next) {
    if (p->dead || p->conn != c) continue;
    watch_update(&p->out, on ? 0 : EPOLLIN);
    watch_update(&p->err, on ? 0 : EPOLLIN);
  }
}

static void conn_flush(struct conn *c) {
  while (c->out.len) {
    ssize_t n = write(c->w.fd, c->out.d + c->out.off, c->out.len);
    if (n > 0) {
      buf_consume(&c->out, (size_t)n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    conn_close(c);
    return;
  }
  c->want_out = c->out.len > 0;
  conn_watch_update(c);
  if (c->throttled && c->out.len < OUT_LOW) conn_set_throttle(c, 0);
}

/* ---- processes ---- */

static struct proc *find_proc(struct conn *c, uint32_t id) {
  for (struct proc *p = procs; p; p = p->next)
    if (!p->dead && p->conn == c && p->id == id) return p;
  return NULL;
}

/* Signals the process group; before the child's setsid() the group does not exist yet. */
static void proc_kill(struct proc *p, int sig) {
  if (kill(-p->pid, sig) < 0 && !p->reaped) kill(p->pid, sig);
}

static void proc_release(struct proc *p) {
  watch_close(&p->out);
  watch_close(&p->err);
  watch_close(&p->in);
  watch_close(&p->exec);
  buf_free(&p->inbuf);
  buf_free(&p->keep_out);
  buf_free(&p->keep_err);
  free(p->name);
  p->name = NULL;
  p->dead = 1;
  conn_update_in(p->conn);
}

static void conn_update_in(struct conn *c) {
  if (!c || c->dead) return;
  int over = 0;
  for (struct proc *p = procs; p && !over; p = p->next)
    if (!p->dead && p->conn == c && p->stdin_blocking && p->inbuf.len > STDIN_HIGH) over = 1;
  if (over != c->in_paused) {
    c->in_paused = over;
    conn_watch_update(c);
  }
}

static void send_exit(struct proc *p) {
  int code = 0, sig = 0;
  if (WIFEXITED(p->status)) {
    code = WEXITSTATUS(p->status);
  } else if (WIFSIGNALED(p->status)) {
    sig = WTERMSIG(p->status);
    code = 128 + sig;
  }
  struct tlv_w w = {.n = 0};
  tlv_put32(&w, EXIT_CODE, (uint32_t)code);
  tlv_put32(&w, EXIT_SIGNAL, (uint32_t)sig);
  uint8_t t = (uint8_t)p->timed_out;
  tlv_put(&w, EXIT_TIMED_OUT, &t, 1);
  send_frame(p->conn, T_EXIT, p->id, w.b, w.n);
}

/* Keeps at most EXITED_KEEP exited detached processes; the oldest (last in the list) go first. */
static void exited_trim(void) {
  unsigned n = 0;
  for (struct proc *p = procs; p; p = p->next)
    if (!p->dead && p->exited && ++n > EXITED_KEEP) proc_release(p);
}

/* EXIT goes out only after the child is reaped and both output streams hit EOF (or the grace ran out). */
static void proc_maybe_finish(struct proc *p) {
  if (p->dead || p->exited || p->state == ST_STARTING || !p->reaped) return;
  if (p->state == ST_RUNNING) {
    if (p->out.fd >= 0 || p->err.fd >= 0) {
      if (!p->grace) p->grace = now_ms() + DRAIN_GRACE_MS;
      return;
    }
    if (!p->conn && p->name) { /* nobody to tell yet: keep the status for ATTACH */
      p->grace = 0;
      p->exited = 1;
      watch_close(&p->in);
      buf_free(&p->inbuf);
      exited_trim();
      return;
    }
    send_exit(p);
  }
  proc_release(p);
}

/* The child closes the CLOEXEC exec pipe by exec'ing (EOF) or writes errno+message into it. */
static void proc_resolve(struct proc *p) {
  if (p->state != ST_STARTING) return;
  struct {
    int32_t err;
    char msg[400];
  } r;
  ssize_t n;
  do n = read(p->exec.fd, &r, sizeof r);
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN) return;
  watch_close(&p->exec);
  /* EOF: exec succeeded; errno 0: a file helper started, followed by a u64 size. */
  if (n == 0 || (n >= 4 && r.err == 0)) {
    p->state = ST_RUNNING;
    if (p->direct) return; /* the helper sent SPAWNED itself, ahead of its data */
    struct tlv_w w = {.n = 0};
    tlv_put32(&w, SPAWNED_PID, (uint32_t)p->pid);
    if (n >= 12) tlv_put(&w, SPAWNED_SIZE, r.msg, 8);
    send_frame(p->conn, T_SPAWNED, p->id, w.b, w.n);
    return;
  }
  p->state = ST_FAILED;
  if (n >= 4) {
    send_error(p->conn, p->id, r.err, "%.*s", (int)(n - 4), r.msg);
  } else {
    send_error(p->conn, p->id, EIO, "spawn failed");
  }
  watch_close(&p->out);
  watch_close(&p->err);
  watch_close(&p->in);
}

/* Appends to a buffer that keeps only its last DETACHED_KEEP bytes. */
static void keep_append(struct buf *b, const uint8_t *d, size_t n) {
  if (n > DETACHED_KEEP) {
    d += n - DETACHED_KEEP;
    n = DETACHED_KEEP;
  }
  if (b->len + n > DETACHED_KEEP) buf_consume(b, b->len + n - DETACHED_KEEP);
  if (buf_reserve(b, n) < 0) return;
  memcpy(b->d + b->off + b->len, d, n);
  b->len += n;
}

/* Returns bytes read, 0 at EOF (watch closed), -1 when nothing is available now. */
static ssize_t pipe_read_once(struct proc *p, struct watch *w) {
  struct conn *c = p->conn;
  size_t want = p->file ? BULK_CHUNK : CHUNK;
  uint8_t *dst = frame_start(c, want);
  if (!dst) {
    c = NULL; /* detached: output is discarded so the process never blocks on a full pipe */
    dst = scratch;
  }
  ssize_t n;
  if (!c) want = CHUNK; /* scratch */
  do n = read(w->fd, dst, want);
  while (n < 0 && errno == EINTR);
  if (n > 0) {
    if (c) frame_commit(c, w->kind == W_STDOUT ? T_STDOUT : T_STDERR, p->id, (size_t)n);
    else if (p->name) keep_append(w->kind == W_STDOUT ? &p->keep_out : &p->keep_err, dst, (size_t)n);
    return n;
  }
  if (n < 0 && errno == EAGAIN) return -1;
  watch_close(w); /* EOF, or EIO from a pty master whose slave side is gone */
  return 0;
}

static void pipe_readable(struct proc *p, struct watch *w) {
  for (int i = 0; i < 4; i++) { /* bounded so one chatty child cannot starve the loop */
    if (p->conn && p->conn->out.len >= OUT_HIGH) {
      conn_set_throttle(p->conn, 1);
      return;
    }
    ssize_t n = pipe_read_once(p, w);
    if (n == 0) proc_maybe_finish(p);
    if (n < (ssize_t)(p->file ? BULK_CHUNK : CHUNK)) return;
  }
}

/* Grace expired: take what is in the pipes now (ignoring backpressure; bounded by pipe capacity). */
static void proc_final_drain(struct proc *p) {
  struct watch *ws[2] = {&p->out, &p->err};
  for (int i = 0; i < 2; i++) {
    size_t total = 0;
    while (ws[i]->fd >= 0 && total < FINAL_DRAIN_MAX) {
      ssize_t n = pipe_read_once(p, ws[i]);
      if (n <= 0) break;
      total += (size_t)n;
    }
    watch_close(ws[i]);
  }
}

static void stdin_flush(struct proc *p) {
  while (p->inbuf.len && p->in.fd >= 0) {
    ssize_t n = write(p->in.fd, p->inbuf.d + p->inbuf.off, p->inbuf.len);
    if (n > 0) {
      buf_consume(&p->inbuf, (size_t)n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      watch_update(&p->in, EPOLLOUT);
      return;
    }
    watch_close(&p->in); /* EPIPE: the reader is gone; later input is dropped */
  }
  if (!p->inbuf.len || p->in.fd < 0) buf_free(&p->inbuf); /* a gone reader's backlog must not keep the connection paused */
  if (p->in.fd >= 0) {
    watch_update(&p->in, 0);
    if (p->stdin_close_pending) watch_close(&p->in);
  }
  conn_update_in(p->conn);
}

/* ---- environment ---- */

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

/* ---- requests ---- */

struct spawn_req {
  char **argv;
  size_t argc;
  char **env;
  size_t envc;
  char *cwd;
  char *user;
  uint32_t timeout_ms;
  int pty;
  uint16_t cols, rows;
  uint32_t flags;
  char *name;
  int is_file;
  struct file_req file;
  char *arena;
};

/* Copies a TLV string into the arena, NUL-terminated; rejects embedded NULs. */
static char *arena_str(char **arena, const uint8_t *v, uint32_t len) {
  if (memchr(v, 0, len)) return NULL;
  char *s = *arena;
  memcpy(s, v, len);
  s[len] = 0;
  *arena += len + 1;
  return s;
}

/* 0: parsed; 1: invalid (answered with an error); -1: malformed frame. */
static int parse_spawn(const uint8_t *pl, size_t plen, struct spawn_req *r) {
  struct tlv_it it = {pl, pl + plen};
  uint16_t tag;
  const uint8_t *v;
  uint32_t len;
  int rc;
  size_t nargv = 0, nenv = 0, nstr = 0;
  memset(r, 0, sizeof *r);
  while ((rc = tlv_next(&it, &tag, &v, &len)) == 1) {
    if (tag == SPAWN_ARGV) nargv++;
    if (tag == SPAWN_ENV) nenv++;
    nstr++;
  }
  if (rc < 0) return -1;
  r->arena = malloc(plen + nstr + 1);
  r->argv = calloc(nargv + 1, sizeof *r->argv);
  r->env = calloc(nenv + 1, sizeof *r->env);
  if (!r->arena || !r->argv || !r->env) return 1;
  char *a = r->arena;
  it.p = pl;
  while (tlv_next(&it, &tag, &v, &len) == 1) {
    char *s = NULL;
    switch (tag) {
      case SPAWN_ARGV:
        if (!(s = r->argv[r->argc++] = arena_str(&a, v, len))) return 1;
        break;
      case SPAWN_ENV:
        if (!(s = arena_str(&a, v, len)) || !strchr(s, '=') || *s == '=') return 1;
        r->env[r->envc++] = s;
        break;
      case SPAWN_CWD:
        if (!(r->cwd = arena_str(&a, v, len))) return 1;
        break;
      case SPAWN_USER:
        if (!(r->user = arena_str(&a, v, len))) return 1;
        break;
      case SPAWN_TIMEOUT_MS:
        if (len != 4) return -1;
        r->timeout_ms = get32(v);
        break;
      case SPAWN_PTY:
        if (len != 4) return -1;
        r->pty = 1;
        r->cols = get16(v);
        r->rows = get16(v + 2);
        break;
      case SPAWN_FLAGS:
        if (len != 4) return -1;
        r->flags = get32(v);
        break;
      case SPAWN_NAME:
        if (!(r->name = arena_str(&a, v, len))) return 1;
        break;
      default: /* unknown tags are skipped so newer hosts can talk to older agents */
        break;
    }
  }
  return r->argc ? 0 : 1;
}

/* A FILE request is a spawn whose child runs a built-in operation instead of exec. Same return codes. */
static int parse_file(const uint8_t *pl, size_t plen, struct spawn_req *r) {
  struct tlv_it it = {pl, pl + plen};
  uint16_t tag;
  const uint8_t *v;
  uint32_t len;
  int rc;
  memset(r, 0, sizeof *r);
  r->is_file = 1;
  while ((rc = tlv_next(&it, &tag, &v, &len)) == 1)
    if ((tag == FILE_OP || tag == FILE_FLAGS) && len != 4) return -1;
  if (rc < 0) return -1;
  r->arena = malloc(plen + 8);
  r->argv = calloc(1, sizeof *r->argv);
  r->env = calloc(1, sizeof *r->env);
  if (!r->arena || !r->argv || !r->env) return 1;
  char *a = r->arena;
  it.p = pl;
  while (tlv_next(&it, &tag, &v, &len) == 1) {
    switch (tag) {
      case FILE_OP: r->file.op = get32(v); break;
      case FILE_FLAGS: r->file.flags = get32(v); break;
      case FILE_PATH:
        if (!len || !(r->file.path = arena_str(&a, v, len))) return 1;
        break;
      case FILE_PATH2:
        if (!len || !(r->file.path2 = arena_str(&a, v, len))) return 1;
        break;
      case FILE_USER:
        if (!(r->user = arena_str(&a, v, len))) return 1;
        break;
      default:
        break;
    }
  }
  if (!r->file.op || !r->file.path || (r->file.op == OP_RENAME && !r->file.path2)) return 1;
  if (r->file.op == OP_WRITE) r->flags |= SPAWN_FLAG_STDIN_BLOCKING;
  else r->flags |= SPAWN_FLAG_STDIN_CLOSED;
  return 0;
}

static void spawn_req_free(struct spawn_req *r) {
  free(r->argv);
  free(r->env);
  free(r->arena);
}

struct child_plan {
  char **argv;
  char **envp;
  const char *cwd;
  int switch_user;
  const struct user_info *u;
  int pty_slave; /* -1 for pipes */
  int in_r, out_w, err_w;
  int exec_w;
  const struct file_req *file; /* run this instead of exec */
};

static void __attribute__((noreturn)) child_fail(int fd, const char *what, const char *arg) {
  struct {
    int32_t err;
    char msg[400];
  } r;
  r.err = errno;
  int n = snprintf(r.msg, sizeof r.msg, "%s%s%s: %s", what, *arg ? " " : "", arg, strerror(r.err));
  if (n < 0) n = 0;
  if (n >= (int)sizeof r.msg) n = sizeof r.msg - 1;
  ssize_t ignored = write(fd, &r, 4 + (size_t)n);
  (void)ignored;
  _exit(127);
}

static void close_from(unsigned lo, unsigned hi) {
  if (lo > hi) return;
  /* gVisor rejects a last fd above INT_MAX with EINVAL (Linux accepts ~0u). */
  if (hi > INT_MAX) hi = INT_MAX;
  if (close_range(lo, hi, 0) == 0) return;
  struct rlimit rl; /* close_range missing (old kernel or sandbox runtime): close one by one */
  unsigned max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (unsigned)rl.rlim_cur : 65536;
  for (unsigned fd = lo; fd <= hi && fd < max; fd++) close((int)fd);
}

static void __attribute__((noreturn)) child_run(const struct child_plan *s) {
  sigset_t none;
  sigemptyset(&none);
  /* SIG_IGN survives exec. SIGPIPE is the only disposition the agent sets (main reset the rest),
     and one call instead of 64 matters: each costs about 75 us under gVisor. */
  signal(SIGPIPE, SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (setsid() < 0) child_fail(s->exec_w, "setsid", "");
  if (s->pty_slave >= 0) {
    if (ioctl(s->pty_slave, TIOCSCTTY, 0) < 0) child_fail(s->exec_w, "ioctl", "TIOCSCTTY");
    for (int fd = 0; fd < 3; fd++) dup2(s->pty_slave, fd);
  } else {
    dup2(s->in_r, 0);
    dup2(s->out_w, 1);
    dup2(s->err_w, 2);
  }
  /* Everything else is closed: the exec pipe stays, and a direct transfer's connection. */
  int keep[2] = {s->exec_w, s->file ? s->file->conn_fd : -1};
  if (keep[1] >= 0 && keep[1] < keep[0]) keep[1] = keep[0], keep[0] = s->file->conn_fd;
  unsigned next = 3;
  for (int i = 0; i < 2; i++) {
    if (keep[i] < (int)next) continue;
    close_from(next, (unsigned)keep[i] - 1);
    next = (unsigned)keep[i] + 1;
  }
  close_from(next, ~0u);
  if (s->switch_user) {
    if (setgroups((size_t)s->u->ngroups, s->u->groups) < 0) child_fail(s->exec_w, "setgroups", "");
    if (setgid(s->u->gid) < 0) child_fail(s->exec_w, "setgid", "");
    if (setuid(s->u->uid) < 0) child_fail(s->exec_w, "setuid", "");
  }
  if (s->file) {
    if (chdir(s->cwd) < 0 && chdir("/") < 0) child_fail(s->exec_w, "chdir", "/");
    file_main(s->file, s->exec_w);
  }
  if (chdir(s->cwd) < 0) child_fail(s->exec_w, "chdir", s->cwd);
  environ = s->envp; /* execvp searches the PATH of environ */
  execvp(s->argv[0], s->argv);
  child_fail(s->exec_w, "exec", s->argv[0]);
}

/* Opens a pty pair; TIOCGPTPEER avoids resolving /dev/pts paths, with ptsname as the fallback. */
static int open_pty(int *master, int *slave) {
  int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0) return -1;
  int unlock = 0;
  if (ioctl(m, TIOCSPTLCK, &unlock) < 0) goto fail;
  int s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0) {
    char name[64];
    if (ptsname_r(m, name, sizeof name)) goto fail;
    s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (s < 0) goto fail;
  }
  *master = m;
  *slave = s;
  return 0;
fail:;
  int e = errno;
  close(m);
  errno = e;
  return -1;
}

static void close_fds(int *fds, int n) {
  for (int i = 0; i < n; i++)
    if (fds[i] >= 0) close(fds[i]);
}

static void watch_init(struct watch *w, int kind, int fd, struct proc *p) {
  memset(w, 0, sizeof *w);
  w->kind = kind;
  w->fd = fd;
  w->p = p;
}

/*
 * A direct transfer needs the connection to itself: no other process on it, nothing left to send
 * (the helper writes to the socket itself) and nothing read behind the request (the helper reads
 * the socket from there). Otherwise the request runs the ordinary way, which looks the same to the host.
 */
static int direct_ok(struct conn *c, const uint8_t *pl, size_t plen) {
  if (c->out.len || pl + plen != c->in.d + c->in.off + c->in.len) return 0;
  for (struct proc *p = procs; p; p = p->next)
    if (!p->dead && p->conn == c) return 0;
  return 1;
}

/* The helper of a direct transfer is gone: the connection is the agent's again. One that was killed
   may have stopped inside a frame, so the stream can no longer be trusted: the connection is closed. */
static void direct_end(struct proc *p) {
  struct conn *c = p->conn;
  if (!p->direct || !c || c->dead) return;
  c->direct = 0;
  if (WIFSIGNALED(p->status)) {
    conn_close(c);
    return;
  }
  set_nonblock(c->w.fd); /* the helper made it blocking */
  conn_watch_update(c);
}

static int handle_spawn(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen, int is_file) {
  struct spawn_req r;
  int rc = is_file ? parse_file(pl, plen, &r) : parse_spawn(pl, plen, &r);
  if (rc < 0) {
    spawn_req_free(&r);
    return -1;
  }
  /* fds: 0 in_r 1 in_w 2 out_r 3 out_w 4 err_r 5 err_w 6 exec_r 7 exec_w 8 master 9 slave 10 master dup */
  int fds[11];
  for (int i = 0; i < 11; i++) fds[i] = -1;
  char **envp = NULL;
  char home[PATH_MAX + 8], user[300], logname[300], shell[PATH_MAX + 8];
  static struct user_info u;
  const char *uname = r.user && *r.user ? r.user : "user";

  if (rc) {
    send_error(c, id, EINVAL, is_file ? "invalid file request" : "invalid spawn request");
    goto out;
  }
  if (find_proc(c, id)) {
    send_error(c, id, EEXIST, "request id %u is in use", id);
    goto out;
  }
  if (user_lookup(uname, &u) < 0) {
    int e = errno;
    send_error(c, id, e, e == ENOENT ? "user %s: no such user" : "user %s: %s", uname, strerror(e));
    goto out;
  }
  int switch_user = geteuid() == 0;
  if (!switch_user && u.uid != geteuid()) {
    send_error(c, id, EPERM, "user %s: the agent does not run as root", uname);
    goto out;
  }

  /* Environment: sandbox default, then the user's identity, then the request; PATH/TERM when absent. */
  envp = calloc(denv_n + r.envc + 8, sizeof *envp);
  if (!envp) {
    send_error(c, id, ENOMEM, "out of memory");
    goto out;
  }
  size_t en = 0;
  for (size_t i = 0; i < denv_n; i++) env_put(envp, &en, denv[i]);
  snprintf(home, sizeof home, "HOME=%s", u.home);
  snprintf(user, sizeof user, "USER=%s", uname);
  snprintf(logname, sizeof logname, "LOGNAME=%s", uname);
  snprintf(shell, sizeof shell, "SHELL=%s", u.shell);
  env_put(envp, &en, home);
  env_put(envp, &en, user);
  env_put(envp, &en, logname);
  env_put(envp, &en, shell);
  for (size_t i = 0; i < r.envc; i++) env_put(envp, &en, r.env[i]);
  if (env_find(envp, en, "PATH=") < 0)
    env_put(envp, &en, "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
  if (r.pty && env_find(envp, en, "TERM=") < 0) env_put(envp, &en, "TERM=xterm-256color");

  if (pipe2(fds + 6, O_CLOEXEC) < 0) goto sys_fail;
  if (r.pty) {
    if (open_pty(&fds[8], &fds[9]) < 0) goto sys_fail;
    struct winsize ws = {.ws_row = r.rows, .ws_col = r.cols};
    ioctl(fds[8], TIOCSWINSZ, &ws);
    if (switch_user && fchown(fds[9], u.uid, (gid_t)-1) == 0) fchmod(fds[9], 0620);
    if ((fds[10] = fcntl(fds[8], F_DUPFD_CLOEXEC, 3)) < 0) goto sys_fail;
    set_nonblock(fds[8]);
  } else {
    if (pipe2(fds, O_CLOEXEC) < 0 || pipe2(fds + 2, O_CLOEXEC) < 0 || pipe2(fds + 4, O_CLOEXEC) < 0)
      goto sys_fail;
    set_nonblock(fds[1]);
    set_nonblock(fds[2]);
    set_nonblock(fds[4]);
    if (r.is_file) { /* fewer, larger wakeups for bulk data */
      fcntl(fds[0], F_SETPIPE_SZ, FILE_PIPE_BYTES);
      fcntl(fds[2], F_SETPIPE_SZ, FILE_PIPE_BYTES);
    }
  }
  set_nonblock(fds[6]);
  if (r.is_file) {
    r.file.conn_fd = -1;
    if ((r.file.flags & FILE_FLAG_DIRECT) && (r.file.op == OP_READ || r.file.op == OP_WRITE) && direct_ok(c, pl, plen)) {
      r.file.conn_fd = c->w.fd;
      r.file.id = id;
    }
  }

  struct child_plan plan = {
      .argv = r.argv,
      .envp = envp,
      .cwd = r.cwd && *r.cwd ? r.cwd : u.home,
      .switch_user = switch_user,
      .u = &u,
      .pty_slave = fds[9],
      .in_r = fds[0],
      .out_w = fds[3],
      .err_w = fds[5],
      .exec_w = fds[7],
      .file = r.is_file ? &r.file : NULL,
  };
  pid_t pid = fork();
  if (pid < 0) goto sys_fail;
  if (pid == 0) child_run(&plan);

  struct proc *p = calloc(1, sizeof *p);
  if (!p) { /* cannot track it: do not leave it running untracked */
    kill(pid, SIGKILL);
    if (r.is_file && r.file.conn_fd >= 0) conn_close(c); /* it may have taken the connection already */
    else send_error(c, id, ENOMEM, "out of memory");
    goto out;
  }
  p->conn = c;
  p->id = id;
  p->pid = pid;
  p->background = !!(r.flags & SPAWN_FLAG_BACKGROUND);
  p->stdin_blocking = !!(r.flags & SPAWN_FLAG_STDIN_BLOCKING);
  p->file = r.is_file;
  if (r.is_file && r.file.op == OP_WRITE) c->bulk = 1;
  if (r.is_file && r.file.conn_fd >= 0) {
    p->direct = c->direct = 1;
    conn_watch_update(c);
  }
  p->pty = r.pty;
  if (r.name && !(p->name = strdup(r.name))) {
    kill(pid, SIGKILL);
    free(p);
    send_error(c, id, ENOMEM, "out of memory");
    goto out;
  }
  p->state = ST_STARTING;
  if (r.timeout_ms) p->deadline = now_ms() + r.timeout_ms;
  if (r.pty) {
    watch_init(&p->out, W_STDOUT, fds[8], p);
    watch_init(&p->err, W_STDERR, -1, p);
    watch_init(&p->in, W_STDIN, fds[10], p);
    fds[8] = fds[10] = -1;
  } else {
    watch_init(&p->out, W_STDOUT, fds[2], p);
    watch_init(&p->err, W_STDERR, fds[4], p);
    watch_init(&p->in, W_STDIN, fds[1], p);
    fds[1] = fds[2] = fds[4] = -1;
    if (r.flags & SPAWN_FLAG_STDIN_CLOSED) watch_close(&p->in);
  }
  watch_init(&p->exec, W_EXEC, fds[6], p);
  fds[6] = -1;
  p->next = procs;
  procs = p;
  watch_update(&p->exec, EPOLLIN);
  watch_update(&p->out, c->throttled ? 0 : EPOLLIN);
  watch_update(&p->err, c->throttled ? 0 : EPOLLIN);
  goto out;

sys_fail:
  send_error(c, id, errno, "spawn: %s", strerror(errno));
out:
  close_fds(fds, 11);
  free(envp);
  spawn_req_free(&r);
  return 0;
}

static int handle_set_env(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen) {
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

/*
 * Queues input for a process. A process that does not read its stdin must not stall the other
 * processes of the connection, so past STDIN_HIGH of backlog its input is dropped and the host is
 * told (STDIN_DROPPED); only STDIN_BLOCKING processes (uploads on their own connection) pause reads.
 */
static void stdin_push(struct proc *p, const uint8_t *d, size_t n) {
  if (!p->stdin_blocking && p->inbuf.len + n > STDIN_HIGH) {
    uint8_t b[4];
    put32(b, (uint32_t)n);
    send_frame(p->conn, T_STDIN_DROPPED, p->id, b, 4);
    return;
  }
  if (!p->inbuf.len) { /* the common case: straight into the pipe, no copy into the backlog */
    ssize_t k;
    do k = write(p->in.fd, d, n);
    while (k < 0 && errno == EINTR);
    if (k > 0) {
      d += k;
      n -= (size_t)k;
    } else if (k < 0 && errno != EAGAIN) {
      watch_close(&p->in); /* EPIPE: the reader is gone; later input is dropped */
      return;
    }
    if (!n) return;
  }
  if (buf_reserve(&p->inbuf, n) < 0) {
    send_error(p->conn, p->id, ENOMEM, "out of memory for stdin");
    return;
  }
  memcpy(p->inbuf.d + p->inbuf.off + p->inbuf.len, d, n);
  p->inbuf.len += n;
  stdin_flush(p);
}

/* PROCS: every named process, running or exited while detached. */
static void send_procs(struct conn *c, uint32_t id) {
  size_t need = 0;
  for (struct proc *p = procs; p; p = p->next)
    if (!p->dead && p->name && p->state == ST_RUNNING) need += 6 + 6 * 5 + 4 * 4 + strlen(p->name);
  if (need > MAX_FRAME) {
    send_error(c, id, E2BIG, "too many processes to list");
    return;
  }
  uint8_t *d = frame_start(c, need);
  if (!d) return;
  size_t n = 0;
  for (struct proc *p = procs; p; p = p->next) {
    if (p->dead || !p->name || p->state != ST_RUNNING) continue;
    size_t nl = strlen(p->name), start = n;
    n += 6;
    uint32_t flags = (p->pty ? PROC_FLAG_PTY : 0) | (p->conn ? PROC_FLAG_ATTACHED : 0) | (p->exited ? PROC_FLAG_EXITED : 0);
    uint32_t vals[4] = {(uint32_t)p->pid, flags, 0, 0};
    uint16_t tags[4] = {PROC_PID, PROC_FLAGS, PROC_EXIT_CODE, PROC_EXIT_SIGNAL};
    if (p->exited) {
      vals[2] = WIFSIGNALED(p->status) ? 128 + (uint32_t)WTERMSIG(p->status) : (uint32_t)WEXITSTATUS(p->status);
      vals[3] = WIFSIGNALED(p->status) ? (uint32_t)WTERMSIG(p->status) : 0;
    }
    for (int i = 0; i < (p->exited ? 4 : 2); i++) {
      put16(d + n, tags[i]);
      put32(d + n + 2, 4);
      put32(d + n + 6, vals[i]);
      n += 10;
    }
    put16(d + n, PROC_NAME);
    put32(d + n + 2, (uint32_t)nl);
    memcpy(d + n + 6, p->name, nl);
    n += 6 + nl;
    put16(d + start, PROCS_ENTRY);
    put32(d + start + 2, (uint32_t)(n - start - 6));
  }
  frame_commit(c, T_PROCS, id, n);
}

static void send_kept(struct conn *c, uint32_t id, uint8_t type, struct buf *b) {
  for (size_t off = 0; off < b->len; off += CHUNK) {
    size_t k = b->len - off < CHUNK ? b->len - off : CHUNK;
    send_frame(c, type, id, b->d + b->off + off, k);
  }
  buf_free(b);
}

/* Takes over a detached named process under a new id: SPAWNED, the output kept meanwhile, then live. */
static int handle_attach(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen) {
  struct tlv_it it = {pl, pl + plen};
  uint16_t tag;
  const uint8_t *v;
  uint32_t len;
  int rc;
  pid_t pid = 0;
  while ((rc = tlv_next(&it, &tag, &v, &len)) == 1) {
    if (tag != ATTACH_PID) continue;
    if (len != 4) return -1;
    pid = (pid_t)get32(v);
  }
  if (rc < 0) return -1;
  if (find_proc(c, id)) {
    send_error(c, id, EEXIST, "request id %u is in use", id);
    return 0;
  }
  struct proc *p = NULL;
  for (struct proc *q = procs; q && !p; q = q->next)
    if (!q->dead && q->name && q->state == ST_RUNNING && q->pid == pid) p = q;
  if (!p) {
    send_error(c, id, ESRCH, "no attachable process %d", (int)pid);
    return 0;
  }
  if (p->conn) {
    send_error(c, id, EBUSY, "process %d is attached to another connection", (int)pid);
    return 0;
  }
  p->conn = c;
  p->id = id;
  struct tlv_w w = {.n = 0};
  tlv_put32(&w, SPAWNED_PID, (uint32_t)p->pid);
  send_frame(c, T_SPAWNED, id, w.b, w.n);
  send_kept(c, id, T_STDOUT, &p->keep_out);
  send_kept(c, id, T_STDERR, &p->keep_err);
  if (p->exited) {
    send_exit(p);
    proc_release(p);
    return 0;
  }
  watch_update(&p->out, c->throttled ? 0 : EPOLLIN);
  watch_update(&p->err, c->throttled ? 0 : EPOLLIN);
  return 0;
}

/* 0: handled; -1: malformed, drop the connection. */
static int handle_frame(struct conn *c, uint8_t type, uint32_t id, const uint8_t *pl, size_t plen) {
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
      if (p && p->pty && p->out.fd >= 0) {
        struct winsize ws = {.ws_col = get16(pl), .ws_row = get16(pl + 2)};
        ioctl(p->out.fd, TIOCSWINSZ, &ws);
      }
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

static int process_frames(struct conn *c) {
  while (c->in.len >= 4 && !c->dead && !c->direct) {
    const uint8_t *h = c->in.d + c->in.off;
    uint32_t flen = get32(h);
    if (flen < 5 || flen > MAX_FRAME + 5) return -1;
    if (c->in.len < 4 + (size_t)flen) {
      return buf_reserve(&c->in, 4 + (size_t)flen - c->in.len);
    }
    if (handle_frame(c, h[4], get32(h + 5), h + HDR, flen - 5) < 0) return -1;
    buf_consume(&c->in, 4 + (size_t)flen);
  }
  return 0;
}

/* ---- connections ---- */

static struct conn *conn_new(int fd) {
  struct conn *c = calloc(1, sizeof *c);
  if (!c) {
    close(fd);
    return NULL;
  }
  watch_init(&c->w, W_CONN, fd, NULL);
  c->w.c = c;
  c->next = conns;
  conns = c;
  conn_watch_update(c);
  struct tlv_w w = {.n = 0};
  tlv_put32(&w, HELLO_VERSION, PROTO_VERSION);
  send_frame(c, T_HELLO, 0, w.b, w.n);
  return c;
}

/* A dropped host takes its foreground processes with it; background ones are detached. */
static void conn_close(struct conn *c) {
  if (c->dead) return;
  c->dead = 1;
  watch_close(&c->w);
  for (struct proc *p = procs; p; p = p->next) {
    if (p->dead || p->conn != c) continue;
    p->conn = NULL;
    buf_free(&p->inbuf);
    /* A named background process may be attached again later, and its input resumes then. */
    if (!(p->background && p->name)) watch_close(&p->in);
    else watch_update(&p->in, 0);
    watch_update(&p->out, EPOLLIN);
    watch_update(&p->err, EPOLLIN);
    if (!p->background) proc_kill(p, SIGKILL);
  }
  if (connect_mode && !c->extra) redial_at = now_ms() + REDIAL_MIN_MS;
}

static void conn_readable(struct conn *c) {
  for (int i = 0; i < 4 && !c->dead && !c->in_paused && !c->direct; i++) {
    if (buf_reserve(&c->in, c->bulk ? BULK_CHUNK : CHUNK) < 0) {
      conn_close(c);
      return;
    }
    size_t room = c->in.cap - c->in.off - c->in.len;
    ssize_t n = read(c->w.fd, c->in.d + c->in.off + c->in.len, room);
    if (n > 0) {
      c->in.len += (size_t)n;
      if (process_frames(c) < 0) {
        conn_close(c);
        return;
      }
      if ((size_t)n < room) return;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    conn_close(c);
    return;
  }
}

static void accept_all(void) {
  for (;;) {
    int fd = accept4(listen_w.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      conn_new(fd);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno != EAGAIN) logmsg("accept: %s", strerror(errno));
    return;
  }
}

static int unix_addr(struct sockaddr_un *a, const char *path) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  if (strlen(path) >= sizeof a->sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(a->sun_path, path);
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
  while ((rc = tlv_next(&it, &tag, &v, &len)) == 1) {
    if (tag != READ_PATH) continue;
    if (len >= sizeof path || memchr(v, 0, len)) return -1;
    memcpy(path, v, len);
    path[len] = 0;
  }
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

/* DIAL: in --connect mode, one more connection to the host (a bulk transfer gets its own flow control). */
static void handle_dial(struct conn *c, uint32_t id) {
  struct sockaddr_un a;
  if (!connect_mode) {
    send_error(c, id, EOPNOTSUPP, "the agent listens; connect to its socket instead");
    return;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0 || unix_addr(&a, sock_path) < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    send_error(c, id, e, "dial %s: %s", sock_path, strerror(e));
    return;
  }
  struct conn *n = conn_new(fd);
  if (n) n->extra = 1;
  send_frame(c, T_OK, id, NULL, 0);
}

static void dial(void) {
  struct sockaddr_un a;
  redial_at = 0;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd >= 0 && unix_addr(&a, sock_path) == 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
    redial_backoff = REDIAL_MIN_MS;
    conn_new(fd);
    return;
  }
  if (fd >= 0) close(fd);
  redial_at = now_ms() + redial_backoff;
  redial_backoff = redial_backoff * 2 > REDIAL_MAX_MS ? REDIAL_MAX_MS : redial_backoff * 2;
}

static int listen_on(const char *path) {
  struct sockaddr_un a;
  if (unix_addr(&a, path) < 0) return -1;
  char dir[sizeof a.sun_path];
  strcpy(dir, path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    *slash = 0;
    mkdir(dir, 0755); /* /run/sandpit may not exist in a fresh template */
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  unlink(path);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || chmod(path, 0600) < 0 || listen(fd, 128) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* ---- loop ---- */

static void shutdown_all(void) {
  for (struct proc *p = procs; p; p = p->next)
    if (!p->dead) proc_kill(p, SIGKILL);
  if (!connect_mode) unlink(sock_path);
  /* Reap what was just killed so no zombie is left to a slow reaper on the host (bounded wait). */
  for (int i = 0; i < 200 && (waitpid(-1, NULL, WNOHANG) >= 0 || errno != ECHILD); i++) usleep(1000);
  exit(0);
}

static void reap_children(void) {
  int st;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
    for (struct proc *p = procs; p; p = p->next) {
      if (p->dead || p->reaped || p->pid != pid) continue;
      p->reaped = 1;
      p->status = st;
      p->deadline = 0;
      direct_end(p);
      proc_resolve(p);
      proc_maybe_finish(p);
      break;
    }
  }
}

static void on_signal(void) {
  struct signalfd_siginfo si;
  while (read(signal_w.fd, &si, sizeof si) == (ssize_t)sizeof si)
    if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) shutdown_all();
  reap_children();
}

static int next_timeout(void) {
  uint64_t t = UINT64_MAX;
  for (struct proc *p = procs; p; p = p->next) {
    if (p->dead) continue;
    if (p->deadline && p->deadline < t) t = p->deadline;
    if (p->grace && p->grace < t) t = p->grace;
  }
  if (redial_at && redial_at < t) t = redial_at;
  if (t == UINT64_MAX) return -1;
  uint64_t now = now_ms();
  return t <= now ? 0 : (t - now > INT_MAX ? INT_MAX : (int)(t - now));
}

static void run_timers(void) {
  uint64_t now = now_ms();
  for (struct proc *p = procs; p; p = p->next) {
    if (p->dead) continue;
    if (p->deadline && now >= p->deadline) {
      p->deadline = 0;
      p->timed_out = 1;
      proc_kill(p, SIGKILL);
    }
    if (p->grace && now >= p->grace) {
      proc_final_drain(p);
      proc_maybe_finish(p);
    }
  }
  if (redial_at && now >= redial_at) dial();
}

/* Frees what was closed during this iteration; deferred so no event in the batch sees freed memory. */
static void sweep(void) {
  for (struct proc **pp = &procs; *pp;) {
    struct proc *p = *pp;
    if (p->dead) {
      *pp = p->next;
      free(p);
    } else {
      pp = &p->next;
    }
  }
  for (struct conn **cp = &conns; *cp;) {
    struct conn *c = *cp;
    if (c->dead) {
      *cp = c->next;
      buf_free(&c->in);
      buf_free(&c->out);
      free(c);
    } else {
      cp = &c->next;
    }
  }
}

static void dispatch(struct watch *w, uint32_t ev) {
  if (w->fd < 0) return;
  struct proc *p = w->p;
  switch (w->kind) {
    case W_LISTEN:
      accept_all();
      break;
    case W_SIGNAL:
      on_signal();
      break;
    case W_CONN:
      if (ev & EPOLLOUT) conn_flush(w->c);
      if (!w->c->dead && (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))) conn_readable(w->c);
      break;
    case W_STDOUT:
    case W_STDERR:
      proc_resolve(p); /* exec success closes the exec pipe before any output exists: report it first */
      if (w->fd >= 0) pipe_readable(p, w);
      break;
    case W_STDIN:
      stdin_flush(p);
      break;
    case W_EXEC:
      proc_resolve(p);
      proc_maybe_finish(p);
      break;
  }
}

static void usage(void) {
  fputs("usage: sandpit-agent --listen PATH | --connect PATH [--oom-guard]\n", stderr);
  exit(2);
}

int main(int argc, char **argv) {
  if (argc != 3 && !(argc == 4 && !strcmp(argv[3], "--oom-guard"))) usage();
  if (!strcmp(argv[1], "--listen")) connect_mode = 0;
  else if (!strcmp(argv[1], "--connect")) connect_mode = 1;
  else usage();
  sock_path = argv[2];

  /* As PID 1 the standard fds may be closed; keep 0-2 taken so pipes never land there. */
  for (int fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0) open("/", O_RDONLY);

  /* Whatever started us may have left signals ignored; children then need to reset only SIGPIPE. */
  for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
  signal(SIGPIPE, SIG_IGN);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  /* On the host (tests) orphaned grandchildren must come back to us for reaping, as they do to PID 1. */
  prctl(PR_SET_CHILD_SUBREAPER, 1);

  for (char **e = environ; *e; e++) denv_n++;
  denv = calloc(denv_n + 1, sizeof *denv);
  if (!denv) return 1;
  for (size_t i = 0; i < denv_n; i++)
    if (!(denv[i] = strdup(environ[i]))) return 1;

  epfd = epoll_create1(EPOLL_CLOEXEC);
  signal_w.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (epfd < 0 || signal_w.fd < 0) {
    logmsg("epoll/signalfd: %s", strerror(errno));
    return 1;
  }
  watch_update(&signal_w, EPOLLIN);
  if (argc == 4) {
    int err = oom_guard_start();
    if (err) logmsg("oom guard: %s", strerror(err));
  }
  if (connect_mode) {
    dial();
  } else {
    listen_w.fd = listen_on(sock_path);
    if (listen_w.fd < 0) {
      logmsg("listen %s: %s", sock_path, strerror(errno));
      return 1;
    }
    watch_update(&listen_w, EPOLLIN);
  }

  struct epoll_event evs[64];
  for (;;) {
    /* Output produced anywhere (events, timers, the first dial) is written once per iteration. */
    for (struct conn *c = conns; c; c = c->next)
      if (!c->dead && c->out.len && !c->want_out && !c->direct) conn_flush(c);
    sweep();
    int n = epoll_wait(epfd, evs, 64, next_timeout());
    if (n < 0 && errno != EINTR) {
      logmsg("epoll_wait: %s", strerror(errno));
      return 1;
    }
    for (int i = 0; i < n; i++) dispatch(evs[i].data.ptr, evs[i].events);
    run_timers();
  }
}
