import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { readFile, readlink, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_ID_BASE } from '../src/runtime/host/idmap.ts';
import { Api, parseSse, ServerProcess } from './helpers/server-process.ts';

/** Root inside a crun sandbox is an unprivileged host uid, and files keep the owners the image gives them. */
let server: ServerProcess;
let api: Api;
let sb: { id: string; access_token: string };

before(async () => {
  server = await ServerProcess.start({ SANDPIT_DRIVER: 'container' });
  api = new Api(server.url, server.key);
  const res = await api.post('/sandboxes', {});
  assert.equal(res.status, 201, JSON.stringify(res.body));
  sb = res.body;
});
after(async () => {
  await server?.stop();
});

const uuid = (id: string) => id.replace(/^sb-[a-z0-9]+-/, '');
const sandboxDir = (id: string) => join(server.dataDir, 'sandboxes', uuid(id));
const upperDir = (id: string) => join(server.dataDir, 'layers', uuid(id), 'upper');
/** The host uid a sandbox's root is, as its uid_map says from inside. */
async function hostBase(id: string): Promise<number> {
  const r = await exec('cat /proc/self/uid_map', id);
  return Number(r.stdout.trim().split(/\s+/)[1]);
}

async function exec(command: string, id = sb.id) {
  const res = await api.post(`/sandboxes/${id}/exec`, { command });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body as { stdout: string; stderr: string; exit_code: number };
}

