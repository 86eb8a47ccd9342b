#define _GNU_SOURCE
#include "sudo.h"
#include "caps.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

extern char **environ;

/* Abstract: no file to protect or clean up; the sandbox's own network namespace scopes it. */
static const char SOCK_NAME[] = "\0sandpit-sudo";
#define REQ_MAGIC 0x53554431u /* "SUD1" */
#define REQ_MAX (1u << 20)   /* arguments and environment together */
#define MAX_GROUPS 256
#define READ_TIMEOUT_S 2

/* The request: magic, argc, envc, total string bytes; then argv and env as NUL-terminated strings. */
struct req_head {
  uint32_t magic, argc, envc, bytes;
};

static socklen_t sock_addr(struct sockaddr_un *a) {
  memset(a, 0, sizeof *a);
  a->sun_family = AF_UNIX;
  memcpy(a->sun_path, SOCK_NAME, sizeof SOCK_NAME - 1);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + sizeof SOCK_NAME - 1);
}

/* ---- client ---- */

static int client_fd = -1;

static void relay_signal(int sig) {
  uint8_t b = (uint8_t)sig;
  ssize_t ignored = write(client_fd, &b, 1);
  (void)ignored;
}

/* Moves all n bytes (write when `out`, else read); -1 on an error or an early end. */
static int move_all(int fd, void *p, size_t n, int out) {
  char *c = p;
  while (n) {
    ssize_t m = out ? write(fd, c, n) : read(fd, c, n);
    if (m < 0 && errno == EINTR) continue;
    if (m <= 0) return -1;
    c += m;
    n -= (size_t)m;
  }
  return 0;
}

int sudo_client_main(int argc, char **argv) {
  size_t envc = 0, bytes = 0;
  for (int i = 0; i < argc; i++) bytes += strlen(argv[i]) + 1;
  for (char **e = environ; *e; e++, envc++) bytes += strlen(*e) + 1;
  if (bytes > REQ_MAX) {
    fputs("sudo: argument list too long\n", stderr);
    return 1;
  }
  char *body = malloc(bytes ? bytes : 1);
  if (!body) return 1;
  size_t at = 0;
  for (int i = 0; i < argc; i++) at += (size_t)stpcpy(body + at, argv[i]) - (size_t)(body + at) + 1;
  for (char **e = environ; *e; e++) at += (size_t)stpcpy(body + at, *e) - (size_t)(body + at) + 1;

  client_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_un a;
  socklen_t alen = sock_addr(&a);
  if (client_fd < 0 || connect(client_fd, (struct sockaddr *)&a, alen) < 0) {
    fprintf(stderr, "sudo: the sandbox agent does not answer (%s)\n", strerror(errno));
    return 1;
  }
  /* The streams and working directory travel as descriptors; a closed stream becomes /dev/null. */
  int fds[4];
  for (int i = 0; i < 3; i++) fds[i] = fcntl(i, F_GETFD) < 0 ? open("/dev/null", O_RDWR | O_CLOEXEC) : i;
  fds[3] = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fds[3] < 0) fds[3] = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  struct req_head h = {REQ_MAGIC, (uint32_t)argc, (uint32_t)envc, (uint32_t)bytes};
  struct iovec iov = {&h, sizeof h};
  /* Who asks travels as SCM_CREDENTIALS, which the kernel checks (gVisor's SO_PEERCRED names the listener). */
  struct ucred me = {getpid(), getuid(), getgid()};
  union {
    char buf[CMSG_SPACE(sizeof fds) + CMSG_SPACE(sizeof me)];
    struct cmsghdr align;
  } ctl;
  memset(&ctl, 0, sizeof ctl);
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
  struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_RIGHTS;
  cm->cmsg_len = CMSG_LEN(sizeof fds);
  memcpy(CMSG_DATA(cm), fds, sizeof fds);
  cm = CMSG_NXTHDR(&m, cm);
  cm->cmsg_level = SOL_SOCKET;
  cm->cmsg_type = SCM_CREDENTIALS;
  cm->cmsg_len = CMSG_LEN(sizeof me);
  memcpy(CMSG_DATA(cm), &me, sizeof me);
  if (sendmsg(client_fd, &m, 0) != (ssize_t)sizeof h || move_all(client_fd, body, bytes, 1) < 0) {
    fprintf(stderr, "sudo: cannot reach the sandbox agent (%s)\n", strerror(errno));
    return 1;
  }
  free(body);

  /* What a terminal or a parent sends sudo goes on to the command, as sudo itself relays it. */
  static const int relayed[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH, SIGCONT};
  struct sigaction sa = {.sa_handler = relay_signal};
  for (size_t i = 0; i < sizeof relayed / sizeof *relayed; i++) sigaction(relayed[i], &sa, NULL);

  int32_t status;
  size_t got = 0;
  while (got < sizeof status) {
    ssize_t n = read(client_fd, (char *)&status + got, sizeof status - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fputs("sudo: the sandbox agent ended the command without a status\n", stderr);
      return 1;
    }
    got += (size_t)n;
  }
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    signal(sig, SIG_DFL);
    raise(sig);
    return 128 + sig;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* ---- agent ---- */

