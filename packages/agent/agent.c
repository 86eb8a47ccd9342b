/*
 * sandpit-agent: runs processes inside a sandbox on behalf of the host.
 * Single-threaded epoll loop; PROTOCOL.md describes the wire format and rules.
 *
 * This file holds main, the loop and the host socket; the rest, one unit per job:
 *   wire.c      buffers, frames and the host connections (reading, writing, flow control)
 *   requests.c  each request frame routed to its handler; READ
 *   spawn.c     SPAWN and FILE: the request, the fork, the child's setup up to exec
 *   pty.c       pseudo-terminals
 *   procs.c     the process table: output, stdin, exit, timers, LIST and ATTACH
 *   env.c       the default environment (SET_ENV) and each child's
 *   files.c     file operations, in a forked helper
 *   files-now.c FILE_NOW: small file operations run in the loop itself, as the user
 *   user.c      account lookup
 *   oom-guard.c the out-of-memory guard thread
 *   sudo.c      sudo where set-user-ID programs do not work (gVisor), through the agent
 *   screenshot.c --screenshot: a PNG of an Xvfb framebuffer (run as a command, not by the loop)
 */
#define _GNU_SOURCE
#include "agent.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "oom-guard.h"
#include "procs.h"
#include "proto.h"
#include "screenshot.h"
#include "sudo.h"
#include "wire.h"

#define REDIAL_MIN_MS 5
#define REDIAL_MAX_MS 500

static int epfd;
static struct watch listen_w = {.kind = W_LISTEN, .fd = -1};
static struct watch signal_w = {.kind = W_SIGNAL, .fd = -1};
static const char *sock_path;
static int connect_mode;
static uint64_t redial_at;
static unsigned redial_backoff = REDIAL_MIN_MS;

uint64_t now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void logmsg(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("sandpit-agent: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

void set_nonblock(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void watch_init(struct watch *w, int kind, int fd, struct proc *p) {
  memset(w, 0, sizeof *w);
  w->kind = kind;
  w->fd = fd;
  w->p = p;
}

void watch_update(struct watch *w, uint32_t events) {
  if (w->fd < 0) return;
  if (!events) {
    if (w->registered) epoll_ctl(epfd, EPOLL_CTL_DEL, w->fd, NULL);
    w->registered = 0;
    w->events = 0;
    return;
  }
  if (w->registered && w->events == events) return;
  struct epoll_event ev = {.events = events, .data.ptr = w};
  if (epoll_ctl(epfd, w->registered ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, w->fd, &ev) == 0) {
    w->registered = 1;
    w->events = events;
  }
}

/* Explicit DEL: a pty master is registered twice via dup, so close() alone would not unregister it. */
void watch_close(struct watch *w) {
  if (w->fd < 0) return;
  watch_update(w, 0);
  close(w->fd);
  w->fd = -1;
}

/* ---- the host socket ---- */

static void accept_all(void) {
  for (;;) {
    int fd = accept4(listen_w.fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd >= 0) {
      conn_new(fd);
      continue;
    }
    if (errno == EINTR || errno == ECONNABORTED) continue;
    if (errno != EAGAIN) logmsg("accept: %s", strerror(errno));
    return;
  }
}

static int unix_addr(struct sockaddr_un *a, const char *path) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  if (strlen(path) >= sizeof a->sun_path) {
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(a->sun_path, path);
  return 0;
}

void handle_dial(struct conn *c, uint32_t id) {
  struct sockaddr_un a;
  if (!connect_mode) {
    send_error(c, id, EOPNOTSUPP, "the agent listens; connect to its socket instead");
    return;
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0 || unix_addr(&a, sock_path) < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    send_error(c, id, e, "dial %s: %s", sock_path, strerror(e));
    return;
  }
  struct conn *n = conn_new(fd);
  if (n) n->extra = 1;
  send_frame(c, T_OK, id, NULL, 0);
}

static void dial(void) {
  struct sockaddr_un a;
  redial_at = 0;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd >= 0 && unix_addr(&a, sock_path) == 0 && connect(fd, (struct sockaddr *)&a, sizeof a) == 0) {
    redial_backoff = REDIAL_MIN_MS;
    conn_new(fd);
    return;
  }
  if (fd >= 0) close(fd);
  redial_at = now_ms() + redial_backoff;
  redial_backoff = redial_backoff * 2 > REDIAL_MAX_MS ? REDIAL_MAX_MS : redial_backoff * 2;
}

void redial_soon(void) {
  if (connect_mode) redial_at = now_ms() + REDIAL_MIN_MS;
}

static int listen_on(const char *path) {
  struct sockaddr_un a;
  if (unix_addr(&a, path) < 0) return -1;
  char dir[sizeof a.sun_path];
  strcpy(dir, path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    *slash = 0;
    mkdir(dir, 0755); /* /run/sandpit may not exist in a fresh template */
  }
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  unlink(path);
  if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || chmod(path, 0600) < 0 || listen(fd, 128) < 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* ---- loop ---- */

static void shutdown_all(void) {
  procs_kill_all();
  if (!connect_mode) unlink(sock_path);
  /* Reap what was just killed so no zombie is left to a slow reaper on the host (bounded wait). */
  for (int i = 0; i < 200 && (waitpid(-1, NULL, WNOHANG) >= 0 || errno != ECHILD); i++) usleep(1000);
  exit(0);
}

static void on_signal(void) {
  struct signalfd_siginfo si;
  while (read(signal_w.fd, &si, sizeof si) == (ssize_t)sizeof si)
    if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT) shutdown_all();
  reap_children();
}

static int next_timeout(void) {
  uint64_t t = procs_next_timer();
  if (redial_at && redial_at < t) t = redial_at;
  if (t == UINT64_MAX) return -1;
  uint64_t now = now_ms();
  return t <= now ? 0 : (t - now > INT_MAX ? INT_MAX : (int)(t - now));
}

static void run_timers(void) {
  uint64_t now = now_ms();
  procs_run_timers(now);
  if (redial_at && now >= redial_at) dial();
}

/* Frees what was closed during this iteration; deferred so no event in the batch sees freed memory. */
static void sweep(void) {
  procs_sweep();
  conns_sweep();
  sudo_sweep();
}

static void dispatch(struct watch *w, uint32_t ev) {
  if (w->fd < 0) return;
  struct proc *p = w->p;
  switch (w->kind) {
    case W_LISTEN:
      accept_all();
      break;
    case W_SIGNAL:
      on_signal();
      break;
    case W_CONN:
      if (ev & EPOLLOUT) conn_flush(w->c);
      if (!w->c->dead && (ev & (EPOLLIN | EPOLLHUP | EPOLLERR))) conn_readable(w->c);
      break;
    case W_STDOUT:
    case W_STDERR:
      proc_resolve(p); /* exec success closes the exec pipe before any output exists: report it first */
      if (w->fd >= 0) pipe_readable(p, w);
      break;
    case W_STDIN:
      stdin_flush(p);
      break;
    case W_EXEC:
      proc_resolve(p);
      proc_maybe_finish(p);
      break;
    case W_SUDO_LISTEN:
    case W_SUDO_CLIENT:
      sudo_event(w, ev);
      break;
  }
}

/*
 * The engine may run on more CPUs than the sandbox has (gVisor sizes its own threads by them): what
 * runs here is shown the sandbox's `n` through the affinity it inherits (nproc, os.sched_getaffinity).
 */
static void limit_cpus(int n) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c = 0; c < n && c < CPU_SETSIZE; c++) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set) < 0) logmsg("sched_setaffinity: %s", strerror(errno));
}

