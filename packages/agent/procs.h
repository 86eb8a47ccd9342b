/*
 * The process table: every spawned process and file helper, from SPAWNED to EXIT. Relays output
 * (kept while a named background process is detached) and stdin, enforces timeouts, and answers
 * LIST and ATTACH.
 */
#ifndef SANDPIT_PROCS_H
#define SANDPIT_PROCS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent.h"
#include "wire.h"

enum { ST_STARTING, ST_RUNNING, ST_FAILED };

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

/* Takes a freshly forked process (state ST_STARTING, watches set) into the table. */
void procs_add(struct proc *p);
/* The live process a connection knows under id, or NULL. */
struct proc *find_proc(struct conn *c, uint32_t id);
/* Signals the process group; before the child's setsid() the group does not exist yet. */
void proc_kill(struct proc *p, int sig);

/* The exec pipe said how the start went: SPAWNED or ERROR. */
void proc_resolve(struct proc *p);
/* EXIT goes out only after the child is reaped and both output streams hit EOF (or the grace ran out). */
void proc_maybe_finish(struct proc *p);
void pipe_readable(struct proc *p, struct watch *w);
void stdin_push(struct proc *p, const uint8_t *d, size_t n);
void stdin_flush(struct proc *p);

/* LIST: every named process, running or exited while detached. */
void send_procs(struct conn *c, uint32_t id);
/* ATTACH: takes over a detached named process under a new id. Same return codes as handle_frame. */
int handle_attach(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen);

/* A direct transfer may take this connection (PROTOCOL.md, File operations); pl is the FILE request. */
int direct_ok(struct conn *c, const uint8_t *pl, size_t plen);

/* What a connection's state means for its processes. */
void conn_set_throttle(struct conn *c, int on);
void conn_update_in(struct conn *c);
void procs_detach(struct conn *c);

/* For the loop: SIGCHLD, timers, shutdown, freeing. */
void reap_children(void);
/* The earliest deadline or drain grace, UINT64_MAX for none. */
uint64_t procs_next_timer(void);
void procs_run_timers(uint64_t now);
void procs_kill_all(void);
void procs_sweep(void);

#endif