/* One client whose command runs. */
struct run {
  struct watch w; /* first: the watch's address is the run's */
  pid_t pid;
  int dead;
  struct run *next;
};

static struct watch listen_w = {.kind = W_SUDO_LISTEN, .fd = -1};
static const char *real_sudo, *sudo_shim;
static struct run *runs;

int sudo_serve(const char *real, const char *shim) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  struct sockaddr_un a;
  socklen_t alen = sock_addr(&a);
  if (fd < 0) return -1;
  int one = 1; /* accepted sockets inherit it: each request's SCM_CREDENTIALS are delivered */
  if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof one) < 0 || bind(fd, (struct sockaddr *)&a, alen) < 0 || listen(fd, 64) < 0) {
    int e = errno;
    close(fd);
    errno = e;
    return -1;
  }
  real_sudo = real;
  sudo_shim = shim;
  listen_w.fd = fd;
  watch_update(&listen_w, EPOLLIN);
  return 0;
}

/* The caller's supplementary groups, from /proc (SCM_CREDENTIALS carries only its pid, uid and gid). */
static int peer_groups(pid_t pid, gid_t *out) {
  char path[64], buf[4096];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  char *g = strstr(buf, "\nGroups:");
  if (!g) return 0;
  g += 8;
  int k = 0;
  while (k < MAX_GROUPS) {
    char *end;
    unsigned long v = strtoul(g, &end, 10);
    if (end == g) break;
    out[k++] = (gid_t)v;
    g = end;
  }
  return k;
}

static void __attribute__((noreturn)) child(const int *fds, const struct ucred *cr, const gid_t *groups, int ngroups, char **argv, char **envp) {
  sigset_t none;
  sigemptyset(&none);
  signal(SIGPIPE, SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, NULL);
  setsid();
  if (drop_agent_caps() < 0) {
    dprintf(2, "sudo: cannot drop the agent's capabilities: %s\n", strerror(errno));
    _exit(1);
  }
  for (int i = 0; i < 3; i++) dup2(fds[i], i);
  if (fchdir(fds[3]) < 0 && chdir("/") < 0) _exit(126);
  syscall(SYS_close_range, 3u, (unsigned)INT_MAX, 0u);
  /* The caller's groups, and root (gVisor would reset an effective uid 0 to a real uid of the caller at exec);
     the preloaded shim names the caller to sudo as its real uid. */
  if (syscall(SYS_setgroups, (size_t)ngroups, groups) < 0 || syscall(SYS_setresgid, cr->gid, cr->gid, cr->gid) < 0 ||
      syscall(SYS_setresuid, 0, 0, 0) < 0) {
    dprintf(2, "sudo: cannot take the caller's identity: %s\n", strerror(errno));
    _exit(1);
  }
  execve(real_sudo, argv, envp);
  dprintf(2, "sudo: %s: %s\n", real_sudo, strerror(errno));
  _exit(127);
}

