/* SPAWN and FILE: parse the request, fork, and set the child up (session, fds, user, cwd, environment)
   before it execs or runs the file operation; the new process then belongs to the table (procs.h). */
#ifndef SANDPIT_SPAWN_H
#define SANDPIT_SPAWN_H

#include <stddef.h>
#include <stdint.h>

struct conn;

/* is_file: a FILE request (a file helper instead of exec). Same return codes as handle_frame. */
int handle_spawn(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen, int is_file);

#endif
