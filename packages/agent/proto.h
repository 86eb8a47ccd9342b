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
#define T_FILE 0x08
#define T_LIST 0x09
#define T_ATTACH 0x0a
#define T_DIAL 0x0b
#define T_READ 0x0c
#define T_DESCRIPTORS 0x0d
#define T_FILE_NOW 0x0e
#define T_MOUNT 0x0f

/* Agent -> host. */
#define T_HELLO 0x80
#define T_SPAWNED 0x81
#define T_STDOUT 0x82
#define T_STDERR 0x83
#define T_EXIT 0x84
#define T_ERROR 0x85
#define T_OK 0x86
#define T_PONG 0x87
#define T_STDIN_DROPPED 0x88
#define T_PROCS 0x89

/* TLV tags, scoped by message type. */
#define SPAWN_ARGV 1
#define SPAWN_ENV 2
#define SPAWN_CWD 3
#define SPAWN_USER 4
#define SPAWN_TIMEOUT_MS 5
#define SPAWN_PTY 6
#define SPAWN_FLAGS 7
#define SPAWN_NAME 8
#define SPAWN_FLAG_BACKGROUND 1u
#define SPAWN_FLAG_STDIN_CLOSED 2u
#define SPAWN_FLAG_STDIN_BLOCKING 4u

#define FILE_OP 1
#define FILE_PATH 2
#define FILE_PATH2 3
#define FILE_FLAGS 4
#define FILE_USER 5
#define FILE_DATA 6
#define FILE_FLAG_PARENTS 1u
#define FILE_FLAG_RECURSIVE 2u
#define FILE_FLAG_NO_OVERWRITE 4u
#define FILE_FLAG_DIRECT 8u
enum { OP_STAT = 1, OP_LIST, OP_MKDIR, OP_REMOVE, OP_RENAME, OP_READ, OP_WRITE, OP_WATCH };

/* Records a file helper writes to its stdout (TLV). */
#define REC_ENTRY 1
#define REC_EVENT 2
#define REC_DATA 3
#define ENTRY_NAME 1
#define ENTRY_TYPE 2
#define ENTRY_SIZE 3
#define ENTRY_MODE 4
#define ENTRY_MTIME_MS 5
#define ENTRY_UID 6
#define ENTRY_GID 7
#define ENTRY_TARGET 8
enum { FT_FILE = 0, FT_DIR, FT_SYMLINK, FT_OTHER };
#define EVENT_KIND 1
#define EVENT_NAME 2
#define EVENT_IS_DIR 3
enum { EV_CREATE = 1, EV_WRITE, EV_REMOVE, EV_RENAME_FROM, EV_RENAME_TO, EV_CHMOD };

#define ATTACH_PID 1

#define MOUNT_SOURCE 1
#define MOUNT_TARGET 2
#define MOUNT_FLAGS 3
#define MOUNT_FLAG_READ_ONLY 1u

#define READ_PATH 1
#define READ_MAX (1u << 20)
#define PROCS_ENTRY 1
#define PROC_PID 1
#define PROC_NAME 2
#define PROC_FLAGS 3
#define PROC_EXIT_CODE 4
#define PROC_EXIT_SIGNAL 5
#define PROC_FLAG_PTY 1u
#define PROC_FLAG_ATTACHED 2u
#define PROC_FLAG_EXITED 4u

#define SETENV_SET 1
#define SETENV_UNSET 2
#define SETENV_FLAGS 3
#define SETENV_FLAG_REPLACE 1u

#define HELLO_VERSION 1
#define SPAWNED_PID 1
#define SPAWNED_SIZE 2
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
static inline void put64(uint8_t *p, uint64_t v) {
  put32(p, (uint32_t)v);
  put32(p + 4, (uint32_t)(v >> 32));
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

/* Copies a TLV string into an arena (room for the whole payload plus a NUL per string), NUL-terminated;
   NULL for a string holding a NUL. */
static inline char *arena_str(char **arena, const uint8_t *v, uint32_t len) {
  if (memchr(v, 0, len)) return NULL;
  char *s = *arena;
  memcpy(s, v, len);
  s[len] = 0;
  *arena += len + 1;
  return s;
}

/* Small fixed-size TLV builder for agent replies. */
struct tlv_w {
  uint8_t b[8192]; /* room for a PATH_MAX symlink target */
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
static inline void tlv_put64(struct tlv_w *w, uint16_t tag, uint64_t v) {
  uint8_t b[8];
  put64(b, v);
  tlv_put(w, tag, b, 8);
}

#endif
