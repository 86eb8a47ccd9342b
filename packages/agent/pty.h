/* Pseudo-terminals for processes spawned with PTY. */
#ifndef SANDPIT_PTY_H
#define SANDPIT_PTY_H

#include <stdint.h>
#include <sys/types.h>

/* Opens a pty pair (both ends CLOEXEC) sized cols x rows; owner, unless (uid_t)-1, gets the slave
   with mode 0620, as a login terminal. 0, or -1 with errno. */
int open_pty(int *master, int *slave, uint16_t cols, uint16_t rows, uid_t owner);
void pty_resize(int master, uint16_t cols, uint16_t rows);

#endif
