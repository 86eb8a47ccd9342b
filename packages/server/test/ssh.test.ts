import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import ssh2 from 'ssh2';
import { Api, CLI, freePort, ServerProcess } from './helpers/server-process.ts';
import { getThroughForward, run, serveOn8080, strictSshOptions } from './helpers/ssh-client.ts';

/**
 * The SSH gateway with Debian's OpenSSH client (ssh, scp, sftp), plus raw and abrupt clients:
 * logins by team key or access token, shells on a pty, commands with their exit status, file
 * transfer, -L forwarding, refusals that reveal nothing, and the gateway outliving bad clients.
 */
let server: ServerProcess;
let api: Api;
let sshPort: number;
let dir: string;
let keyFile: string;
let knownHosts: string;

before(async () => {
  sshPort = await freePort();
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'container', SANDPIT_SSH_PORT: String(sshPort) });
  api = new Api(server.url, server.key);
  dir = await mkdtemp(join(tmpdir(), 'sandpit-ssh-test-'));
  keyFile = join(dir, 'id_ed25519');
  assert.equal(spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'test@sandpit', '-f', keyFile]).status, 0);
  // The host key the server generated in its data directory: the client checks it strictly.
  const hostPub = spawnSync('ssh-keygen', ['-y', '-f', join(server.dataDir, 'ssh_host_ed25519_key')], { encoding: 'utf8' });
  assert.equal(hostPub.status, 0, hostPub.stderr);
  knownHosts = join(dir, 'known_hosts');
  await writeFile(knownHosts, `[127.0.0.1]:${sshPort} ${hostPub.stdout.trim()}\n`);
});
after(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const sshOpts = (extra: string[] = []) => strictSshOptions(knownHosts, extra);
const keyOpts = () => sshOpts(['-i', keyFile, '-o', 'BatchMode=yes', '-o', 'PasswordAuthentication=no']);

const ssh = (id: string, command: string[], input = '', opts = keyOpts()) => run('ssh', [...opts, '-p', String(sshPort), `${id}@127.0.0.1`, ...command], input);

async function create(a = api): Promise<{ id: string; access_token: string }> {
  const res = await a.post('/sandboxes', {});
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

async function exec(id: string, command: string): Promise<string> {
  const res = await api.post(`/sandboxes/${id}/exec`, { command });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.stdout;
}

/** An askpass helper that answers the password prompt with `secret`. */
async function askpass(secret: string): Promise<Record<string, string>> {
  const file = join(dir, `askpass-${randomBytes(4).toString('hex')}.sh`);
  await writeFile(file, `#!/bin/sh\nprintf '%s\\n' '${secret}'\n`);
  await chmod(file, 0o700);
  return { SSH_ASKPASS: file, SSH_ASKPASS_REQUIRE: 'force', DISPLAY: ':0' };
}

describe('ssh keys', () => {
  test('POST /ssh-keys: bad input is 400 and stores nothing; a key is added once; GET lists it; /info names the port', async () => {
    for (const bad of ['not a key', 'ssh-ed25519 AAAA', (await readFile(keyFile, 'utf8')).trim()]) {
      const res = await api.post('/ssh-keys', { public_key: bad });
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.equal(res.body.error.code, 'bad_request');
    }
    assert.equal((await api.post('/ssh-keys', {})).status, 400);
    assert.deepEqual((await api.get('/ssh-keys')).body.ssh_keys, []);
    const pub = (await readFile(`${keyFile}.pub`, 'utf8')).trim();
    const added = await api.post('/ssh-keys', { public_key: pub });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const fp = spawnSync('ssh-keygen', ['-l', '-f', `${keyFile}.pub`], { encoding: 'utf8' }).stdout.split(' ')[1];
    assert.equal(added.body.fingerprint, fp);
    assert.equal(added.body.name, 'test@sandpit');
    assert.equal(added.body.algorithm, 'ssh-ed25519');
    assert.equal((await api.post('/ssh-keys', { public_key: pub, name: 'again' })).status, 409);
    const list = await api.get('/ssh-keys');
    assert.deepEqual(
      list.body.ssh_keys.map((k: any) => k.id),
      [added.body.id],
    );
    assert.equal((await api.del(`/ssh-keys/${randomBytes(8).toString('hex')}`)).status, 404);
    assert.equal((await new Api(server.url).get('/ssh-keys')).status, 401);
    assert.equal((await api.get('/info')).body.ssh_port, sshPort);
  });
});

describe('sessions', () => {
  let sb: { id: string; access_token: string };
  before(async () => {
    sb = await create();
  });

  test('ssh <id>@host <command>: output, stderr, exit status and stdin, as user', async () => {
    const r = await ssh(sb.id, ['id -un; pwd; echo oops >&2; exit 7']);
    assert.deepEqual([r.status, r.stdout, r.stderr], [7, 'user\n/home/user\n', 'oops\n']);
    const piped = await ssh(sb.id, ['tr a-z A-Z; exit 3'], 'shout\n');
    assert.deepEqual([piped.status, piped.stdout], [3, 'SHOUT\n']);
  });

  test('a shell on a pty: the prompt, the command typed, the terminal size', async () => {
    const r = await ssh(sb.id, ['-tt'], 'stty size; echo "sum=$((6*7))"; tty; exit\n', [...keyOpts(), '-o', 'RequestTTY=force']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /sum=42/);
    assert.match(r.stdout, /\/dev\/pts\/\d+/);
  });

  test('the access token as a password logs in; a wrong one is refused', async () => {
    const good = await ssh(sb.id, ['echo in'], '', sshOpts(['-o', 'PubkeyAuthentication=no', '-o', 'NumberOfPasswordPrompts=1']));
    // No askpass: the prompt cannot be answered, so this one fails; the next answers it.
    assert.notEqual(good.status, 0);
    const env = await askpass(sb.access_token);
    const ok = await run('ssh', [...sshOpts(['-o', 'PubkeyAuthentication=no', '-o', 'NumberOfPasswordPrompts=1']), '-p', String(sshPort), `${sb.id}@127.0.0.1`, 'echo in'], '', env);
    assert.deepEqual([ok.status, ok.stdout], [0, 'in\n'], ok.stderr);
    const bad = await run(
      'ssh',
      [...sshOpts(['-o', 'PubkeyAuthentication=no', '-o', 'NumberOfPasswordPrompts=1']), '-p', String(sshPort), `${sb.id}@127.0.0.1`, 'echo in'],
      '',
      await askpass('spt_wrong'),
    );
    assert.equal(bad.status, 255);
    assert.equal(bad.stdout, '');
  });

  test('scp and sftp move files both ways, byte for byte', async () => {
    const local = join(dir, 'blob.bin');
    const data = randomBytes(5 * 1024 * 1024 + 123);
    await writeFile(local, data);
    const sha = createHash('sha256').update(data).digest('hex');
    const up = await run('scp', [...keyOpts(), '-P', String(sshPort), local, `${sb.id}@127.0.0.1:blob.bin`]);
    assert.equal(up.status, 0, up.stderr);
    assert.equal((await exec(sb.id, 'sha256sum /home/user/blob.bin')).split(' ')[0], sha);
    const back = join(dir, 'back.bin');
    const down = await run('scp', [...keyOpts(), '-P', String(sshPort), `${sb.id}@127.0.0.1:/home/user/blob.bin`, back]);
    assert.equal(down.status, 0, down.stderr);
    assert.equal(
      createHash('sha256')
        .update(await readFile(back))
        .digest('hex'),
      sha,
    );

    const batch = ['mkdir d', 'put ' + local + ' d/one.bin', 'rename d/one.bin d/two.bin', 'ls -l d', 'get d/two.bin ' + join(dir, 'two.bin'), 'rm d/two.bin', 'rmdir d', 'ls'].join('\n');
    const s = await run('sftp', [...keyOpts(), '-P', String(sshPort), '-b', '-', `${sb.id}@127.0.0.1`], `${batch}\n`);
    assert.equal(s.status, 0, s.stderr + s.stdout);
    assert.match(s.stdout, /two\.bin/);
    assert.equal(
      createHash('sha256')
        .update(await readFile(join(dir, 'two.bin')))
        .digest('hex'),
      sha,
    );
    assert.equal(await exec(sb.id, 'test -e /home/user/d && echo left || echo gone'), 'gone\n');
    const missing = await run('sftp', [...keyOpts(), '-P', String(sshPort), '-b', '-', `${sb.id}@127.0.0.1`], 'get /nope/none.txt /tmp/x\n');
    assert.notEqual(missing.status, 0);
  });

  test('sandpit ssh runs a command with the access token and passes its exit status; sandpit ssh-key add/list/delete', async () => {
    const cli = (args: string[]) => run(process.execPath, [CLI, ...args, '--api-url', server.url, '--api-key', server.key]);
    const strict = ['-o', `UserKnownHostsFile=${knownHosts}`, '-o', 'StrictHostKeyChecking=yes', '-o', 'PubkeyAuthentication=no', '-o', 'LogLevel=ERROR'];
    const r = await run(process.execPath, [CLI, 'ssh', sb.id, ...strict, '--api-url', server.url, '--api-key', server.key, '--', 'echo via-cli; exit 5']);
    assert.deepEqual([r.status, r.stdout], [5, 'via-cli\n'], r.stderr);
    const refused = await run(process.execPath, [CLI, 'ssh', sb.id, ...strict, '--keys-only', '--api-url', server.url, '--api-key', server.key, '--', 'true']);
    assert.equal(refused.status, 255);

    const extra = join(dir, 'id_cli');
    assert.equal(spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'cli-key', '-f', extra]).status, 0);
    const added = await cli(['ssh-key', 'add', `${extra}.pub`, '--name', 'from-cli', '--json']);
    assert.equal(added.status, 0, added.stderr);
    const key = JSON.parse(added.stdout);
    assert.equal(key.name, 'from-cli');
    const listed = await cli(['ssh-key', 'list', '--json']);
    assert.ok(JSON.parse(listed.stdout).some((k: { id: string }) => k.id === key.id));
    const withKey = await ssh(sb.id, ['echo by-key'], '', sshOpts(['-i', extra, '-o', 'BatchMode=yes', '-o', 'PasswordAuthentication=no']));
    assert.deepEqual([withKey.status, withKey.stdout], [0, 'by-key\n'], withKey.stderr);
    assert.equal((await cli(['ssh-key', 'delete', key.id])).status, 0);
    const listedAfter = await cli(['ssh-key', 'list', '--json']);
    assert.ok(!JSON.parse(listedAfter.stdout).some((k: { id: string }) => k.id === key.id));
    const afterDelete = await ssh(sb.id, ['echo by-key'], '', sshOpts(['-i', extra, '-o', 'BatchMode=yes', '-o', 'PasswordAuthentication=no']));
    assert.equal(afterDelete.status, 255);
  });

  test('ssh -L forwards a local port to a port inside the sandbox', async () => {
    await exec(sb.id, serveOn8080('from-sandbox'));
    assert.equal(await getThroughForward(keyOpts(), sshPort, sb.id), 'from-sandbox\n');
  });

  test('a paused sandbox is resumed by a login', async () => {
    const p = await create();
    assert.equal((await api.post(`/sandboxes/${p.id}/pause`)).status, 200);
    assert.equal((await api.get(`/sandboxes/${p.id}`)).body.status, 'paused');
    const r = await ssh(p.id, ['echo awake']);
    assert.deepEqual([r.status, r.stdout], [0, 'awake\n'], r.stderr);
    assert.equal((await api.get(`/sandboxes/${p.id}`)).body.status, 'active');
    await api.del(`/sandboxes/${p.id}`);
  });
});

