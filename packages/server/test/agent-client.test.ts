import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { decodeTlv, decodeTlvList, EntryTag, EntryType, FrameDecoder, Msg, SpawnTag, TlvWriter, encodeFrame } from '../src/runtime/agent-protocol.ts';
import { AgentClient, type AgentError, type AgentProcess, type ExitInfo, type SpawnOptions } from '../src/runtime/agent-client.ts';

const repo = path.resolve(import.meta.dirname, '../../..');
const agentBin = path.join(repo, 'packages/agent/build/sandpit-agent');

before(() => {
  const r = spawnSync('make', ['-s', '-C', 'packages/agent'], { cwd: repo, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
});

interface Agent {
  socketPath: string;
  dir: string;
  child: ChildProcess;
}

/** Runs a fresh agent for one test; always stops it (by pid) and removes its directory. */
async function withAgent(fn: (agent: Agent, client: AgentClient) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandpit-agent-test-'));
  const socketPath = path.join(dir, 'agent.sock');
  const child = spawn(agentBin, ['--listen', socketPath], { stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((r) => child.once('exit', r));
  let client: AgentClient | undefined;
  try {
    client = await AgentClient.connect(socketPath, { timeoutMs: 5000 });
    await fn({ socketPath, dir, child }, client);
  } finally {
    client?.close();
    if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGTERM');
    await exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

interface Result extends ExitInfo {
  stdout: string;
  stderr: string;
}

function collect(p: AgentProcess): Promise<Result> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  p.on('stdout', (b) => out.push(b));
  p.on('stderr', (b) => err.push(b));
  return new Promise((resolve, reject) => {
    p.once('exit', (info) => resolve({ ...info, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString() }));
    p.once('error', reject);
  });
}

function run(client: AgentClient, argv: string[], opts: Partial<SpawnOptions> = {}): Promise<Result> {
  return collect(client.spawn({ argv, user: 'root', stdin: false, ...opts }));
}

function spawnError(p: AgentProcess): Promise<AgentError> {
  return new Promise((resolve, reject) => {
    p.once('error', resolve);
    p.once('exit', (info) => reject(new Error(`expected a spawn error, got exit ${JSON.stringify(info)}`)));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitGone(pid: number, ms = 2000): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (!alive(pid)) return true;
    await sleep(10);
  }
  return !alive(pid);
}

/** First line a process prints, as a number (scripts echo a pid). */
function firstLine(p: AgentProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let acc = '';
    p.on('stdout', (b) => {
      acc += b.toString();
      const nl = acc.indexOf('\n');
      if (nl >= 0) resolve(Number(acc.slice(0, nl)));
    });
    p.once('error', reject);
  });
}

test('true exits 0 and reports its pid', () =>
  withAgent(async (_a, client) => {
    const p = client.spawn({ argv: ['true'], user: 'root', stdin: false });
    const spawned = new Promise<number>((r) => p.once('spawn', r));
    const r = await collect(p);
    assert.deepEqual({ exitCode: r.exitCode, signal: r.signal, timedOut: r.timedOut }, { exitCode: 0, signal: null, timedOut: false });
    assert.ok((await spawned) > 0);
    assert.equal(p.pid, await spawned);
  }));

test('exit code, stdout and stderr are separate', () =>
  withAgent(async (_a, client) => {
    assert.equal((await run(client, ['sh', '-c', 'exit 3'])).exitCode, 3);
    const r = await run(client, ['sh', '-c', 'echo out; echo err >&2; echo out2']);
    assert.equal(r.stdout, 'out\nout2\n');
    assert.equal(r.stderr, 'err\n');
  }));

test('environment, cwd and user defaults', () =>
  withAgent(async (_a, client) => {
    await client.setEnv({ SANDBOX_A: 'one', SANDBOX_B: 'two' });
    const r = await run(client, ['sh', '-c', 'echo "$SANDBOX_A $SANDBOX_B $HOME $USER $(pwd)"'], {
      env: { SANDBOX_B: 'override' },
    });
    assert.equal(r.stdout, 'one override /root root /root\n');
    assert.equal((await run(client, ['pwd'], { cwd: '/tmp' })).stdout, '/tmp\n');
    await client.setEnv({ ONLY: 'x' }, { replace: true });
    const r2 = await run(client, ['sh', '-c', 'echo "${SANDBOX_A:-unset} $ONLY $PATH"']);
    assert.match(r2.stdout, /^unset x \/usr\/local\/sbin:/);
    await client.ping();
  }));

test('20 MiB of output arrives complete and in order', () =>
  withAgent(async (_a, client) => {
    const n = 3_000_000;
    const r = await run(client, ['seq', '1', String(n)]);
    let expected = '';
    for (let i = 1; i <= n; i++) expected += `${i}\n`;
    assert.ok(expected.length > 20 * 1024 * 1024);
    assert.equal(r.stdout.length, expected.length);
    assert.ok(r.stdout === expected, 'output differs');
    assert.equal(r.exitCode, 0);
  }));

test('switches to the requested user', () =>
  withAgent(async (_a, client) => {
    const r = await run(client, ['sh', '-c', 'echo $(id -u):$(id -g):$(id -G) $USER $HOME'], { user: 'nobody', cwd: '/tmp' });
    assert.equal(r.stdout, '65534:65534:65534 nobody /nonexistent\n');
    const e = await spawnError(client.spawn({ argv: ['true'], user: 'nobody' }));
    assert.match(e.message, /chdir \/nonexistent/);
  }));

test('a slow reader pauses the output instead of buffering it in the agent', () =>
  withAgent(async (agent, client) => {
    const raw = net.createConnection(agent.socketPath);
    await new Promise((r) => raw.once('connect', r));
    const w = new TlvWriter();
    for (const a of ['seq', '1', '3000000']) w.string(SpawnTag.argv, a);
    w.string(SpawnTag.user, 'root');
    raw.write(encodeFrame(Msg.spawn, 1, w.finish()));
    raw.pause();
    await sleep(300);
    const rssKiB = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${agent.child.pid}/status`, 'utf8'))![1]);
    assert.ok(rssKiB < 16 * 1024, `agent RSS ${rssKiB} KiB while the reader is stalled`);
    // Other connections are still served meanwhile.
    assert.equal((await run(client, ['echo', 'ok'])).stdout, 'ok\n');
    const decoder = new FrameDecoder();
    let bytes = 0;
    let last = '';
    const exit = new Promise<void>((resolve) => {
      raw.on('data', (chunk: Buffer) =>
        decoder.push(chunk, (type, _id, payload) => {
          if (type === Msg.stdout) {
            bytes += payload.length;
            last = (last + payload.toString()).slice(-20);
          }
          if (type === Msg.exit) resolve();
        }),
      );
    });
    raw.resume();
    await exit;
    raw.destroy();
    let expected = 0;
    for (let i = 1; i <= 3_000_000; i++) expected += String(i).length + 1;
    assert.equal(bytes, expected);
    assert.ok(last.endsWith('\n2999999\n3000000\n'));
  }));

test('pty output is complete after the process exits', () =>
  withAgent(async (_a, client) => {
    const r = await run(client, ['seq', '1', '100000'], { pty: { cols: 80, rows: 24 } });
    assert.equal(r.exitCode, 0);
    assert.ok(r.stdout.endsWith('99999\r\n100000\r\n'), r.stdout.slice(-40));
    assert.equal(r.stdout.split('\r\n').length, 100001);
  }));

test('stdin round trip with cat, and EOF when stdin is closed at spawn', () =>
  withAgent(async (_a, client) => {
    const p = client.spawn({ argv: ['cat'], user: 'root' });
    const done = collect(p);
    const big = Buffer.alloc(3 * 1024 * 1024, 'abcdefgh');
    p.write('hello ');
    p.write(big);
    p.closeStdin();
    const r = await done;
    assert.equal(r.exitCode, 0);
    assert.equal(r.stdout, `hello ${big.toString()}`);
    const r2 = await run(client, ['cat']);
    assert.deepEqual([r2.exitCode, r2.stdout], [0, '']);
  }));

test('timeout kills the whole process group', () =>
  withAgent(async (_a, client) => {
    const p = client.spawn({ argv: ['sh', '-c', 'sleep 100 & echo $!; sleep 100'], user: 'root', timeoutMs: 300, stdin: false });
    const grandchild = firstLine(p);
    const start = Date.now();
    const r = await collect(p);
    const elapsed = Date.now() - start;
    assert.equal(r.timedOut, true);
    assert.equal(r.exitCode, 137);
    assert.equal(r.signal, 9);
    assert.ok(elapsed >= 250 && elapsed < 2000, `took ${elapsed} ms`);
    assert.ok(await waitGone(await grandchild), 'grandchild survived');
  }));

test('output of an exited process is delivered even when a grandchild keeps the pipe open', () =>
  withAgent(async (_a, client) => {
    const p = client.spawn({ argv: ['sh', '-c', 'sleep 100 & echo $!; echo done'], user: 'root', stdin: false });
    const grandchild = firstLine(p);
    const start = Date.now();
    const r = await collect(p);
    const pid = await grandchild;
    assert.equal(r.stdout, `${pid}\ndone\n`);
    assert.equal(r.exitCode, 0);
    assert.ok(Date.now() - start < 1000);
    assert.ok(alive(pid), 'a grandchild of a finished command keeps running');
    process.kill(pid, 'SIGKILL');
    assert.ok(await waitGone(pid));
  }));

test("a user's process may reopen its own stdout and stderr (/dev/stdout), as under a shell", () =>
  withAgent(async (_agent, client) => {
    const r = await run(client, ['sh', '-c', 'echo out > /dev/stdout; echo err > /dev/stderr'], { user: 'nobody', cwd: '/' });
    assert.deepEqual([r.exitCode, r.stdout, r.stderr], [0, 'out\n', 'err\n']);
  }));

test('spawn errors: missing binary, missing cwd, unknown user', () =>
  withAgent(async (_a, client) => {
    const e1 = await spawnError(client.spawn({ argv: ['/no/such/binary'], user: 'root' }));
    assert.equal(e1.code, 'ENOENT');
    assert.match(e1.message, /exec \/no\/such\/binary/);
    const e2 = await spawnError(client.spawn({ argv: ['no-such-command-xyz'], user: 'root' }));
    assert.equal(e2.code, 'ENOENT');
    const e3 = await spawnError(client.spawn({ argv: ['true'], user: 'root', cwd: '/no/such/dir' }));
    assert.equal(e3.code, 'ENOENT');
    assert.match(e3.message, /chdir \/no\/such\/dir/);
    const e4 = await spawnError(client.spawn({ argv: ['true'], user: 'no-such-user-xyz' }));
    assert.match(e4.message, /no such user/);
    const e5 = await spawnError(client.spawn({ argv: ['/etc/passwd'], user: 'root' }));
    assert.equal(e5.code, 'EACCES');
    // The agent still serves after failures.
    assert.equal((await run(client, ['true'])).exitCode, 0);
  }));

test('signals reach the process', () =>
  withAgent(async (_a, client) => {
    const p = client.spawn({ argv: ['sleep', '100'], user: 'root', stdin: false });
    p.once('spawn', () => p.kill('SIGTERM'));
    const r = await collect(p);
    assert.deepEqual([r.exitCode, r.signal, r.timedOut], [143, 15, false]);
    const p2 = client.spawn({ argv: ['sh', '-c', 'trap "echo got-usr1; exit 7" USR1; echo ready; while :; do sleep 0.01; done'], user: 'root', stdin: false });
    p2.once('stdout', () => p2.kill('SIGUSR1'));
    const r2 = await collect(p2);
    assert.deepEqual([r2.exitCode, r2.stdout], [7, 'ready\ngot-usr1\n']);
  }));

test('pty mode: a terminal with a size that can change', () =>
  withAgent(async (_a, client) => {
    const r = await run(client, ['tty'], { pty: { cols: 80, rows: 24 } });
    assert.match(r.stdout, /^\/dev\/pts\/\d+\r\n$/);
    assert.equal((await run(client, ['stty', 'size'], { pty: { cols: 80, rows: 24 } })).stdout, '24 80\r\n');
    const p = client.spawn({ argv: ['sh', '-c', 'read x; stty size'], user: 'root', pty: { cols: 80, rows: 24 } });
    const done = collect(p);
    p.once('spawn', () => {
      p.resize(132, 50);
      p.write('go\n');
    });
    const r2 = await done;
    assert.match(r2.stdout, /50 132\r\n$/);
    assert.equal(r2.exitCode, 0);
  }));

test('many concurrent processes on one connection', () =>
  withAgent(async (_a, client) => {
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => run(client, ['sh', '-c', 'echo $0; echo e$0 >&2; exit $(($0 % 7))', String(i)])));
    results.forEach((r, i) => {
      assert.equal(r.stdout, `${i}\n`);
      assert.equal(r.stderr, `e${i}\n`);
      assert.equal(r.exitCode, i % 7);
    });
  }));

test('closing the connection kills foreground processes, background ones survive', () =>
  withAgent(async (agent, client) => {
    const fg = client.spawn({ argv: ['sh', '-c', 'echo $$; exec sleep 100'], user: 'root', stdin: false });
    const bg = client.spawn({ argv: ['sh', '-c', 'echo $$; exec sleep 100'], user: 'root', stdin: false, background: true });
    const [fgPid, bgPid] = await Promise.all([firstLine(fg), firstLine(bg)]);
    const lost = new Promise<AgentError>((r) => fg.once('error', r));
    bg.on('error', () => {});
    client.close();
    assert.equal((await lost).code, 'ECONNRESET');
    assert.ok(client.closed);
    assert.ok(await waitGone(fgPid), 'foreground process survived the disconnect');
    assert.ok(alive(bgPid), 'background process was killed');
    // A new connection works; the agent kills the background process when it stops.
    const c2 = await AgentClient.connect(agent.socketPath);
    await c2.ping();
    c2.close();
    process.kill(agent.child.pid!, 'SIGTERM');
    assert.ok(await waitGone(bgPid), 'agent shutdown left the background process');
  }));

test('a malformed frame drops only that connection', () =>
  withAgent(async (agent, client) => {
    const raw = net.createConnection(agent.socketPath);
    await new Promise((r) => raw.once('connect', r));
    const closed = new Promise((r) => raw.once('close', r));
    raw.on('data', () => {});
    raw.write(Buffer.from([0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0, 0]));
    await closed;
    const raw2 = net.createConnection(agent.socketPath);
    const closed2 = new Promise((r) => raw2.once('close', r));
    raw2.on('data', () => {});
    // A SPAWN whose TLV length runs past the frame.
    raw2.write(Buffer.from([11, 0, 0, 0, 1, 1, 0, 0, 0, 1, 0, 99, 0, 0, 0]));
    await closed2;
    await client.ping();
    assert.equal((await run(client, ['echo', 'ok'])).stdout, 'ok\n');
  }));

test('--connect: the agent dials the host and redials after a disconnect', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'sandpit-agent-test-'));
  const socketPath = path.join(dir, 'host.sock');
  const accepted: net.Socket[] = [];
  let onConn: ((s: net.Socket) => void) | undefined;
  const server = net.createServer((s) => (onConn ? onConn(s) : accepted.push(s)));
  await new Promise<void>((r) => server.listen(socketPath, r));
  const nextConn = (): Promise<net.Socket> => (accepted.length ? Promise.resolve(accepted.shift()!) : new Promise((r) => (onConn = (s) => ((onConn = undefined), r(s)))));
  const child = spawn(agentBin, ['--connect', socketPath], { stdio: ['ignore', 'inherit', 'inherit'] });
  const exited = new Promise((r) => child.once('exit', r));
  try {
    const c1 = await AgentClient.attach(await nextConn());
    assert.equal(c1.version, 1);
    assert.equal((await run(c1, ['echo', 'one'])).stdout, 'one\n');
    c1.close();
    const c2 = await AgentClient.attach(await nextConn());
    assert.equal((await run(c2, ['echo', 'two'])).stdout, 'two\n');
    c2.close();
  } finally {
    process.kill(child.pid!, 'SIGTERM');
    await exited;
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  }
});

test('latency: spawn round trip of true (printed, not asserted)', (t) =>
  withAgent(async (_a, client) => {
    const times: number[] = [];
    for (let i = 0; i < 220; i++) {
      const start = process.hrtime.bigint();
      const r = await run(client, ['true']);
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      assert.equal(r.exitCode, 0);
      if (i >= 20) times.push(ms); // the first runs warm up caches and the JIT
    }
    times.sort((a, b) => a - b);
    const median = times[times.length >> 1]!;
    const p90 = times[Math.floor(times.length * 0.9)]!;
    t.diagnostic(`spawn round trip of true over ${times.length} runs: median ${median.toFixed(3)} ms, p90 ${p90.toFixed(3)} ms`);
    console.log(`agent spawn round trip (true): median ${median.toFixed(3)} ms, p90 ${p90.toFixed(3)} ms`);
  }));

test('file operations run as the user: write, read, stat, list, errors', () =>
  withAgent(async (agent, client) => {
    const dir = path.join(agent.dir, 'files');
    await client.fileResult({ op: 'mkdir', path: path.join(dir, 'a/b'), parents: true, user: 'root' });
    const w = client.file({ op: 'write', path: path.join(dir, 'a/x.bin'), user: 'root' });
    await new Promise((r, j) => (w.once('spawn', r), w.once('error', j)));
    const big = Buffer.alloc(20 * 1024 * 1024, 'z');
    w.write(big);
    w.closeStdin();
    assert.equal((await new Promise<ExitInfo>((r) => w.once('exit', r))).exitCode, 0);
    const rd = client.file({ op: 'read', path: path.join(dir, 'a/x.bin'), user: 'root' });
    const got = await collect(rd);
    assert.equal(rd.size, big.length);
    assert.equal(got.stdout.length, big.length);
    const names = decodeTlvList(await client.fileResult({ op: 'list', path: path.join(dir, 'a'), user: 'root' })).map((e) => decodeTlv(e.value).get(1)?.toString());
    assert.deepEqual(names.sort(), ['b', 'x.bin']);
    await assert.rejects(client.fileResult({ op: 'stat', path: path.join(dir, 'nope'), user: 'root' }), { code: 'ENOENT' });
    await assert.rejects(client.fileResult({ op: 'remove', path: path.join(dir, 'a'), user: 'root' }), { code: 'ENOTEMPTY' });
    await assert.rejects(client.fileResult({ op: 'read', path: dir, user: 'root' }), { code: 'EISDIR' });
    await client.fileResult({ op: 'remove', path: dir, recursive: true, user: 'root' });
    await assert.rejects(client.fileResult({ op: 'stat', path: dir, user: 'root' }), { code: 'ENOENT' });
  }));

test('READ: a /proc file (size 0) to EOF, read by the agent itself; FIFOs, directories and missing files refused', () =>
  withAgent(async (agent, client) => {
    const status = (await client.readSmall(`/proc/${agent.child.pid}/status`)).toString();
    assert.match(status, /^Name:\s+sandpit-agent/m);
    spawnSync('mkfifo', [path.join(agent.dir, 'fifo')]);
    await assert.rejects(client.readSmall(path.join(agent.dir, 'fifo')), { code: 'EINVAL' });
    await assert.rejects(client.readSmall(agent.dir), { code: 'EINVAL' });
    await assert.rejects(client.readSmall(path.join(agent.dir, 'nope')), { code: 'ENOENT' });
    await client.ping(); // the connection stays up after refusals
  }));

test('FILE_NOW: small files written, read and changed by the agent itself as the user, which takes root back after each', () =>
  withAgent(async (agent, client) => {
    chmodSync(agent.dir, 0o755);
    const open = path.join(agent.dir, 'open');
    const closed = path.join(agent.dir, 'closed');
    mkdirSync(open, { mode: 0o777 });
    chmodSync(open, 0o777);
    mkdirSync(closed, { mode: 0o755 });
    const nobody = Number(spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).stdout.trim());
    const entry = (b: Buffer | undefined) => decodeTlv(b!);

    const data = randomBytes(300 * 1024);
    const w = await client.fileNow({ op: 'write', path: path.join(open, 'sub/dir/f.bin'), parents: true, user: 'nobody', data });
    assert.equal(entry(w.entry).get(EntryTag.uid)!.readUInt32LE(0), nobody, 'the file belongs to the user');
    assert.equal(Number(entry(w.entry).get(EntryTag.size)!.readBigUInt64LE(0)), data.length);
    assert.equal(statSync(path.join(open, 'sub/dir')).uid, nobody, 'missing parents are made as the user');
    assert.deepEqual(readFileSync(path.join(open, 'sub/dir/f.bin')), data);
    assert.deepEqual(readdirSync(path.join(open, 'sub/dir')), ['f.bin'], 'no temporary file is left');

    const r = await client.fileNow({ op: 'read', path: path.join(open, 'sub/dir/f.bin'), user: 'nobody' });
    assert.deepEqual(r.data, data);
    await assert.rejects(client.fileNow({ op: 'write', path: path.join(closed, 'x'), user: 'nobody', data }), { code: 'EACCES' });
    assert.deepEqual(readdirSync(closed), []);
    // The agent is root again: a write as root where the user may not write, and a spawned root process.
    await client.fileNow({ op: 'write', path: path.join(closed, 'x'), user: 'root', data: Buffer.from('root') });
    assert.equal(statSync(path.join(closed, 'x')).uid, 0);
    assert.equal((await run(client, ['id', '-u'])).stdout.trim(), '0');

    writeFileSync(path.join(open, 'kept'), 'old');
    chmodSync(path.join(open, 'kept'), 0o640);
    await client.fileNow({ op: 'write', path: path.join(open, 'kept'), user: 'root', data: Buffer.from('new') });
    assert.equal(statSync(path.join(open, 'kept')).mode & 0o777, 0o640, 'a replaced file keeps its permissions');
    assert.equal(readFileSync(path.join(open, 'kept'), 'utf8'), 'new');

    writeFileSync(path.join(open, 'big'), Buffer.alloc(1024 * 1024 + 1));
    await assert.rejects(client.fileNow({ op: 'read', path: path.join(open, 'big'), user: 'root' }), { code: 'EFBIG' });
    spawnSync('mkfifo', [path.join(open, 'fifo')]);
    await assert.rejects(client.fileNow({ op: 'read', path: path.join(open, 'fifo'), user: 'root' }), { code: 'EINVAL' });
    await assert.rejects(client.fileNow({ op: 'read', path: open, user: 'root' }), { code: 'EISDIR' });
    await assert.rejects(client.fileNow({ op: 'stat', path: path.join(open, 'nope'), user: 'root' }), { code: 'ENOENT' });
    await assert.rejects(client.fileNow({ op: 'stat', path: 'relative/path', user: 'root' }), { code: 'EINVAL' });
    await assert.rejects(client.fileNow({ op: 'stat', path: `/${'x'.repeat(5000)}`, user: 'root' }), { code: 'ENAMETOOLONG' });

    const m = await client.fileNow({ op: 'mkdir', path: path.join(open, 'm/n'), parents: true, user: 'nobody' });
    assert.equal(EntryType[entry(m.entry).get(EntryTag.type)!.readUInt8(0)], 'dir');
    await assert.rejects(client.fileNow({ op: 'rename', path: path.join(open, 'kept'), to: path.join(open, 'big'), noOverwrite: true, user: 'root' }), { code: 'EEXIST' });
    const mv = await client.fileNow({ op: 'rename', path: path.join(open, 'kept'), to: path.join(open, 'moved'), user: 'root' });
    assert.equal(Number(entry(mv.entry).get(EntryTag.size)!.readBigUInt64LE(0)), 3);
    await assert.rejects(client.fileNow({ op: 'remove', path: path.join(open, 'm'), user: 'root' }), { code: 'ENOTEMPTY' });
    await client.fileNow({ op: 'remove', path: path.join(open, 'moved'), user: 'root' });
    await client.fileNow({ op: 'remove', path: path.join(open, 'm/n'), user: 'root' });
    assert.ok(!existsSync(path.join(open, 'moved')) && !existsSync(path.join(open, 'm/n')));
    await client.ping(); // the connection stays up after refusals
  }));

test("DESCRIPTORS: every process's open descriptors, read by the agent itself, a deleted file marked as such", () =>
  withAgent(async (agent, client) => {
    const held = path.join(agent.dir, 'held');
    const p = client.spawn({ argv: ['sh', '-c', `exec 7>${held}; rm ${held}; echo ready; sleep 30`], user: 'root' });
    p.on('error', () => {});
    // Listening before the spawn is awaited: its frame and the output's can arrive in one read, and
    // the output is emitted before an await after the spawn could attach a listener.
    const ready = new Promise((r) => p.once('stdout', r));
    const pid = await started(p);
    await ready;
    const lines = (await client.descriptors()).toString('utf8').split('\n');
    assert.ok(lines.includes(`/proc/${pid}/fd ${held} (deleted)`), lines.filter((l) => l.startsWith(`/proc/${pid}/`)).join('\n'));
    assert.ok(
      lines.some((l) => l.startsWith(`/proc/${agent.child.pid}/fd `)),
      'the agent lists its own descriptors too',
    );
    assert.ok(
      lines.filter(Boolean).every((l) => /^\/proc\/\d+\/fd \S/.test(l)),
      'one `/proc/<pid>/fd <target>` a line, as find prints them',
    );
    p.kill('SIGKILL');
    await client.ping();
  }));

test('LIST and ATTACH: a named background process outlives its connection with its output tail', () =>
  withAgent(async (agent, client) => {
    const p = client.spawn({ argv: ['sh', '-c', 'echo before; sleep 0.3; echo during; read x; echo "got $x"; exit 5'], user: 'root', background: true, name: 'job-1' });
    p.on('error', () => {});
    await new Promise((r) => p.once('stdout', r));
    assert.deepEqual(
      (await client.listProcesses()).map((x) => [x.name, x.attached]),
      [['job-1', true]],
    );
    client.close();
    await sleep(600); // 'during' is written while no host is attached
    const c2 = await AgentClient.connect(agent.socketPath);
    try {
      const [info] = await c2.listProcesses();
      assert.equal(info?.attached, false);
      const a = c2.attach(info!.pid);
      const done = collect(a);
      a.write('hi\n');
      const r = await done;
      assert.equal(r.stdout, 'during\ngot hi\n');
      assert.equal(r.exitCode, 5);
      assert.deepEqual(await c2.listProcesses(), []);
      await assert.rejects(new Promise((res, rej) => (c2.attach(info!.pid).once('error', rej), setTimeout(res, 1000))), { code: 'ESRCH' });
    } finally {
      c2.close();
    }
  }));

test('a process that does not read stdin gets its input dropped, the connection stays live', () =>
  withAgent(async (_a, client) => {
    const p = client.spawn({ argv: ['sleep', '30'], user: 'root' });
    await new Promise((r) => p.once('spawn', r));
    await p.writeChecked(Buffer.alloc(3 << 20));
    await assert.rejects(p.writeChecked(Buffer.alloc(3 << 20)), { code: 'EAGAIN' });
    assert.equal((await run(client, ['echo', 'still'])).stdout, 'still\n');
    p.kill('SIGKILL');
    await new Promise((r) => p.once('exit', r));
  }));

/** Resolves with the pid at 'spawn'; rejects on a start failure. */
function started(p: AgentProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    p.once('spawn', resolve);
    p.once('error', reject);
  });
}

/** stdout as bytes, with the exit (or the error that ended the process instead). */
function bytes(p: AgentProcess): Promise<{ data: Buffer; end: ExitInfo | AgentError }> {
  const out: Buffer[] = [];
  p.on('stdout', (b) => out.push(b));
  return new Promise((resolve) => {
    const done = (end: ExitInfo | AgentError) => resolve({ data: Buffer.concat(out), end });
    p.once('exit', done);
    p.once('error', done);
  });
}

test("direct transfers: the helper moves the frames on a connection of its own, which is the agent's again afterwards", () =>
  withAgent(async (agent, client) => {
    const file = path.join(agent.dir, 'direct/x.bin');
    const data = randomBytes(3 * 1024 * 1024 + 123);
    const c = await AgentClient.connect(agent.socketPath);
    try {
      const w = c.file({ op: 'write', path: file, parents: true, user: 'root', direct: true });
      assert.ok((await started(w)) > 0);
      const wrote = bytes(w);
      w.write([data.subarray(0, 100), data.subarray(100, 200)]); // one frame from two buffers
      w.write(data.subarray(200));
      w.closeStdin();
      assert.equal(((await wrote).end as ExitInfo).exitCode, 0);
      assert.deepEqual(readFileSync(file), data);
      const r = c.file({ op: 'read', path: file, user: 'root', direct: true });
      const read = bytes(r);
      await started(r);
      assert.equal(r.size, data.length);
      const got = await read;
      assert.equal((got.end as ExitInfo).exitCode, 0);
      assert.deepEqual(got.data, data);
      assert.equal((await run(c, ['echo', 'again'])).stdout, 'again\n');
    } finally {
      c.close();
    }
    // On a busy connection the operation runs the ordinary way: the same frames.
    const busy = client.spawn({ argv: ['sleep', '30'], user: 'root', stdin: false });
    await started(busy);
    const r2 = client.file({ op: 'read', path: file, user: 'root', direct: true });
    assert.deepEqual((await bytes(r2)).data, data);
    busy.kill('SIGKILL');
  }));

test('direct transfers: an abandoned upload leaves nothing; a helper ended by a signal takes the connection with it', () =>
  withAgent(async (agent) => {
    const dir = path.join(agent.dir, 'up');
    const c1 = await AgentClient.connect(agent.socketPath);
    const w1 = c1.file({ op: 'write', path: path.join(dir, 'gone.bin'), parents: true, user: 'root', direct: true });
    const pid1 = await started(w1);
    w1.on('error', () => {});
    w1.write(Buffer.alloc(2 << 20, 1));
    c1.close();
    assert.ok(await waitGone(pid1), 'the helper kept running after the host left');
    assert.deepEqual(readdirSync(dir), []);
    // SIGNAL reaches the helper; killed, it may have stopped inside a frame, so the connection goes.
    const c2 = await AgentClient.connect(agent.socketPath);
    const w2 = c2.file({ op: 'write', path: path.join(dir, 'killed.bin'), user: 'root', direct: true });
    const pid2 = await started(w2);
    const ended = bytes(w2);
    w2.write(Buffer.alloc(1 << 20, 2));
    w2.kill('SIGTERM');
    assert.equal(((await ended).end as AgentError).code, 'ECONNRESET');
    assert.ok(await waitGone(pid2));
    assert.deepEqual(readdirSync(dir), []);
    const c3 = await AgentClient.connect(agent.socketPath);
    await c3.ping(); // the agent itself is fine
    c3.close();
  }));