/** As sandbox root, through sudo like a user of the sandbox would. */
const asRoot = (command: string, id = sb.id) => exec(`sudo -n sh -c '${command.replaceAll("'", `'\\''`)}'`, id);

describe('sandbox root is not host root', () => {
  test('its user namespace maps sandbox ids 0..65535 to an unprivileged host range', async () => {
    const r = await asRoot('id -u; cat /proc/self/uid_map /proc/self/gid_map');
    assert.equal(r.exit_code, 0, r.stderr);
    const [uid, ...maps] = r.stdout.trim().split('\n');
    assert.equal(uid, '0');
    assert.equal(maps.length, 2);
    const base = Number(maps[0]!.trim().split(/\s+/)[1]);
    assert.ok(base >= DEFAULT_ID_BASE && base < 2 ** 31 && base % 65536 === 0, String(base));
    for (const line of maps) assert.deepEqual(line.trim().split(/\s+/), ['0', String(base), '65536']);
  });

  test('each sandbox has a host id range of its own, kept across a server crash and freed by delete', async () => {
    const other = (await api.post('/sandboxes', {})).body as { id: string };
    const [a, b] = [await hostBase(sb.id), await hostBase(other.id)];
    assert.ok(Math.abs(a - b) >= 65536, `ranges ${a} and ${b} overlap`);
    await server.kill9();
    await server.launch();
    const third = (await api.post('/sandboxes', {})).body as { id: string };
    const c = await hostBase(third.id);
    assert.ok(![a, b].some((x) => Math.abs(x - c) < 65536), `a new range after a restart (${c}) overlaps a running sandbox's (${a}, ${b})`);
    assert.equal((await api.del(`/sandboxes/${other.id}`)).status, 204);
    // The engine (and its range) goes after the delete's answer.
    for (const deadline = Date.now() + 30_000; existsSync(sandboxDir(other.id)) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
    const fourth = (await api.post('/sandboxes', {})).body as { id: string };
    assert.equal(await hostBase(fourth.id), b, "the deleted sandbox's range is used again");
    for (const id of [third.id, fourth.id]) assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
  });

  test('seen from the host, the sandbox init runs as a non-zero uid in a user namespace of its own', async () => {
    const pid = Number((await readFile(join(sandboxDir(sb.id), 'init.pid'), 'utf8')).trim());
    assert.ok(pid > 0);
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const ids = (field: string) =>
      status
        .match(new RegExp(`^${field}:\\s+(.*)$`, 'm'))?.[1]
        ?.trim()
        .split(/\s+/);
    const base = String(await hostBase(sb.id));
    assert.deepEqual(ids('Uid'), Array(4).fill(base));
    assert.deepEqual(ids('Gid'), Array(4).fill(base));
    assert.notEqual(await readlink(`/proc/${pid}/ns/user`), await readlink('/proc/self/ns/user'));
    // Other host users cannot pass into the sandbox's dir (its root, with a world-writable /tmp, and its agent socket).
    const dir = await stat(sandboxDir(sb.id));
    assert.equal(dir.mode & 0o007, 0);
    assert.equal(dir.gid, Number(base));
  });

  test('cannot write a host-owned file reachable through a writable mount, nor the bound host files', async () => {
    // The agent's run dir is bound read-write at /run/sandpit; a file host root leaves there is not root's inside.
    const hostFile = join(sandboxDir(sb.id), 'run', 'host-owned');
    await writeFile(hostFile, 'host\n', { mode: 0o644 });
    const r = await asRoot('stat -c %u /run/sandpit/host-owned; echo pwned > /run/sandpit/host-owned');
    assert.notEqual(r.exit_code, 0, 'sandbox root wrote a host-owned file');
    assert.match(r.stderr, /Permission denied/);
    assert.equal(r.stdout.trim(), '65534', 'host root shows as the overflow id inside');
    assert.equal(await readFile(hostFile, 'utf8'), 'host\n');
    for (const f of ['/etc/resolv.conf', '/etc/ssl/certs/ca-certificates.crt']) {
      const w = await asRoot(`cat ${f} >/dev/null && echo x >> ${f}`);
      assert.notEqual(w.exit_code, 0, `${f} was writable`);
      assert.match(w.stderr, /Read-only|Permission denied/);
    }
  });

  test('has no capability against the host: no device nodes, no module loading, no mounts', async () => {
    // CAP_MKNOD of host root makes block devices (only the device cgroup stops their use); in a user namespace the kernel refuses.
    const mknod = await asRoot('mknod /tmp/disk b 254 0');
    assert.notEqual(mknod.exit_code, 0, 'sandbox root made a block device node');
    const mod = await asRoot(`python3 -c 'import ctypes; libc = ctypes.CDLL(None, use_errno=True); rc = libc.syscall(313, 0, b"", 0); print(rc, ctypes.get_errno())'`);
    // EPERM, or ENOSYS on a kernel built without module support (as here).
    assert.match(mod.stdout.trim(), /^-1 (1|38)$/, `finit_module: ${mod.stdout} ${mod.stderr}`);
    const mnt = await asRoot('mount -t tmpfs none /mnt');
    assert.notEqual(mnt.exit_code, 0, 'sandbox root mounted a file system');
    const limit = await asRoot('echo 8G > /sys/fs/cgroup/memory/memory.limit_in_bytes');
    assert.notEqual(limit.exit_code, 0, 'sandbox root raised its own memory limit');
  });

  test('in the network namespace the host made, root still binds low ports and opens ping sockets; /sys shows its own interfaces', async () => {
    const bind = await asRoot(`python3 -c "import socket; s = socket.socket(); s.bind(('0.0.0.0', 80)); print('bound')"`);
    assert.equal(bind.stdout, 'bound\n', bind.stderr);
    const icmp = await asRoot(`python3 -c "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP); print('ping socket')"`);
    assert.equal(icmp.stdout, 'ping socket\n', icmp.stderr);
    assert.deepEqual((await exec('ls /sys/class/net')).stdout.trim().split('\n').sort(), ['eth0', 'lo']);
  });
});

