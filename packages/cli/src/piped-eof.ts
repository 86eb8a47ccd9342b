import type { TerminalConnection } from './sdk.ts';

/** Ctrl-D: at the start of a line the remote shell reads it as end of input. */
const EOT = '\x04';
const QUIET_MS = 250;

/**
 * Ends piped input on a remote terminal. A pty turns a Ctrl-D that arrives while the program is
 * still in line mode (a shell that has not started its line editor yet) into a NUL byte once the
 * editor switches to raw mode, so the shell would wait forever. Like a pipe, whose end stays the
 * end for every later read, Ctrl-D is sent at once and again each time the terminal falls quiet
 * after output, until the session exits.
 */
export function endPipedInput(term: TerminalConnection): () => void {
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const send = () => {
    timer = undefined;
    if (!done) term.write(EOT);
  };
  term.onData(() => {
    if (done) return;
    clearTimeout(timer);
    timer = setTimeout(send, QUIET_MS);
  });
  const stop = () => {
    done = true;
    clearTimeout(timer);
  };
  term.onExit(stop);
  send();
  return stop;
}
