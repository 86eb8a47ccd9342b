/*
 * sudo where set-user-ID programs do not work (gVisor ignores the set-user-ID bit, as if every
 * process had no_new_privs). The agent binary is mounted over /usr/bin/sudo; run as `sudo`, it
 * hands its arguments, environment, working directory and standard streams to the agent (root)
 * over an abstract unix socket (with SCM_CREDENTIALS, which the kernel checks), and the agent starts
 * the real sudo binary as root for that caller, with the caller's groups and a preloaded shim
 * (sudo-shim.c) that names the caller as sudo's real uid, as a set-user-ID start would. The real
 * sudo then applies the sudoers policy as usual; the client relays signals and exits with the
 * command's status.
 */
#ifndef SANDPIT_SUDO_H
#define SANDPIT_SUDO_H

#include <stdint.h>
#include <sys/types.h>

struct watch;

/* The client: what the agent binary does when run as `sudo`. Returns the exit status. */
int sudo_client_main(int argc, char **argv);

/*
 * Agent side: listens for clients. `real`: the real sudo in the sandbox; `shim`: sudo-shim.c's library,
 * preloaded into it to name the caller. -1 with errno on failure.
 */
int sudo_serve(const char *real, const char *shim);
/* The listening socket or a client's connection has an event. */
void sudo_event(struct watch *w, uint32_t events);
/* A child was reaped: if it was started for a client, its status goes back to it. 1 when it was ours. */
int sudo_reaped(pid_t pid, int status);
/* Frees finished runs; deferred like the loop's other frees. */
void sudo_sweep(void);

#endif
