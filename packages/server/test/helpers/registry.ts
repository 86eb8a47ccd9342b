import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '../../src/runtime/container/run-command.ts';
import { freePort } from './server-process.ts';

/** Debian's docker-registry on a loopback port with its own config and storage (never the system service). */
export class TestRegistry {
  readonly dir: string;
  readonly port: number;
  readonly child: ChildProcess;
  output = '';

  private constructor(dir: string, port: number, child: ChildProcess) {
    this.dir = dir;
    this.port = port;
    this.child = child;
    child.stdout?.on('data', (d) => (this.output += d));
    child.stderr?.on('data', (d) => (this.output += d));
  }

  get host(): string {
    return `127.0.0.1:${this.port}`;
  }

  get storage(): string {
    return join(this.dir, 'storage');
  }

  /** With `auth`, every request needs basic credentials (htpasswd). */
  static async start(auth?: { username: string; password: string }): Promise<TestRegistry> {
    const dir = await mkdtemp(join(tmpdir(), 'sandpit-registry-'));
    const port = await freePort();
    let authConfig = '';
    if (auth) {
      const { stdout } = await runCommand('htpasswd', ['-Bbn', auth.username, auth.password]);
      await writeFile(join(dir, 'htpasswd'), stdout);
      authConfig = `auth:\n  htpasswd:\n    realm: sandpit-test\n    path: ${join(dir, 'htpasswd')}\n`;
    }
    const config = [
      'version: 0.1',
      'log:',
      '  level: error',
      '  accesslog:',
      '    disabled: true',
      'storage:',
      '  filesystem:',
      `    rootdirectory: ${join(dir, 'storage')}`,
      '  delete:',
      '    enabled: true',
      'http:',
      `  addr: 127.0.0.1:${port}`,
      authConfig,
    ].join('\n');
    await writeFile(join(dir, 'config.yml'), config);
    const child = spawn('docker-registry', ['serve', join(dir, 'config.yml')], { stdio: ['ignore', 'pipe', 'pipe'] });
    const r = new TestRegistry(dir, port, child);
    const deadline = Date.now() + 20_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`docker-registry exited: ${r.output}`);
      const ok = await fetch(`http://${r.host}/v2/`).then((res) => res.status === 200 || res.status === 401, () => false);
      if (ok) return r;
      if (Date.now() > deadline) throw new Error(`docker-registry did not start: ${r.output}`);
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  /** The file holding a blob as the registry serves it (for tests that corrupt one). */
  blobPath(digest: string): string {
    const hex = digest.replace('sha256:', '');
    return join(this.storage, 'docker/registry/v2/blobs/sha256', hex.slice(0, 2), hex, 'data');
  }

  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((r) => this.child.once('exit', r));
      this.child.kill('SIGTERM');
      await exited;
    }
    await rm(this.dir, { recursive: true, force: true });
  }
}
