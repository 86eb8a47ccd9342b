import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { type Platform, type StartOptions, startPlatform } from '../../src/server.ts';
import { baseRecipe, recipeHash } from '../../src/templates/base-recipe.ts';
import { MemoryDriver } from '../fakes/memory-driver.ts';
import { testDatabase } from './postgres.ts';
import { Api, SIDE_BY_SIDE } from './server-process.ts';

/** The real services and routes on an engine kept in memory (see fake-engine.test.ts), on a temp data dir. */
export class FakePlatform {
  readonly dir: string;
  readonly key: string;
  readonly engine = new MemoryDriver();
  readonly env: Record<string, string>;
  readonly options: Partial<StartOptions>;
  clock: ManualClock;
  platform: Platform | undefined;
  database: { url: string; drop: () => Promise<void> } | undefined;

  private constructor(dir: string, key: string, clock: ManualClock, env: Record<string, string>, options: Partial<StartOptions>) {
    this.dir = dir;
    this.key = key;
    this.clock = clock;
    this.env = env;
    this.options = options;
  }

  static async start(opts: { key?: string; clock?: ManualClock; env?: Record<string, string>; options?: Partial<StartOptions> } = {}): Promise<FakePlatform> {
    const dir = await mkdtemp(join(tmpdir(), 'sandpit-fake-'));
    // platform/base is only a path to a fake engine: an empty root where the cache would have it.
    await mkdir(join(dir, 'images', 'templates', 'platform-base', recipeHash(baseRecipe()), 'rootfs'), { recursive: true });
    const f = new FakePlatform(dir, opts.key ?? 'sp_fake_platform_test_key_0123456789', opts.clock ?? new ManualClock(Date.UTC(2031, 0, 10, 12)), opts.env ?? {}, opts.options ?? {});
    f.database = await testDatabase();
    await f.open();
    return f;
  }

  async open(): Promise<void> {
    const config = loadConfig({
      PORT: '0',
      HOST: '127.0.0.1',
      SANDPIT_PUBLIC_HOST: '127.0.0.1',
      SANDPIT_DATA_DIR: join(this.dir, 'data'),
      SANDPIT_IMAGE_DIR: join(this.dir, 'images'),
      SANDPIT_DATABASE_URL: this.database?.url ?? '',
      SANDPIT_BOOTSTRAP_API_KEY: this.key,
      SANDPIT_LOG_LEVEL: 'silent',
      SANDPIT_RATE_LIMIT: '0',
      ...SIDE_BY_SIDE,
      ...this.env,
    });
    // Timers run when a test says so.
    this.platform = await startPlatform(config, { clock: this.clock, engine: this.engine, timerIntervalMs: 3_600_000, ...this.options });
  }

  get p(): Platform {
    if (!this.platform) throw new Error('platform is not running');
    return this.platform;
  }

  api(key: string | undefined = this.key): Api {
    return new Api(this.p.url, key);
  }

  async close(): Promise<void> {
    await this.platform?.close();
    this.platform = undefined;
  }

  async destroy(): Promise<void> {
    await this.close();
    await rm(this.dir, { recursive: true, force: true });
    await this.database?.drop();
  }
}
