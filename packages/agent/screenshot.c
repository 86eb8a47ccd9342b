/*
 * `sandpit-agent --screenshot FILE [X Y W H]`: a PNG of an X display's framebuffer on stdout.
 *
 * Xvfb started with `-fbdir DIR` keeps its screen as an XWD file in DIR (Xvfb_screen0), mapped and
 * drawn into directly. Reading that file and compressing it here costs a few milliseconds of native
 * work; asking the X server for the image (scrot: XGetImage, then imlib2) costs hundreds under
 * gVisor, and moving the raw 4 MB out of the sandbox to compress it on the host costs ~100 ms.
 * Rows are read and compressed a band at a time through small buffers used over and over: under
 * gVisor every first touch of a page is a fault the sentry serves, and mapping the 4 MB file (or
 * allocating whole-image buffers) cost ~200 ms of them.
 * The image is what the server last drew, the software cursor included (scrot --pointer does the same).
 *
 * Exit codes: 0 a PNG was written; 64 the region lies outside the screen (message on stderr);
 * 69 no framebuffer to read here (no such file, or a format this does not read: the caller falls
 * back to asking the X server); 1 anything else.
 */
#define _GNU_SOURCE
#include "screenshot.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "files.h"

enum { EX_REGION = 64, EX_NOFB = 69 };

/* The fixed part of an XWD file header (X11/XWDFile.h, version 7): 25 big-endian 32-bit words. */
enum {
  H_SIZE = 0, H_VERSION = 1, H_FORMAT = 2, H_DEPTH = 3, H_WIDTH = 4, H_HEIGHT = 5,
  H_BYTE_ORDER = 7, H_BPP = 11, H_BPL = 12, H_RED = 14, H_GREEN = 15, H_BLUE = 16, H_NCOLORS = 19,
  H_WORDS = 25,
};
#define XWD_VERSION 7
#define ZPIXMAP 2
#define COLOR_ENTRY_BYTES 12

static int write_chunk(const char type[4], const uint8_t *data, uint32_t len) {
  uint8_t head[8];
  uint32_t be = htonl(len);
  memcpy(head, &be, 4);
  memcpy(head + 4, type, 4);
  uLong crc = crc32(crc32(0, NULL, 0), (const Bytef *)type, 4);
  if (len) crc = crc32(crc, data, len);
  uint32_t crc_be = htonl((uint32_t)crc);
  return write_all(STDOUT_FILENO, head, 8) || (len && write_all(STDOUT_FILENO, data, len)) || write_all(STDOUT_FILENO, (const uint8_t *)&crc_be, 4) ? -1 : 0;
}

/* The bit position of a channel's lowest set bit in its mask, or -1 for a mask this does not read. */
static int shift_of(uint32_t mask) {
  for (int s = 0; s <= 24; s += 8)
    if (mask == 0xffu << s) return s;
  return -1;
}

static int fail(int code, const char *fmt, const char *arg) {
  fprintf(stderr, fmt, arg);
  fputc('\n', stderr);
  return code;
}

/* The compressed stream, written out as IDAT chunks whenever its buffer fills. */
struct idat {
  z_stream z;
  uint8_t out[64 * 1024];
};

static int idat_feed(struct idat *d, uint8_t *in, size_t n, int flush) {
  d->z.next_in = in;
  d->z.avail_in = (uInt)n;
  for (;;) {
    int rc = deflate(&d->z, flush);
    if (rc == Z_STREAM_ERROR) return -1;
    if (d->z.avail_out == 0) {
      if (write_chunk("IDAT", d->out, sizeof d->out)) return -1;
      d->z.next_out = d->out;
      d->z.avail_out = sizeof d->out;
    } else if (flush == Z_FINISH) {
      return rc == Z_STREAM_END ? write_chunk("IDAT", d->out, (uint32_t)(sizeof d->out - d->z.avail_out)) : -1;
    } else if (d->z.avail_in == 0) {
      return 0;
    }
  }
}

enum { BAND_ROWS = 16 };

