import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { unmountUnder } from '../../src/runtime/container/mounts.ts';
import { type Platform, startPlatform } from '../../src/server.ts';
import { Api, IMAGE_DIR } from './server-process.ts';

/** A platform started in this process on a temp data dir, with a clock the test moves. */
export class InProcess {
  readonly dataDir: string;
  readonly key: string;
  platform: Platform | undefined;
  clock: ManualClock;

  private constructor(dataDir: string, key: string, clock: ManualClock) {
    this.dataDir = dataDir;
    this.key = key;
    this.clock = clock;
  }

  static async start(startMs: number, key: string): Promise<InProcess> {
    const p = new InProcess(await mkdtemp(join(tmpdir(), 'sandpit-billing-')), key, new ManualClock(startMs));
    await p.open();
    return p;
  }

  /** (Re)starts the platform on the same data dir, optionally on a new clock. */
  async open(clock: ManualClock = this.clock): Promise<void> {
    this.clock = clock;
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      SANDPIT_PUBLIC_HOST: '127.0.0.1',
      SANDPIT_DATA_DIR: this.dataDir,
      SANDPIT_IMAGE_DIR: IMAGE_DIR,
      SANDPIT_BOOTSTRAP_API_KEY: this.key,
      SANDPIT_LOG_LEVEL: 'warn',
      SANDPIT_RATE_LIMIT: '0',
    });
    this.platform = await startPlatform(config, { clock });
    await this.platform.templates.base();
  }

  get p(): Platform {
    if (!this.platform) throw new Error('platform is not running');
    return this.platform;
  }

  api(key: string | undefined = this.key): Api {
    return new Api(this.p.url, key);
  }

  /** Stops serving; sandboxes keep running, as after a server restart. */
  async close(): Promise<void> {
    await this.platform?.close();
    this.platform = undefined;
  }

  /** Destroys every sandbox the engine holds, stops, unmounts and removes the data dir. */
  async destroy(): Promise<void> {
    // Reopen after a failure between close and open, so the engine's sandboxes can still be found.
    if (!this.platform) await this.open().catch(() => undefined);
    if (this.platform) {
      for (const id of await this.platform.driver.list()) await this.platform.driver.destroy(id).catch(() => undefined);
      await this.close();
    }
    await unmountUnder(this.dataDir);
    await rm(this.dataDir, { recursive: true, force: true });
  }
}
