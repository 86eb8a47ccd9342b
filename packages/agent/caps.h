/* The capability only the agent itself holds, for its MOUNT request: every process it starts loses it for good. */
#ifndef SANDPIT_CAPS_H
#define SANDPIT_CAPS_H

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Raw syscalls: safe in a vfork child. Out of the bounding set, an exec as root does not get it back. */
static inline int drop_agent_caps(void) {
  if (syscall(SYS_prctl, PR_CAPBSET_READ, CAP_SYS_ADMIN, 0, 0, 0) <= 0) return 0;
  return (int)syscall(SYS_prctl, PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0);
}

#endif
