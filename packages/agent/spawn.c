/* Spawning (spawn.h). The child reports a failed start through a CLOEXEC exec pipe: PROTOCOL.md. */
#define _GNU_SOURCE
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caps.h"
#include "env.h"
#include "files.h"
#include "procs.h"
#include "proto.h"
#include "pty.h"
#include "user.h"
#include "wire.h"


#define FILE_PIPE_BYTES (1 << 20) /* file transfers relayed by the agent move 1 MiB per pipe read */

struct spawn_req {
  char **argv;
  size_t argc;
  char **env;
  size_t envc;
  char *cwd;
  char *user;
  uint32_t timeout_ms;
  int pty;
  uint16_t cols, rows;
  uint32_t flags;
  char *name;
  int is_file;
  struct file_req file;
  char *arena;
};

/* 0: parsed; 1: invalid (answered with an error); -1: malformed frame. */
static int parse_spawn(const uint8_t *pl, size_t plen, struct spawn_req *r) {
  struct tlv_it it = {pl, pl + plen};
  uint16_t tag;
  const uint8_t *v;
  uint32_t len;
  int rc;
  size_t nargv = 0, nenv = 0, nstr = 0;
  memset(r, 0, sizeof *r);
  while ((rc = tlv_next(&it, &tag, &v, &len)) == 1) {
    if (tag == SPAWN_ARGV) nargv++;
    if (tag == SPAWN_ENV) nenv++;
    nstr++;
  }
  if (rc < 0) return -1;
  r->arena = malloc(plen + nstr + 1);
  r->argv = calloc(nargv + 1, sizeof *r->argv);
  r->env = calloc(nenv + 1, sizeof *r->env);
  if (!r->arena || !r->argv || !r->env) return 1;
  char *a = r->arena;
  it.p = pl;
  while (tlv_next(&it, &tag, &v, &len) == 1) {
    char *s = NULL;
    switch (tag) {
      case SPAWN_ARGV:
        if (!(s = r->argv[r->argc++] = arena_str(&a, v, len))) return 1;
        break;
      case SPAWN_ENV:
        if (!(s = arena_str(&a, v, len)) || !strchr(s, '=') || *s == '=') return 1;
        r->env[r->envc++] = s;
        break;
      case SPAWN_CWD:
        if (!(r->cwd = arena_str(&a, v, len))) return 1;
        break;
      case SPAWN_USER:
        if (!(r->user = arena_str(&a, v, len))) return 1;
        break;
      case SPAWN_TIMEOUT_MS:
        if (len != 4) return -1;
        r->timeout_ms = get32(v);
        break;
      case SPAWN_PTY:
        if (len != 4) return -1;
        r->pty = 1;
        r->cols = get16(v);
        r->rows = get16(v + 2);
        break;
      case SPAWN_FLAGS:
        if (len != 4) return -1;
        r->flags = get32(v);
        break;
      case SPAWN_NAME:
        if (!(r->name = arena_str(&a, v, len))) return 1;
        break;
      default: /* unknown tags are skipped so newer hosts can talk to older agents */
        break;
    }
  }
  return r->argc ? 0 : 1;
}

/* A FILE request is a spawn whose child runs a built-in operation instead of exec. Same return codes. */
static int parse_file(const uint8_t *pl, size_t plen, struct spawn_req *r) {
  memset(r, 0, sizeof *r);
  r->is_file = 1;
  r->arena = malloc(plen + 8);
  r->argv = calloc(1, sizeof *r->argv);
  r->env = calloc(1, sizeof *r->env);
  int rc = file_req_parse(pl, plen, &r->file, &r->user, r->arena);
  if (rc) return rc;
  if (!r->argv || !r->env) return 1;
  if (r->file.op == OP_WRITE) r->flags |= SPAWN_FLAG_STDIN_BLOCKING;
  else r->flags |= SPAWN_FLAG_STDIN_CLOSED;
  return 0;
}

static void spawn_req_free(struct spawn_req *r) {
  free(r->argv);
  free(r->env);
  free(r->arena);
}

