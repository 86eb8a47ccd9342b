/*
 * Preloaded into every process of a gVisor sandbox (through /etc/ld.so.preload).
 * Debian 12's runsc (20221219) answers statx() with EINVAL when AT_NO_AUTOMOUNT
 * is set, and Debian 12's coreutils always set it: `ls -l` and `stat` fail on
 * every path. A sandbox has no automounts, so dropping the flag changes nothing
 * else. Built against the host's glibc, which is the base template's (Debian 12).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int statx(int dirfd, const char *path, int flags, unsigned int mask, struct statx *buf) {
  return (int)syscall(SYS_statx, dirfd, path, flags & ~AT_NO_AUTOMOUNT, mask, buf);
}