/* Reads one request (the client sends it whole at once; a stalled one times out) and starts its command. */
static void accept_one(int fd) {
  struct timeval tv = {READ_TIMEOUT_S, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  struct ucred cr;
  int have_cred = 0;
  struct req_head h;
  int fds[4] = {-1, -1, -1, -1};
  char *body = NULL;
  char **vec = NULL;
  union {
    char buf[CMSG_SPACE(sizeof fds) + CMSG_SPACE(sizeof cr)];
    struct cmsghdr align;
  } ctl;
  struct iovec iov = {&h, sizeof h};
  struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof ctl.buf};
  ssize_t n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  for (struct cmsghdr *cm = CMSG_FIRSTHDR(&m); n > 0 && cm; cm = CMSG_NXTHDR(&m, cm)) {
    if (cm->cmsg_level != SOL_SOCKET) continue;
    if (cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len == CMSG_LEN(sizeof fds)) memcpy(fds, CMSG_DATA(cm), sizeof fds);
    else if (cm->cmsg_type == SCM_RIGHTS) { /* not ours: close whatever came */
      for (int *f = (int *)CMSG_DATA(cm); (char *)(f + 1) <= (char *)cm + cm->cmsg_len; f++) close(*f);
    } else if (cm->cmsg_type == SCM_CREDENTIALS && cm->cmsg_len == CMSG_LEN(sizeof cr)) {
      memcpy(&cr, CMSG_DATA(cm), sizeof cr);
      have_cred = 1;
    }
  }
  int ok = n == (ssize_t)sizeof h && !(m.msg_flags & MSG_CTRUNC) && have_cred && h.magic == REQ_MAGIC && h.bytes <= REQ_MAX && h.argc >= 1 &&
           (uint64_t)h.argc + h.envc <= h.bytes && fds[0] >= 0 && fds[1] >= 0 && fds[2] >= 0 && fds[3] >= 0;
  /* argv, NULL, env, the two variables of the shim, NULL */
  if (ok) ok = (body = malloc(h.bytes + 1)) && (vec = calloc(h.argc + h.envc + 4, sizeof *vec)) && move_all(fd, body, h.bytes, 0) == 0;
  if (ok) {
    body[h.bytes] = 0;
    /* argv, NULL, env, NULL */
    size_t at = 0, k = 0;
    for (uint32_t i = 0; ok && i < h.argc + h.envc; i++) {
      if (at >= h.bytes) ok = 0;
      else {
        vec[k++] = body + at;
        at += strlen(body + at) + 1;
        if (i + 1 == h.argc) k++;
      }
    }
  }
  pid_t pid = -1;
  struct run *r = NULL;
  char caller[32], preload[PATH_MAX + 16];
  if (ok) {
    /* Any LD_PRELOAD of the caller's is dropped, as the kernel drops it for a set-user-ID program. */
    char **env = vec + h.argc + 1, **out = env;
    for (char **e = env; *e; e++)
      if (strncmp(*e, "LD_PRELOAD=", 11) && strncmp(*e, "SANDPIT_SUDO_CALLER=", 20)) *out++ = *e;
    snprintf(caller, sizeof caller, "SANDPIT_SUDO_CALLER=%u", (unsigned)cr.uid);
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", sudo_shim);
    *out++ = caller;
    *out++ = preload;
    *out = NULL;
  }
  if (ok && (r = calloc(1, sizeof *r))) {
    gid_t groups[MAX_GROUPS];
    int ngroups = peer_groups(cr.pid, groups);
    pid = fork();
    if (pid == 0) child(fds, &cr, groups, ngroups, vec, vec + h.argc + 1);
  }
  for (int i = 0; i < 4; i++)
    if (fds[i] >= 0) close(fds[i]);
  free(body);
  free(vec);
  if (pid < 0) {
    free(r);
    close(fd);
    return;
  }
  r->pid = pid;
  r->next = runs;
  runs = r;
  watch_init(&r->w, W_SUDO_CLIENT, fd, NULL);
  set_nonblock(fd);
  watch_update(&r->w, EPOLLIN);
}

/* The client went away before its command ended: end the command too, as a killed sudo's would. */
static void orphaned(struct run *r) {
  watch_close(&r->w);
  kill(-r->pid, SIGHUP);
  kill(-r->pid, SIGCONT);
  kill(-r->pid, SIGKILL);
}

void sudo_event(struct watch *w, uint32_t events) {
  if (w->kind == W_SUDO_LISTEN) {
    int fd;
    while ((fd = accept4(w->fd, NULL, NULL, SOCK_CLOEXEC)) >= 0) accept_one(fd);
    return;
  }
  struct run *r = (struct run *)w;
  uint8_t sig[64];
  ssize_t n;
  while ((n = read(w->fd, sig, sizeof sig)) > 0)
    for (ssize_t i = 0; i < n; i++)
      if (sig[i] > 0 && sig[i] < NSIG) kill(r->pid, sig[i]);
  if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR) || (events & (EPOLLHUP | EPOLLERR))) orphaned(r);
}

int sudo_reaped(pid_t pid, int status) {
  for (struct run *r = runs; r; r = r->next) {
    if (r->dead || r->pid != pid) continue;
    if (r->w.fd >= 0) {
      int32_t st = status;
      ssize_t ignored = write(r->w.fd, &st, sizeof st);
      (void)ignored;
      watch_close(&r->w);
    }
    r->dead = 1;
    return 1;
  }
  return 0;
}

void sudo_sweep(void) {
  for (struct run **rp = &runs; *rp;) {
    struct run *r = *rp;
    if (r->dead) {
      *rp = r->next;
      free(r);
    } else {
      rp = &r->next;
    }
  }
}
