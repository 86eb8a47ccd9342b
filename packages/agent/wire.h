/* Framing and the host connections: buffers, frames out, frames in, flow control. */
#ifndef SANDPIT_WIRE_H
#define SANDPIT_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

#define CHUNK 65536
#define BULK_CHUNK (1u << 20) /* file transfers: fewer frames and syscalls (they dominate under gVisor) */
#define OUT_HIGH (4u << 20)  /* pause child pipes above this much unsent output */
#define OUT_LOW (1u << 20)   /* ...and resume below this */

struct buf {
  uint8_t *d;
  size_t off, len, cap;
};

/* Room for n more bytes after the data; 0, or -1 out of memory. */
int buf_reserve(struct buf *b, size_t n);
void buf_consume(struct buf *b, size_t n);
void buf_free(struct buf *b);

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

/* A connection on a connected socket; sends HELLO. NULL (fd closed) when out of memory. */
struct conn *conn_new(int fd);
/* A dropped host takes its foreground processes with it; background ones are detached. */
void conn_close(struct conn *c);
void conn_watch_update(struct conn *c);
void conn_flush(struct conn *c);
void conn_readable(struct conn *c);
/* Writes what every connection has queued, unless it already waits for EPOLLOUT. */
void conns_flush(void);
/* Frees the connections closed since the last sweep. */
void conns_sweep(void);

/* A frame is built in place: frame_start returns room for its payload (NULL: connection gone),
   frame_commit queues it with the length actually used. */
uint8_t *frame_start(struct conn *c, size_t max_payload);
void frame_commit(struct conn *c, uint8_t type, uint32_t id, size_t plen);
void send_frame(struct conn *c, uint8_t type, uint32_t id, const void *p, size_t n);
void send_error(struct conn *c, uint32_t id, int err, const char *fmt, ...);

#endif
