/* FILE_NOW: small file operations run by the agent itself, as the requesting user (PROTOCOL.md). */
#ifndef SANDPIT_FILES_NOW_H
#define SANDPIT_FILES_NOW_H

#include <stddef.h>
#include <stdint.h>

#include "agent.h"

/* Answers with OK or ERROR; -1 only for a malformed payload (the connection is dropped). */
int handle_file_now(struct conn *c, uint32_t id, const uint8_t *pl, size_t plen);

#endif