static void usage(void) {
  fputs("usage: sandpit-agent --listen PATH | --connect PATH [--oom-guard] [--sudo REAL_SUDO SHIM] [--cpus N]\n       sandpit-agent --screenshot FILE [X Y W H]\n", stderr);
  exit(2);
}

int main(int argc, char **argv) {
  /* Mounted over /usr/bin/sudo where set-user-ID programs do not work (sudo.h). */
  const char *self = strrchr(argv[0], '/');
  if (!strcmp(self ? self + 1 : argv[0], "sudo")) return sudo_client_main(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "--screenshot")) return screenshot_main(argc, argv);
  if (argc < 3) usage();
  if (!strcmp(argv[1], "--listen")) connect_mode = 0;
  else if (!strcmp(argv[1], "--connect")) connect_mode = 1;
  else usage();
  sock_path = argv[2];
  int oom_guard = 0, cpus = 0;
  const char *sudo_real = NULL, *sudo_shim = NULL;
  for (int i = 3; i < argc; i++) {
    if (!strcmp(argv[i], "--oom-guard")) oom_guard = 1;
    else if (!strcmp(argv[i], "--sudo") && i + 2 < argc) sudo_real = argv[++i], sudo_shim = argv[++i];
    else if (!strcmp(argv[i], "--cpus") && i + 1 < argc) cpus = atoi(argv[++i]);
    else usage();
  }
  /* Before any thread starts, so every thread and child inherits it. */
  if (cpus > 0) limit_cpus(cpus);

  /* As PID 1 the standard fds may be closed; keep 0-2 taken so pipes never land there. */
  for (int fd = 0; fd < 3; fd++)
    if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) < 0) open("/", O_RDONLY);

  /* Whatever started us may have left signals ignored; children then need to reset only SIGPIPE. */
  for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
  signal(SIGPIPE, SIG_IGN);
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGCHLD);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigprocmask(SIG_BLOCK, &mask, NULL);
  /* On the host (tests) orphaned grandchildren must come back to us for reaping, as they do to PID 1. */
  prctl(PR_SET_CHILD_SUBREAPER, 1);

  if (env_init() < 0) return 1;

  epfd = epoll_create1(EPOLL_CLOEXEC);
  signal_w.fd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
  if (epfd < 0 || signal_w.fd < 0) {
    logmsg("epoll/signalfd: %s", strerror(errno));
    return 1;
  }
  watch_update(&signal_w, EPOLLIN);
  if (oom_guard) {
    int err = oom_guard_start();
    if (err) logmsg("oom guard: %s", strerror(err));
  }
  if (sudo_real && sudo_serve(sudo_real, sudo_shim) < 0) logmsg("sudo: %s", strerror(errno));
  if (connect_mode) {
    dial();
  } else {
    listen_w.fd = listen_on(sock_path);
    if (listen_w.fd < 0) {
      logmsg("listen %s: %s", sock_path, strerror(errno));
      return 1;
    }
    watch_update(&listen_w, EPOLLIN);
  }

  struct epoll_event evs[64];
  for (;;) {
    /* Output produced anywhere (events, timers, the first dial) is written once per iteration. */
    conns_flush();
    sweep();
    int n = epoll_wait(epfd, evs, 64, next_timeout());
    if (n < 0 && errno != EINTR) {
      logmsg("epoll_wait: %s", strerror(errno));
      return 1;
    }
    for (int i = 0; i < n; i++) dispatch(evs[i].data.ptr, evs[i].events);
    run_timers();
  }
}
