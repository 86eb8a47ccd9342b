#ifndef SANDPIT_SCREENSHOT_H
#define SANDPIT_SCREENSHOT_H

/* `--screenshot FILE [X Y W H]`: a PNG of an Xvfb framebuffer file on stdout (screenshot.c). */
int screenshot_main(int argc, char **argv);

#endif