describe('refusals and bad clients', () => {
  test("a wrong key, another team's sandbox, a deleted one and no such sandbox are refused alike", async () => {
    const mine = await create();
    const made = spawnSync(process.execPath, [CLI, 'team', 'create', 'ssh-other', '--json'], {
      env: { ...process.env, SANDPIT_DATA_DIR: server.dataDir, SANDPIT_DATABASE_URL: server.env.SANDPIT_DATABASE_URL ?? '' },
      encoding: 'utf8',
    });
    assert.equal(made.status, 0, made.stderr);
    const theirs = await create(new Api(server.url, JSON.parse(made.stdout).api_key));
    const gone = await create();
    assert.equal((await api.del(`/sandboxes/${gone.id}`)).status, 204);
    const otherKey = join(dir, 'id_other');
    assert.equal(spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', otherKey]).status, 0);
    const wrongKey = sshOpts(['-i', otherKey, '-o', 'BatchMode=yes', '-o', 'PasswordAuthentication=no']);
    const outcomes = [
      await ssh(mine.id, ['true'], '', wrongKey),
      await ssh(theirs.id, ['true']),
      await ssh(gone.id, ['true']),
      await ssh('00000000-0000-4000-8000-000000000000', ['true']),
      await ssh('root', ['true']),
    ];
    for (const r of outcomes) {
      assert.equal(r.status, 255);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /Permission denied \(publickey,password\)/);
    }
    assert.equal(new Set(outcomes.map((r) => r.stderr.replace(/\S+@127\.0\.0\.1/, 'X'))).size, 1);
    assert.equal((await ssh(mine.id, ['echo still-mine'])).stdout, 'still-mine\n');
    await api.del(`/sandboxes/${mine.id}`);
  });

  test('garbage, silent and abruptly closed clients leave the gateway serving, and a dropped session hangs up its process', async () => {
    const sb = await create();
    // Garbage instead of a version line, then gone.
    await new Promise<void>((resolve) => {
      const s = connect(sshPort, '127.0.0.1', () => s.end(randomBytes(4096)));
      // Read what the gateway answers: a socket never read never sees the gateway's end, and so never closes.
      s.resume();
      s.on('error', () => resolve());
      s.on('close', () => resolve());
    });
    // Half-open: connected and silent (kept while the next logins run), and one reset mid-handshake.
    const silent = connect(sshPort, '127.0.0.1');
    silent.on('error', () => undefined);
    await new Promise<void>((resolve) => {
      const s = connect(sshPort, '127.0.0.1', () => s.write('SSH-2.0-half\r\n'));
      s.once('data', () => {
        s.resetAndDestroy();
        resolve();
      });
      s.on('error', () => resolve());
    });
    // A client killed while its shell runs a long command: the command is hung up.
    const child: ChildProcess = spawn('ssh', [...keyOpts(), '-tt', '-p', String(sshPort), `${sb.id}@127.0.0.1`, 'sleep 4242'], { stdio: 'ignore' });
    let seen = '';
    for (let i = 0; i < 100 && !seen.includes('sleep 4242'); i++) {
      seen = await exec(sb.id, 'ps -eo args');
      if (!seen.includes('sleep 4242')) await new Promise((r) => setTimeout(r, 100));
    }
    assert.match(seen, /sleep 4242/);
    child.kill('SIGKILL');
    let left = seen;
    for (let i = 0; i < 100 && left.includes('sleep 4242'); i++) {
      await new Promise((r) => setTimeout(r, 100));
      left = await exec(sb.id, 'ps -eo args');
    }
    assert.doesNotMatch(left, /sleep 4242/);
    // A library client that vanishes without closing its channel.
    await new Promise<void>((resolve, reject) => {
      const c = new ssh2.Client();
      c.on('ready', () =>
        c.exec('sleep 30', (err) => {
          if (err) return reject(err);
          (c as unknown as { _sock: { destroy(): void } })._sock.destroy();
          resolve();
        }),
      );
      // A refused login fails the test here instead of leaving it waiting; errors after the drop are moot.
      c.on('error', reject);
      c.connect({ host: '127.0.0.1', port: sshPort, username: sb.id, password: sb.access_token, hostVerifier: () => true });
    });
    const r = await ssh(sb.id, ['echo alive']);
    assert.deepEqual([r.status, r.stdout], [0, 'alive\n'], r.stderr);
    silent.destroy();
    await api.del(`/sandboxes/${sb.id}`);
  });

  // Last: it leaves this address throttled for the rest of the window.
  test('failed logins from one address are throttled: then even the right token is refused', async () => {
    const sb = await create();
    const attempt = (password: string) =>
      new Promise<boolean>((resolve) => {
        const c = new ssh2.Client();
        c.on('ready', () => {
          c.end();
          resolve(true);
        });
        c.on('error', () => resolve(false));
        c.connect({ host: '127.0.0.1', port: sshPort, username: sb.id, password, hostVerifier: () => true, readyTimeout: 20_000 });
      });
    assert.equal(await attempt(sb.access_token), true);
    let failures = 0;
    while (failures < 120) {
      assert.equal(await attempt(`wrong-${failures}`), false);
      failures++;
    }
    assert.equal(await attempt(sb.access_token), false);
    await api.del(`/sandboxes/${sb.id}`);
  });
});