struct child_plan {
  char **argv;
  char **envp;
  const char *cwd;
  int switch_user;
  const struct user_info *u;
  int pty_slave; /* -1 for pipes */
  int in_r, out_w, err_w;
  int exec_w;
  const struct file_req *file; /* run this instead of exec */
};

static void __attribute__((noreturn)) child_fail(int fd, const char *what, const char *arg) {
  struct {
    int32_t err;
    char msg[400];
  } r;
  r.err = errno;
  int n = snprintf(r.msg, sizeof r.msg, "%s%s%s: %s", what, *arg ? " " : "", arg, strerror(r.err));
  if (n < 0) n = 0;
  if (n >= (int)sizeof r.msg) n = sizeof r.msg - 1;
  ssize_t ignored = write(fd, &r, 4 + (size_t)n);
  (void)ignored;
  _exit(127);
}

static void close_from(unsigned lo, unsigned hi) {
  if (lo > hi) return;
  /* gVisor rejects a last fd above INT_MAX with EINVAL (Linux accepts ~0u). */
  if (hi > INT_MAX) hi = INT_MAX;
  if (close_range(lo, hi, 0) == 0) return;
  struct rlimit rl; /* close_range missing (old kernel or sandbox runtime): close one by one */
  unsigned max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (unsigned)rl.rlim_cur : 65536;
  for (unsigned fd = lo; fd <= hi && fd < max; fd++) close((int)fd);
}

/*
 * execvp with the PATH of the new environment, touching no global: a vfork child shares the
 * agent's memory, so it must not set environ. Returns only on failure, with execvp's errno
 * (EACCES if any candidate was not executable, else the last error).
 */
static void exec_path(char *const argv[], char *const envp[]) {
  const char *file = argv[0];
  if (strchr(file, '/')) {
    execve(file, argv, envp);
    return;
  }
  const char *path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  for (char *const *e = envp; *e; e++)
    if (!strncmp(*e, "PATH=", 5)) path = *e + 5;
  size_t flen = strlen(file);
  char buf[PATH_MAX];
  int seen_eacces = 0, last = ENOENT;
  for (const char *p = path;; p++) {
    const char *end = strchrnul(p, ':');
    size_t dlen = (size_t)(end - p);
    if (dlen + flen + 2 <= sizeof buf) {
      memcpy(buf, p, dlen);
      size_t at = dlen;
      if (dlen) buf[at++] = '/'; /* an empty entry is the current directory */
      memcpy(buf + at, file, flen + 1);
      execve(buf, argv, envp);
      if (errno == EACCES) seen_eacces = 1;
      else if (errno != ENOENT && errno != ENOTDIR) last = errno;
    }
    if (!*end) break;
    p = end;
  }
  errno = seen_eacces ? EACCES : last;
}

static void __attribute__((noreturn)) child_run(const struct child_plan *s) {
  sigset_t none;
  sigemptyset(&none);
  /* SIG_IGN survives exec. SIGPIPE is the only disposition the agent sets (main reset the rest),
     and one call instead of 64 matters: each costs about 75 us under gVisor. */
  signal(SIGPIPE, SIG_DFL);
  sigprocmask(SIG_SETMASK, &none, NULL);
  if (setsid() < 0) child_fail(s->exec_w, "setsid", "");
  if (drop_agent_caps() < 0) child_fail(s->exec_w, "prctl", "PR_CAPBSET_DROP");
  if (s->pty_slave >= 0) {
    if (ioctl(s->pty_slave, TIOCSCTTY, 0) < 0) child_fail(s->exec_w, "ioctl", "TIOCSCTTY");
    for (int fd = 0; fd < 3; fd++) dup2(s->pty_slave, fd);
  } else {
    dup2(s->in_r, 0);
    dup2(s->out_w, 1);
    dup2(s->err_w, 2);
  }
  /* Everything else is closed: the exec pipe stays, and a direct transfer's connection. */
  int keep[2] = {s->exec_w, s->file ? s->file->conn_fd : -1};
  if (keep[1] >= 0 && keep[1] < keep[0]) keep[1] = keep[0], keep[0] = s->file->conn_fd;
  unsigned next = 3;
  for (int i = 0; i < 2; i++) {
    if (keep[i] < (int)next) continue;
    close_from(next, (unsigned)keep[i] - 1);
    next = (unsigned)keep[i] + 1;
  }
  close_from(next, ~0u);
  /* Raw syscalls: glibc's wrappers would signal the agent's other threads, which a vfork child shares. */
  if (s->switch_user) {
    if (syscall(SYS_setgroups, (size_t)s->u->ngroups, s->u->groups) < 0) child_fail(s->exec_w, "setgroups", "");
    if (syscall(SYS_setresgid, s->u->gid, s->u->gid, s->u->gid) < 0) child_fail(s->exec_w, "setgid", "");
    if (syscall(SYS_setresuid, s->u->uid, s->u->uid, s->u->uid) < 0) child_fail(s->exec_w, "setuid", "");
  }
  if (s->file) {
    if (chdir(s->cwd) < 0 && chdir("/") < 0) child_fail(s->exec_w, "chdir", "/");
    file_main(s->file, s->exec_w);
  }
  if (chdir(s->cwd) < 0) child_fail(s->exec_w, "chdir", s->cwd);
  exec_path(s->argv, s->envp);
  child_fail(s->exec_w, "exec", s->argv[0]);
}

