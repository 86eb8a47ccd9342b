/* File operations, run in a forked helper that already switched to the requesting user. */
#ifndef SANDPIT_FILES_H
#define SANDPIT_FILES_H

#include <stdint.h>

struct file_req {
  uint32_t op;
  const char *path;
  const char *path2;
  uint32_t flags;
  /* Direct transfer (read, write): the helper talks to the host on this connection itself until it
     exits, under the request's id; -1 otherwise. */
  int conn_fd;
  uint32_t id;
};

/*
 * Runs one operation and exits. Before any output exists it reports through exec_w, as a
 * spawned child does: {i32 errno, message} for a failure (-> ERROR), or {i32 0, u64 size}
 * for success (-> SPAWNED). Results then go to fd 1; a failure after that point is a message
 * on fd 2 and the errno as the exit status. A direct transfer sends SPAWNED and its data frames
 * (read) or takes its STDIN frames (write) on conn_fd itself, and leaves the connection at a frame
 * boundary whenever it exits on its own.
 */
void file_main(const struct file_req *r, int exec_w) __attribute__((noreturn));

#endif
