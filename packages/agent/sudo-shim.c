/*
 * Preloaded into the real sudo when the agent starts it for a caller (sudo.h): gVisor resets the
 * effective uid to the real one at exec, so sudo cannot run as a set-user-ID program would (real
 * uid the caller's, effective uid 0). The agent runs it as root instead and names the caller here;
 * while the real uid is 0, getuid() answers the caller, so sudo applies the sudoers policy to the
 * caller. Neither variable reaches the command sudo runs.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static uid_t caller = (uid_t)-1;

__attribute__((constructor)) static void take_caller(void) {
  const char *v = getenv("SANDPIT_SUDO_CALLER");
  char *end;
  if (v && *v) {
    unsigned long uid = strtoul(v, &end, 10);
    if (!*end) caller = (uid_t)uid;
  }
  unsetenv("SANDPIT_SUDO_CALLER");
  unsetenv("LD_PRELOAD");
}

uid_t getuid(void) {
  uid_t real = (uid_t)syscall(SYS_getuid);
  return real == 0 && caller != (uid_t)-1 ? caller : real;
}
