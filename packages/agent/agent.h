/* What every unit shares with the main loop: fd watches in its epoll set, the clock, logging, the host socket. */
#ifndef SANDPIT_AGENT_H
#define SANDPIT_AGENT_H

#include <stdint.h>

struct proc;
struct conn;

enum { W_LISTEN = 1, W_SIGNAL, W_CONN, W_STDOUT, W_STDERR, W_STDIN, W_EXEC, W_SUDO_LISTEN, W_SUDO_CLIENT };

/* One fd in the epoll set; an event carries a pointer to it, and kind says whose it is. */
struct watch {
  int kind;
  int fd;
  uint32_t events;
  int registered;
  struct proc *p;
  struct conn *c;
};

void watch_init(struct watch *w, int kind, int fd, struct proc *p);
/* events == 0 unregisters: epoll reports HUP/ERR even when not asked, which would spin a paused fd. */
void watch_update(struct watch *w, uint32_t events);
/* Unregisters and closes the fd; fd becomes -1. */
void watch_close(struct watch *w);

uint64_t now_ms(void);
void logmsg(const char *fmt, ...);
void set_nonblock(int fd);

/* DIAL: in --connect mode, one more connection to the host (a bulk transfer gets its own flow control). */
void handle_dial(struct conn *c, uint32_t id);
/* The host's main connection is gone: in --connect mode it is dialed again shortly. */
void redial_soon(void);

#endif
