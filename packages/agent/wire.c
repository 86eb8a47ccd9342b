/* Framing and the host connections (PROTOCOL.md): queued output, reading whole frames, flow control. */
#define _GNU_SOURCE
#include "wire.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "procs.h"
#include "proto.h"
#include "requests.h"

#define BUF_KEEP (256u << 10) /* free idle buffers larger than this: idle memory is budgeted */

static struct conn *conns;

int buf_reserve(struct buf *b, size_t n) {
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

void buf_consume(struct buf *b, size_t n) {
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

void buf_free(struct buf *b) {
  free(b->d);
  memset(b, 0, sizeof *b);
}

/* ---- frames out ---- */

uint8_t *frame_start(struct conn *c, size_t max_payload) {
  if (!c || c->dead) return NULL;
  if (buf_reserve(&c->out, HDR + max_payload) < 0) {
    conn_close(c);
    return NULL;
  }
  return c->out.d + c->out.off + c->out.len + HDR;
}

void frame_commit(struct conn *c, uint8_t type, uint32_t id, size_t plen) {
  uint8_t *h = c->out.d + c->out.off + c->out.len;
  put32(h, (uint32_t)(5 + plen));
  h[4] = type;
  put32(h + 5, id);
  c->out.len += HDR + plen;
}

void send_frame(struct conn *c, uint8_t type, uint32_t id, const void *p, size_t n) {
  uint8_t *d = frame_start(c, n);
  if (!d) return;
  if (n) memcpy(d, p, n);
  frame_commit(c, type, id, n);
}

void send_error(struct conn *c, uint32_t id, int err, const char *fmt, ...) {
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

void conn_watch_update(struct conn *c) {
  watch_update(&c->w, c->direct ? 0 : (c->in_paused ? 0 : EPOLLIN) | (c->want_out ? EPOLLOUT : 0));
}

void conn_flush(struct conn *c) {
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

void conns_flush(void) {
  for (struct conn *c = conns; c; c = c->next)
    if (!c->dead && c->out.len && !c->want_out && !c->direct) conn_flush(c);
}

/* ---- frames in ---- */

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

void conn_readable(struct conn *c) {
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

/* ---- connections ---- */

struct conn *conn_new(int fd) {
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

void conn_close(struct conn *c) {
  if (c->dead) return;
  c->dead = 1;
  watch_close(&c->w);
  procs_detach(c);
  if (!c->extra) redial_soon();
}

void conns_sweep(void) {
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
