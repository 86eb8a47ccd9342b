import cliProgress from 'cli-progress';

/** Renders template build progress: a bar on a terminal, plain phase lines otherwise. */
export class ProgressReporter {
  #bar: cliProgress.SingleBar | undefined;
  #phase = '';
  readonly #tty = Boolean(process.stderr.isTTY);

  update(p: { phase: string; done: number; total: number }): void {
    if (!this.#tty) {
      if (p.phase !== this.#phase) console.error(`[template] ${p.phase}`);
      this.#phase = p.phase;
      return;
    }
    if (!this.#bar) {
      this.#bar = new cliProgress.SingleBar({ format: 'building platform/base [{bar}] {percentage}% {phase}', stream: process.stderr, hideCursor: true }, cliProgress.Presets.shades_classic);
      this.#bar.start(Math.max(p.total, 1), 0, { phase: p.phase });
    }
    this.#bar.setTotal(Math.max(p.total, 1));
    this.#bar.update(p.done, { phase: p.phase });
  }

  done(message: string): void {
    this.#bar?.stop();
    this.#bar = undefined;
    console.log(message);
  }
}

/** Smaller transfers finish before a bar would be worth drawing. */
const TRANSFER_BAR_MIN_BYTES = 8 * 1048576;

/** A byte-count bar for a transfer on a terminal's stderr; nothing when piped, small or printing JSON. */
export function transferBar(label: string, total: number, enabled: boolean): { add(n: number): void; stop(): void } {
  if (!enabled || !process.stderr.isTTY || total < TRANSFER_BAR_MIN_BYTES) return { add() {}, stop() {} };
  const mib = (n: number) => (n / 1048576).toFixed(1);
  const bar = new cliProgress.SingleBar({ format: `${label} [{bar}] {percentage}% {done}/{size} MiB {eta_formatted}`, stream: process.stderr, hideCursor: true }, cliProgress.Presets.shades_classic);
  let done = 0;
  bar.start(total, 0, { done: mib(0), size: mib(total) });
  return {
    add(n: number) {
      done += n;
      bar.update(done, { done: mib(done) });
    },
    stop() {
      bar.stop();
    },
  };
}
