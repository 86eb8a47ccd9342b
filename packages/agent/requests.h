/* The host's requests, each routed to the unit that handles it (PROTOCOL.md lists them). */
#ifndef SANDPIT_REQUESTS_H
#define SANDPIT_REQUESTS_H

#include <stddef.h>
#include <stdint.h>

struct conn;

/* 0: handled; -1: malformed, drop the connection. */
int handle_frame(struct conn *c, uint8_t type, uint32_t id, const uint8_t *pl, size_t plen);

#endif
