/* The process table (procs.h); PROTOCOL.md says when SPAWNED, output, EXIT and STDIN_DROPPED go out. */
#define _GNU_SOURCE
#include "procs.h"
#include "sudo.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proto.h"

#define STDIN_HIGH (4u << 20) /* stdin backlog per process: above it input is dropped (or, for STDIN_BLOCKING, the connection pauses) */
#define DETACHED_KEEP (64u << 10) /* per stream: tail of a named background process's output kept while no host is attached */
#define EXITED_KEEP 64           /* exited named background processes remembered for a later ATTACH */
#define DRAIN_GRACE_MS 50     /* after the main child exits, wait this long for pipe EOF */
#define FINAL_DRAIN_MAX (2u << 20)

static struct proc *procs;
static uint8_t scratch[CHUNK];

void procs_add(struct proc *p) {
  p->next = procs;
  procs = p;
}

struct proc *find_proc(struct conn *c, uint32_t id) {
  for (struct proc *p = procs; p; p = p->next)
    if (!p->dead && p->conn == c && p->id == id) return p;
  return NULL;
}

void proc_kill(struct proc *p, int sig) {
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

void conn_update_in(struct conn *c) {
  if (!c || c->dead) return;
  int over = 0;
  for (struct proc *p = procs; p && !over; p = p->next)
    if (!p->dead && p->conn == c && p->stdin_blocking && p->inbuf.len > STDIN_HIGH) over = 1;
  if (over != c->in_paused) {
    c->in_paused = over;
    conn_watch_update(c);
  }
}

void conn_set_throttle(struct conn *c, int on) {
  if (c->throttled == on) return;
  c->throttled = on;
  for (struct proc *p = procs; p; p = p->next) {
    if (p->dead || p->conn != c) continue;
    watch_update(&p->out, on ? 0 : EPOLLIN);
    watch_update(&p->err, on ? 0 : EPOLLIN);
  }
}

/* The connection is gone: its foreground processes are killed, its background ones detached. */
void procs_detach(struct conn *c) {
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

void proc_maybe_finish(struct proc *p) {
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
void proc_resolve(struct proc *p) {
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

void pipe_readable(struct proc *p, struct watch *w) {
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

void stdin_flush(struct proc *p) {
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

/*
 * Queues input for a process. A process that does not read its stdin must not stall the other
 * processes of the connection, so past STDIN_HIGH of backlog its input is dropped and the host is
 * told (STDIN_DROPPED); only STDIN_BLOCKING processes (uploads on their own connection) pause reads.
 */
void stdin_push(struct proc *p, const uint8_t *d, size_t n) {
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

void send_procs(struct conn *c, uint32_t id) {
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

/* SPAWNED, the output kept meanwhile, then live. */
int handle_attach(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen) {
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

/*
 * A direct transfer needs the connection to itself: no other process on it, nothing left to send
 * (the helper writes to the socket itself) and nothing read behind the request (the helper reads
 * the socket from there). Otherwise the request runs the ordinary way, which looks the same to the host.
 */
int direct_ok(struct conn *c, const uint8_t *pl, size_t plen) {
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

/* ---- for the loop ---- */

void reap_children(void) {
  int st;
  pid_t pid;
  while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
    struct proc *p = procs;
    for (; p; p = p->next)
      if (!p->dead && !p->reaped && p->pid == pid) break;
    if (!p) {
      sudo_reaped(pid, st);
      continue;
    }
    p->reaped = 1;
    p->status = st;
    p->deadline = 0;
    direct_end(p);
    proc_resolve(p);
    proc_maybe_finish(p);
  }
}

uint64_t procs_next_timer(void) {
  uint64_t t = UINT64_MAX;
  for (struct proc *p = procs; p; p = p->next) {
    if (p->dead) continue;
    if (p->deadline && p->deadline < t) t = p->deadline;
    if (p->grace && p->grace < t) t = p->grace;
  }
  return t;
}

void procs_run_timers(uint64_t now) {
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
}

void procs_kill_all(void) {
  for (struct proc *p = procs; p; p = p->next)
    if (!p->dead) proc_kill(p, SIGKILL);
}

void procs_sweep(void) {
  for (struct proc **pp = &procs; *pp;) {
    struct proc *p = *pp;
    if (p->dead) {
      *pp = p->next;
      free(p);
    } else {
      pp = &p->next;
    }
  }
}
