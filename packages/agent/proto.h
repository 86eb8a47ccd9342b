/* Wire protocol of sandpit-agent; PROTOCOL.md is the reference. */
#ifndef SANDPIT_PROTO_H
#define SANDPIT_PROTO_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PROTO_VERSION 1

/* Frame: u32 length (of everything after it), u8 type, u32 id, payload. */
#define HDR 9
#define MAX_FRAME (16u << 20)

/* Host -> agent. */
#define T_SPAWN 0x01
#define T_STDIN 0x02
#define T_STDIN_CLOSE 0x03
#define T_SIGNAL 0x04
#define T_RESIZE 0x05
#define T_SET_ENV 0x06
#define T_PING 0x07

/* Agent -> host. */
#define T_HELLO 0x80
#define T_SPAWNED 0x81
#define T_STDOUT 0x82
#define T_STDERR 0x83
#define T_EXIT 0x84
#define T_ERROR 0x85
#define T_OK 0x86
#define T_PONG 0x87

/* TLV tags, scoped by message type. */
#define SPAWN_ARGV 1
#define SPAWN_ENV 2
#define SPAWN_CWD 3
#define SPAWN_USER 4
#define SPAWN_TIMEOUT_MS 5
#define SPAWN_PTY 6
#define SPAWN_FLAGS 7
#define SPAWN_FLAG_BACKGROUND 1u
#define SPAWN_FLAG_STDIN_CLOSED 2u

#define SETENV_SET 1
#define SETENV_UNSET 2
#define SETENV_FLAGS 3
#define SETENV_FLAG_REPLACE 1u

#define HELLO_VERSION 1
#define SPAWNED_PID 1
#define EXIT_CODE 1
#define EXIT_SIGNAL 2
#define EXIT_TIMED_OUT 3
#define ERROR_ERRNO 1
#define ERROR_MESSAGE 2

static inline uint32_t get32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline void put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}
static inline void put16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}

/* TLV entry: u16 tag, u32 length, value. */
struct tlv_it {
  const uint8_t *p, *end;
};
/* 1: an entry, 0: end, -1: malformed. */
static inline int tlv_next(struct tlv_it *it, uint16_t *tag, const uint8_t **val, uint32_t *len) {
  if (it->p == it->end) return 0;
  if ((size_t)(it->end - it->p) < 6) return -1;
  *tag = get16(it->p);
  *len = get32(it->p + 2);
  if ((size_t)(it->end - it->p - 6) < *len) return -1;
  *val = it->p + 6;
  it->p += 6 + *len;
  return 1;
}

/* Small fixed-size TLV builder for agent replies. */
struct tlv_w {
  uint8_t b[1024];
  size_t n;
};
static inline void tlv_put(struct tlv_w *w, uint16_t tag, const void *v, uint32_t len) {
  if (w->n + 6 > sizeof w->b) return;
  if (len > sizeof w->b - w->n - 6) len = (uint32_t)(sizeof w->b - w->n - 6);
  put16(w->b + w->n, tag);
  put32(w->b + w->n + 2, len);
  memcpy(w->b + w->n + 6, v, len);
  w->n += 6 + len;
}
static inline void tlv_put32(struct tlv_w *w, uint16_t tag, uint32_t v) {
  uint8_t b[4];
  put32(b, v);
  tlv_put(w, tag, b, 4);
}

#endif
