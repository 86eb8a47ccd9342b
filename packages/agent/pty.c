#define _GNU_SOURCE
#include "pty.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <unistd.h>

/* TIOCGPTPEER avoids resolving /dev/pts paths, with ptsname as the fallback. */
int open_pty(int *master, int *slave, uint16_t cols, uint16_t rows, uid_t owner) {
  int m = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (m < 0) return -1;
  int unlock = 0;
  if (ioctl(m, TIOCSPTLCK, &unlock) < 0) goto fail;
  int s = ioctl(m, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (s < 0) {
    char name[64];
    if (ptsname_r(m, name, sizeof name)) goto fail;
    s = open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (s < 0) goto fail;
  }
  pty_resize(m, cols, rows);
  if (owner != (uid_t)-1 && fchown(s, owner, (gid_t)-1) == 0) fchmod(s, 0620);
  *master = m;
  *slave = s;
  return 0;
fail:;
  int e = errno;
  close(m);
  errno = e;
  return -1;
}

void pty_resize(int master, uint16_t cols, uint16_t rows) {
  struct winsize ws = {.ws_row = rows, .ws_col = cols};
  ioctl(master, TIOCSWINSZ, &ws);
}
