/*
 * sandpit-mount-into PID PATH UID: runs on the host, never in a sandbox. Attaches the detached mount
 * it inherits as fd 3 (an open_tree clone the host made, idmapped already for crun) at PATH under the
 * root of process PID, in its mount namespace, making PATH's missing directories owned by UID. A
 * running crun container's root is private to its namespace, and so is the view of a gVisor
 * sandbox's gofer (which serves its files from a chroot inside its own namespace), so a volume
 * mounted on the host under either would not reach it; this enters the namespace instead. Paths
 * resolve from the process's root, and no component may be a symlink, so nothing can steer the
 * mount elsewhere.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#define MOUNT_FD 3

static int fail(const char *what, const char *path) {
  fprintf(stderr, "%s %s: %s\n", what, path, strerror(errno));
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 4 || argv[2][0] != '/') {
    fputs("usage: sandpit-mount-into PID /PATH UID (the mount as fd 3)\n", stderr);
    return 2;
  }
  uid_t uid = (uid_t)strtoul(argv[3], NULL, 10);
  char ns[64];
  snprintf(ns, sizeof ns, "/proc/%s/ns/mnt", argv[1]);
  /* Opened before entering: the namespace's root is not the process's own under a chroot (the gofer's). */
  char root_path[64];
  snprintf(root_path, sizeof root_path, "/proc/%s/root", argv[1]);
  int dir = open(root_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return fail("open", root_path);
  int nsfd = open(ns, O_RDONLY | O_CLOEXEC);
  if (nsfd < 0) return fail("open", ns);
  if (setns(nsfd, CLONE_NEWNS) < 0) return fail("setns", ns);
  close(nsfd);
  char *path = strdup(argv[2]);
  for (char *part = strtok(path, "/"); part; part = strtok(NULL, "/")) {
    if (!strcmp(part, "..") || !strcmp(part, ".")) {
      errno = EINVAL;
      return fail("component of", argv[2]);
    }
    if (mkdirat(dir, part, 0755) == 0) {
      if (fchownat(dir, part, uid, uid, AT_SYMLINK_NOFOLLOW) < 0) return fail("chown", argv[2]);
    } else if (errno != EEXIST) {
      return fail("mkdir", argv[2]);
    }
    int next = openat(dir, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0) return fail("a directory (no symlink) on the way to", argv[2]);
    close(dir);
    dir = next;
  }
  if (move_mount(MOUNT_FD, "", dir, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0) return fail("mounting at", argv[2]);
  return 0;
}
