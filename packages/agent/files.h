/* File operations, run in a forked helper that already switched to the requesting user. */
#ifndef SANDPIT_FILES_H
#define SANDPIT_FILES_H

#include <stdint.h>

struct file_req {
  uint32_t op;
  const char *path;
  const char *path2;
  uint32_t flags;
};

/*
 * Runs one operation and exits. Before any output exists it reports through exec_w, as a
 * spawned child does: {i32 errno, message} for a failure (-> ERROR), or {i32 0, u64 size}
 * for success (-> SPAWNED). Results then go to fd 1; a failure after that point is a message
 * on fd 2 and the errno as the exit status.
 */
void file_main(const struct file_req *r, int exec_w) __attribute__((noreturn));

#endif
