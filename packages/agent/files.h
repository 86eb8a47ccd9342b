/* File operations, run in a forked helper that already switched to the requesting user. */
#ifndef SANDPIT_FILES_H
#define SANDPIT_FILES_H

#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

#include "proto.h"

struct file_req {
  uint32_t op;
  const char *path;
  const char *path2;
  uint32_t flags;
  /* Direct transfer (read, write): the helper talks to the host on this connection itself until it
     exits, under the request's id; -1 otherwise. */
  int conn_fd;
  uint32_t id;
  /* FILE_NOW's write: the content, in the request's payload. */
  const uint8_t *data;
  uint32_t data_len;
};

/*
 * Decodes a FILE (or FILE_NOW) request into r and *user (NULL when absent), its strings copied into
 * arena (plen + 8 bytes; NULL after a failed allocation). 0: parsed; 1: invalid (answered with an
 * error: no arena, a missing or empty path, a string holding a NUL); -1: a malformed frame.
 */
int file_req_parse(const uint8_t *pl, size_t plen, struct file_req *r, char **user, char *arena);

/*
 * Runs one operation and exits. Before any output exists it reports through exec_w, as a
 * spawned child does: {i32 errno, message} for a failure (-> ERROR), or {i32 0, u64 size}
 * for success (-> SPAWNED). Results then go to fd 1; a failure after that point is a message
 * on fd 2 and the errno as the exit status. A direct transfer sends SPAWNED and its data frames
 * (read) or takes its STDIN frames (write) on conn_fd itself, and leaves the connection at a frame
 * boundary whenever it exits on its own.
 */
void file_main(const struct file_req *r, int exec_w) __attribute__((noreturn));

/* Shared with the operations the agent runs itself (files-now.c), as whichever user is current. */

/* An upload in progress: an unnamed inode in the target's directory (or a hidden named one). */
struct upload {
  const char *path;
  char dir[PATH_MAX];
  char tmp[PATH_MAX + 256]; /* the directory, a dot, up to 200 bytes of the name and the suffix */
  const char *named; /* tmp, when O_TMPFILE is unsupported */
  int fd;
};
/* 0, or -1 with errno and what failed (what, arg) for the message. */
int upload_open(struct upload *u, const char *path, uint32_t flags, const char **what, const char **arg);
/* Gives the data its name; 0, or -1 with errno (nothing is left behind). Closes the fd either way. */
int upload_commit(struct upload *u);
void upload_abort(struct upload *u);
/* 0, or the errno of the failed write. */
int write_all(int fd, const uint8_t *b, size_t n);
/* Removes a file, a symlink (not its target) or an empty directory, or with recursive a whole tree; 0, or -1 with errno. */
int remove_path(const char *path, int recursive);
/* mkdir -p: 0, or -1 with errno (ENOTDIR when the path is something else). */
int mkdir_p(const char *path);
/* A file's ENTRY record (PROTOCOL.md); name NULL for stat. rel is resolved from dirfd, for a symlink's target. */
void entry_tlv(struct tlv_w *w, const char *name, const struct stat *st, int dirfd, const char *rel);

#endif
