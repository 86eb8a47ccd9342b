/*
 * Out-of-memory guard for engines without an OOM killer of their own (gVisor).
 *
 * gVisor's sentry never kills a process when its memory runs out: the host cgroup
 * kills the sentry instead, and the whole sandbox with it. The host gives the engine
 * headroom above the sandbox's memory; this thread watches the sandbox's own
 * accounting (/proc/meminfo: MemTotal is the sandbox's memory) and, when little is
 * left, SIGKILLs the process with the largest resident set, as Linux's OOM killer
 * would. The process's parent sees it killed by signal 9 (exit 137).
 *
 * No malloc or stdio here: the agent forks from its main thread at any time.
 */
#define _GNU_SOURCE
#include "oom-guard.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* Kill when less than 1/RESERVE_DIV of the memory (at least RESERVE_MIN) is left. */
#define RESERVE_DIV 32
#define RESERVE_MIN (8ull << 20)

/* A bound on how fast a sandbox fills its memory: 3 GiB/s, against 0.5-0.8 GiB/s measured for one
 * process touching fresh pages under gVisor on a 2-CPU host. */
#define FILL_BYTES_PER_MS ((3ull << 30) / 1000)
#define MIN_NAP_MS 5
#define MAX_NAP_MS 1000

static int meminfo_fd = -1;

static uint64_t field_kb(const char *text, const char *name) {
  const char *p = strstr(text, name);
  if (!p) return 0;
  p += strlen(name);
  while (*p == ' ' || *p == ':') p++;
  return strtoull(p, NULL, 10);
}

/* Total and available bytes; 0 total when unreadable. */
static void meminfo(uint64_t *total, uint64_t *avail) {
  static char buf[4096];
  ssize_t n = pread(meminfo_fd, buf, sizeof buf - 1, 0);
  if (n <= 0) {
    *total = 0;
    return;
  }
  buf[n] = 0;
  *total = field_kb(buf, "MemTotal") << 10;
  *avail = field_kb(buf, "MemAvailable") << 10;
}

/* Resident pages of a process from /proc/PID/statm; 0 when it is gone. */
static uint64_t rss_pages(const char *pid) {
  char path[300], buf[128];
  snprintf(path, sizeof path, "/proc/%s/statm", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  char *p = strchr(buf, ' ');
  return p ? strtoull(p + 1, NULL, 10) : 0;
}

/* The process with the largest resident set, other than this agent; 0 when none. */
static pid_t largest(void) {
  static char dents[16384];
  int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return 0;
  pid_t self = getpid(), best = 0;
  uint64_t best_rss = 0;
  for (;;) {
    long n = syscall(SYS_getdents64, dir, dents, sizeof dents);
    if (n <= 0) break;
    for (long off = 0; off < n;) {
      struct dirent64 *d = (struct dirent64 *)(dents + off);
      off += d->d_reclen;
      if (d->d_name[0] < '1' || d->d_name[0] > '9') continue;
      pid_t pid = (pid_t)atoi(d->d_name);
      if (pid == self) continue;
      uint64_t rss = rss_pages(d->d_name);
      if (rss > best_rss) best_rss = rss, best = pid;
    }
  }
  close(dir);
  return best;
}

static void nap_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) < 0 && errno == EINTR) {}
}

/* Waits up to SETTLE_MS for the memory of a killed process to come back (the engine frees it after the exit). */
#define SETTLE_MS 3000

static void settle(uint64_t reserve) {
  for (int waited = 0; waited < SETTLE_MS; waited += 10) {
    uint64_t total = 0, avail = 0;
    meminfo(&total, &avail);
    if (total == 0 || avail >= 2 * reserve) return;
    nap_ms(10);
  }
}

static void *guard(void *arg) {
  (void)arg;
  for (;;) {
    uint64_t total = 0, avail = 0;
    meminfo(&total, &avail);
    if (total == 0) return NULL;
    uint64_t reserve = total / RESERVE_DIV > RESERVE_MIN ? total / RESERVE_DIV : RESERVE_MIN;
    if (avail < reserve) {
      pid_t victim = largest();
      if (victim > 0) kill(victim, SIGKILL);
      /* One kill at a time: judge again only once the engine had time to take the memory back. */
      settle(reserve);
      continue;
    }
    /* Look again before memory filling at the fastest rate could reach the reserve, and no sooner:
     * each look wakes the engine, and at ten a second that was most of an idle sandbox's CPU. */
    uint64_t ms = (avail - reserve) / FILL_BYTES_PER_MS;
    nap_ms(ms < MIN_NAP_MS ? MIN_NAP_MS : ms > MAX_NAP_MS ? MAX_NAP_MS : (long)ms);
  }
}

int oom_guard_start(void) {
  meminfo_fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
  if (meminfo_fd < 0) return errno;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t t;
  int err = pthread_create(&t, &attr, guard, NULL);
  pthread_attr_destroy(&attr);
  return err;
}