describe('file ownership in layers', () => {
  test('image files, sudo, useradd, chown and uploads have the expected owners inside and on disk', async () => {
    const owners = await exec('stat -c "%u:%g %n" / /root /etc/shadow /usr/bin/sudo /home/user');
    assert.equal(owners.stdout, '0:0 /\n0:0 /root\n0:42 /etc/shadow\n0:0 /usr/bin/sudo\n1000:1000 /home/user\n', owners.stderr);

    const r = await asRoot(
      'useradd -m -u 1500 alice && install -d -o alice -g alice /srv/alice && touch /srv/alice/f && chown alice:alice /srv/alice/f && touch /root/r && stat -c "%u:%g" /srv/alice/f /home/alice /root/r',
    );
    assert.equal(r.stdout, '1500:1500\n1500:1500\n0:0\n', r.stderr);
    // apt-get installs a package (offline: a local .deb) with its files owned as packaged, dropping to _apt as usual.
    const apt = await asRoot(
      [
        'mkdir -p /tmp/pkg/DEBIAN /tmp/pkg/opt/owned',
        'printf "Package: owned\\nVersion: 1\\nArchitecture: all\\nMaintainer: t <t@t>\\nDescription: t\\n" > /tmp/pkg/DEBIAN/control',
        'echo packaged > /tmp/pkg/opt/owned/file && chown -R 1500:1500 /tmp/pkg/opt/owned',
        'dpkg-deb --root-owner-group -b /tmp/pkg /tmp/owned.deb >/dev/null',
        'apt-get install -y -q /tmp/owned.deb >/dev/null',
        'dpkg -s owned | grep Status',
        'stat -c %u:%g /opt/owned/file',
      ].join(' && '),
    );
    assert.equal(apt.stdout, 'Status: install ok installed\n0:0\n', apt.stderr);
    const mine = await exec('echo hi > /home/user/mine && stat -c %u:%g /home/user/mine');
    assert.equal(mine.stdout, '1000:1000\n', mine.stderr);
    const up = await fetch(`${server.url}/files?path=${encodeURIComponent('/home/user/up.txt')}`, {
      method: 'PUT',
      headers: { 'x-platform-sandbox-id': sb.id, 'x-access-token': sb.access_token, 'content-type': 'application/octet-stream' },
      body: 'uploaded',
    });
    assert.ok(up.ok, await up.text());
    assert.equal((await exec('stat -c %u:%g /home/user/up.txt')).stdout, '1000:1000\n');

    // The upper dir (what template builds capture) holds the sandbox's ids, not the host's.
    const onDisk = async (p: string) => {
      const s = await stat(join(upperDir(sb.id), p));
      return `${s.uid}:${s.gid}`;
    };
    assert.equal(await onDisk('srv/alice/f'), '1500:1500');
    assert.equal(await onDisk('home/user/mine'), '1000:1000');
    assert.equal(await onDisk('home/user/up.txt'), '1000:1000');
    assert.equal(await onDisk('root/r'), '0:0');
    assert.equal(await onDisk('etc/passwd'), '0:0');
    assert.equal(await onDisk('opt/owned/file'), '0:0');
  });

  test('a template built with root and user steps gives its sandboxes the same owners', async () => {
    const res = await api.post('/templates', {
      name: 'owners',
      steps: [
        { type: 'run', user: 'root', command: 'useradd -m -u 1500 alice && install -d -o alice -g alice /srv/alice && touch /srv/alice/f && chown alice /srv/alice/f' },
        { type: 'run', command: 'echo u > /home/user/u.txt' },
      ],
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const logs = await fetch(`${server.url}/templates/${res.body.id}/builds/${res.body.build_id}/logs`, { headers: { 'x-api-key': server.key } });
    const { events } = parseSse(await logs.text());
    assert.equal(events.at(-1).status, 'ready', JSON.stringify(events));
    const created = await api.post('/sandboxes', { from_template: 'owners' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const r = await exec('id -u alice; stat -c "%u:%g %n" /srv/alice /srv/alice/f /home/user/u.txt /etc/passwd', created.body.id);
    assert.equal(r.stdout, '1500\n1500:1500 /srv/alice\n1500:0 /srv/alice/f\n1000:1000 /home/user/u.txt\n0:0 /etc/passwd\n', r.stderr);
    assert.equal((await api.del(`/sandboxes/${created.body.id}`)).status, 204);
  });
});
