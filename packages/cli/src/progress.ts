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
      this.#bar = new cliProgress.SingleBar(
        { format: 'building platform/base [{bar}] {percentage}% {phase}', stream: process.stderr, hideCursor: true },
        cliProgress.Presets.shades_classic,
      );
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