/*
 * A command execs at once, so it is vforked: under gVisor a fork copies the agent's address space
 * into a new host process (10-30 ms), a vfork shares it until the exec (under 1 ms). A file helper
 * runs our code in the child, so it gets a copy of its own. Kept apart so no caller's locals live
 * across the vfork.
 */
static pid_t __attribute__((noinline)) start_child(const struct child_plan *plan) {
  pid_t pid = plan->file ? fork() : vfork();
  if (pid == 0) child_run(plan);
  return pid;
}

static void close_fds(int *fds, int n) {
  for (int i = 0; i < n; i++)
    if (fds[i] >= 0) close(fds[i]);
}

int handle_spawn(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen, int is_file) {
  struct spawn_req r;
  int rc = is_file ? parse_file(pl, plen, &r) : parse_spawn(pl, plen, &r);
  if (rc < 0) {
    spawn_req_free(&r);
    return -1;
  }
  /* fds: 0 in_r 1 in_w 2 out_r 3 out_w 4 err_r 5 err_w 6 exec_r 7 exec_w 8 master 9 slave 10 master dup */
  int fds[11];
  for (int i = 0; i < 11; i++) fds[i] = -1;
  struct child_env ce;
  ce.envp = NULL;
  static struct user_info u;
  const char *uname = r.user && *r.user ? r.user : "user";

  if (rc) {
    send_error(c, id, EINVAL, is_file ? "invalid file request" : "invalid spawn request");
    goto out;
  }
  if (find_proc(c, id)) {
    send_error(c, id, EEXIST, "request id %u is in use", id);
    goto out;
  }
  if (user_lookup_or_answer(c, id, uname, &u) < 0) goto out;
  int switch_user = geteuid() == 0;
  if (!switch_user && u.uid != geteuid()) {
    send_error(c, id, EPERM, "user %s: the agent does not run as root", uname);
    goto out;
  }

  if (child_env_build(&ce, &u, uname, r.env, r.envc, r.pty) < 0) {
    send_error(c, id, ENOMEM, "out of memory");
    goto out;
  }

  if (pipe2(fds + 6, O_CLOEXEC) < 0) goto sys_fail;
  if (r.pty) {
    if (open_pty(&fds[8], &fds[9], r.cols, r.rows, switch_user ? u.uid : (uid_t)-1) < 0) goto sys_fail;
    if ((fds[10] = fcntl(fds[8], F_DUPFD_CLOEXEC, 3)) < 0) goto sys_fail;
    set_nonblock(fds[8]);
  } else {
    if (pipe2(fds, O_CLOEXEC) < 0 || pipe2(fds + 2, O_CLOEXEC) < 0 || pipe2(fds + 4, O_CLOEXEC) < 0)
      goto sys_fail;
    /* The user's own pipes, as a shell's would be: a program that opens /dev/stdout (scrot, tee, any
       `> /dev/stderr`) reopens the pipe, which a pipe left to root refuses to the user. Best effort:
       without it only such reopening fails, as it always did. */
    if (switch_user)
      for (int i = 0; i < 6; i += 2)
        if (fchown(fds[i], u.uid, u.gid) < 0) continue;
    set_nonblock(fds[1]);
    set_nonblock(fds[2]);
    set_nonblock(fds[4]);
    if (r.is_file) { /* fewer, larger wakeups for bulk data */
      fcntl(fds[0], F_SETPIPE_SZ, FILE_PIPE_BYTES);
      fcntl(fds[2], F_SETPIPE_SZ, FILE_PIPE_BYTES);
    }
  }
  set_nonblock(fds[6]);
  if (r.is_file) {
    r.file.conn_fd = -1;
    if ((r.file.flags & FILE_FLAG_DIRECT) && (r.file.op == OP_READ || r.file.op == OP_WRITE) && direct_ok(c, pl, plen)) {
      r.file.conn_fd = c->w.fd;
      r.file.id = id;
    }
  }

  struct child_plan plan = {
      .argv = r.argv,
      .envp = ce.envp,
      .cwd = r.cwd && *r.cwd ? r.cwd : u.home,
      .switch_user = switch_user,
      .u = &u,
      .pty_slave = fds[9],
      .in_r = fds[0],
      .out_w = fds[3],
      .err_w = fds[5],
      .exec_w = fds[7],
      .file = r.is_file ? &r.file : NULL,
  };
  pid_t pid = start_child(&plan);
  if (pid < 0) goto sys_fail;

  struct proc *p = calloc(1, sizeof *p);
  if (!p) { /* cannot track it: do not leave it running untracked */
    kill(pid, SIGKILL);
    if (r.is_file && r.file.conn_fd >= 0) conn_close(c); /* it may have taken the connection already */
    else send_error(c, id, ENOMEM, "out of memory");
    goto out;
  }
  p->conn = c;
  p->id = id;
  p->pid = pid;
  p->background = !!(r.flags & SPAWN_FLAG_BACKGROUND);
  p->stdin_blocking = !!(r.flags & SPAWN_FLAG_STDIN_BLOCKING);
  p->file = r.is_file;
  if (r.is_file && r.file.op == OP_WRITE) c->bulk = 1;
  if (r.is_file && r.file.conn_fd >= 0) {
    p->direct = c->direct = 1;
    conn_watch_update(c);
  }
  p->pty = r.pty;
  if (r.name && !(p->name = strdup(r.name))) {
    kill(pid, SIGKILL);
    free(p);
    send_error(c, id, ENOMEM, "out of memory");
    goto out;
  }
  p->state = ST_STARTING;
  if (r.timeout_ms) p->deadline = now_ms() + r.timeout_ms;
  if (r.pty) {
    watch_init(&p->out, W_STDOUT, fds[8], p);
    watch_init(&p->err, W_STDERR, -1, p);
    watch_init(&p->in, W_STDIN, fds[10], p);
    fds[8] = fds[10] = -1;
  } else {
    watch_init(&p->out, W_STDOUT, fds[2], p);
    watch_init(&p->err, W_STDERR, fds[4], p);
    watch_init(&p->in, W_STDIN, fds[1], p);
    fds[1] = fds[2] = fds[4] = -1;
    if (r.flags & SPAWN_FLAG_STDIN_CLOSED) watch_close(&p->in);
  }
  watch_init(&p->exec, W_EXEC, fds[6], p);
  fds[6] = -1;
  procs_add(p);
  watch_update(&p->exec, EPOLLIN);
  watch_update(&p->out, c->throttled ? 0 : EPOLLIN);
  watch_update(&p->err, c->throttled ? 0 : EPOLLIN);
  goto out;

sys_fail:
  send_error(c, id, errno, "spawn: %s", strerror(errno));
out:
  close_fds(fds, 11);
  free(ce.envp);
  spawn_req_free(&r);
  return 0;
}
