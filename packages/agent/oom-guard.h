#ifndef SANDPIT_OOM_GUARD_H
#define SANDPIT_OOM_GUARD_H

/* Starts the out-of-memory guard thread; returns 0 or an errno value. */
int oom_guard_start(void);

#endif