int screenshot_main(int argc, char **argv) {
  if (argc != 3 && argc != 7) return fail(1, "usage: %s --screenshot FILE [X Y W H]", argv[0]);
  int fd = open(argv[2], O_RDONLY | O_CLOEXEC);
  if (fd < 0) return fail(EX_NOFB, "no framebuffer at %s", argv[2]);
  struct stat st;
  uint32_t h[H_WORDS];
  if (fstat(fd, &st) < 0 || pread(fd, h, sizeof h, 0) != (ssize_t)sizeof h) return fail(EX_NOFB, "%s is not a framebuffer", argv[2]);
  for (int i = 0; i < H_WORDS; i++) h[i] = ntohl(h[i]);
  int rs = shift_of(h[H_RED]), gs = shift_of(h[H_GREEN]), bs = shift_of(h[H_BLUE]);
  /* Only what Xvfb writes at depth 24: 32-bit little-endian pixels, one byte per channel. */
  if (h[H_VERSION] != XWD_VERSION || h[H_FORMAT] != ZPIXMAP || h[H_BPP] != 32 || h[H_BYTE_ORDER] != 0 || rs < 0 || gs < 0 || bs < 0)
    return fail(EX_NOFB, "%s holds a framebuffer format this does not read", argv[2]);
  uint64_t sw = h[H_WIDTH], sh = h[H_HEIGHT], bpl = h[H_BPL];
  uint64_t pixels_at = (uint64_t)h[H_SIZE] + (uint64_t)h[H_NCOLORS] * COLOR_ENTRY_BYTES;
  if (sw == 0 || sh == 0 || sw > 1 << 15 || sh > 1 << 15 || bpl < sw * 4 || pixels_at + bpl * sh > (uint64_t)st.st_size)
    return fail(EX_NOFB, "%s is shorter than its header says", argv[2]);

  long long x = 0, y = 0, w = (long long)sw, hgt = (long long)sh;
  if (argc == 7) {
    x = atoll(argv[3]), y = atoll(argv[4]), w = atoll(argv[5]), hgt = atoll(argv[6]);
    /* Clipped to the screen, as scrot clips a selection. */
    long long x2 = x + w > (long long)sw ? (long long)sw : x + w, y2 = y + hgt > (long long)sh ? (long long)sh : y + hgt;
    if (x < 0) x = 0;
    if (y < 0) y = 0;
    w = x2 - x, hgt = y2 - y;
    if (w <= 0 || hgt <= 0) {
      char size[48];
      snprintf(size, sizeof size, "%llux%llu", (unsigned long long)sw, (unsigned long long)sh);
      return fail(EX_REGION, "the region lies outside the %s screen", size);
    }
  }

  static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  uint8_t ihdr[13];
  uint32_t wb = htonl((uint32_t)w), hb = htonl((uint32_t)hgt);
  memcpy(ihdr, &wb, 4);
  memcpy(ihdr + 4, &hb, 4);
  ihdr[8] = 8; /* bits per channel */
  ihdr[9] = 2; /* RGB */
  ihdr[10] = ihdr[11] = ihdr[12] = 0;
  if (write_all(STDOUT_FILENO, signature, sizeof signature) || write_chunk("IHDR", ihdr, sizeof ihdr)) return fail(1, "%s", "cannot write the image");

  static struct idat d;
  if (deflateInit(&d.z, Z_BEST_SPEED) != Z_OK) return fail(1, "%s", "compression failed");
  d.z.next_out = d.out;
  d.z.avail_out = sizeof d.out;
  /* A band of whole source rows, and one RGB row after its filter byte (0: none). */
  size_t band_len = (size_t)bpl * BAND_ROWS, row_len = 1 + (size_t)w * 3;
  uint8_t *band = malloc(band_len), *row = malloc(row_len);
  if (!band || !row) return fail(1, "%s", "out of memory");
  for (long long r0 = 0; r0 < hgt; r0 += BAND_ROWS) {
    long long rows = hgt - r0 < BAND_ROWS ? hgt - r0 : BAND_ROWS;
    size_t want = (size_t)bpl * (size_t)rows;
    if (pread(fd, band, want, (off_t)(pixels_at + (uint64_t)(y + r0) * bpl)) != (ssize_t)want) return fail(1, "cannot read %s", argv[2]);
    for (long long r = 0; r < rows; r++) {
      const uint32_t *src = (const uint32_t *)(band + (size_t)r * bpl) + x;
      uint8_t *dst = row;
      *dst++ = 0;
      for (long long c = 0; c < w; c++) {
        uint32_t p = src[c];
        *dst++ = (uint8_t)(p >> rs), *dst++ = (uint8_t)(p >> gs), *dst++ = (uint8_t)(p >> bs);
      }
      if (idat_feed(&d, row, row_len, Z_NO_FLUSH)) return fail(1, "%s", "cannot write the image");
    }
  }
  if (idat_feed(&d, NULL, 0, Z_FINISH) || write_chunk("IEND", NULL, 0)) return fail(1, "%s", "cannot write the image");
  return 0;
}
