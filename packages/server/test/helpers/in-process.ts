import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { teardownEngine } from '../../src/teardown.ts';
import { type Platform, startPlatform } from '../../src/server.ts';
import { testDatabase } from './postgres.ts';
import { Api, IMAGE_DIR, SIDE_BY_SIDE } from './server-process.ts';

/** A platform started in this process on a temp data dir, with a clock the test moves. */
export class InProcess {
  readonly dataDir: string;
  readonly key: string;
  platform: Platform | undefined;
  clock: ManualClock;
  database: { url: string; drop: () => Promise<void> } | undefined;

  private constructor(dataDir: string, key: string, clock: ManualClock) {
    this.dataDir = dataDir;
    this.key = key;
    this.clock = clock;
  }

  static async start(startMs: number, key: string): Promise<InProcess> {
    const p = new InProcess(await mkdtemp(join(tmpdir(), 'sandpit-billing-')), key, new ManualClock(startMs));
    p.database = await testDatabase();
    await p.open();
    return p;
  }

  config() {
    return loadConfig({
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      SANDPIT_PUBLIC_HOST: '127.0.0.1',
      SANDPIT_DATA_DIR: this.dataDir,
      SANDPIT_DATABASE_URL: this.database?.url ?? '',
      SANDPIT_IMAGE_DIR: IMAGE_DIR,
      SANDPIT_BOOTSTRAP_API_KEY: this.key,
      SANDPIT_LOG_LEVEL: 'warn',
      SANDPIT_RATE_LIMIT: '0',
      ...SIDE_BY_SIDE,
      // The engine under test follows the caller's choice (auto by default).
      SANDPIT_DRIVER: process.env.SANDPIT_DRIVER ?? '',
    });
  }

  /** (Re)starts the platform on the same data dir, optionally on a new clock. */
  async open(clock: ManualClock = this.clock): Promise<void> {
    this.clock = clock;
    this.platform = await startPlatform(this.config(), { clock });
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

  /** Stops, destroys whatever the engine still holds (a failed test's sandboxes), releases its mounts and removes the data dir. */
  async destroy(): Promise<void> {
    await this.close();
    await teardownEngine(this.config());
    await rm(this.dataDir, { recursive: true, force: true });
    await this.database?.drop();
  }
}
