import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Api, ServerProcess } from './helpers/server-process.ts';

// E2B's default user has passwordless sudo and agents use it all day: on both engines `user` has it,
// and under gVisor (which ignores set-user-ID bits) the agent starts the real sudo for its callers.
for (const driver of ['gvisor', 'container'] as const) {
  describe(`sudo on ${driver}`, () => {
    let srv: ServerProcess;
    let api: Api;
    let id: string;
    const exec = async (command: string): Promise<{ stdout: string; stderr: string; exit_code: number }> => {
      const res = await api.post(`/sandboxes/${id}/exec`, { command });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body;
    };

    before(async () => {
      srv = await ServerProcess.start({ SANDPIT_DRIVER: driver });
      api = new Api(srv.url, srv.key);
      const sb = await api.post('/sandboxes', {});
      assert.equal(sb.status, 201, JSON.stringify(sb.body));
      id = sb.body.id;
    });
    after(async () => {
      await srv?.stop();
    });

    test('passwordless: sudo -n true exits 0, sudo -n id -u prints 0, plain commands stay user', async () => {
      assert.deepEqual(await exec('sudo -n true'), { stdout: '', stderr: '', exit_code: 0 });
      assert.equal((await exec('sudo -n id -u')).stdout, '0\n');
      assert.equal((await exec('id -u')).stdout, '1000\n');
      assert.equal((await exec('sudo -n -u nobody id -un')).stdout, 'nobody\n');
    });

    test('the command gets the caller’s directory, streams and exit status, and writes as root', async () => {
      assert.equal((await exec('cd /tmp && sudo -n pwd')).stdout, '/tmp\n');
      assert.equal((await exec('echo kept | sudo -n tee /root/note >/dev/null && sudo -n cat /root/note && stat -c %U /root/note 2>&1 || true')).stdout.split('\n')[0], 'kept');
      assert.equal((await exec('sudo -n sh -c "echo out; echo err >&2; exit 7"')).exit_code, 7);
      const both = await exec('sudo -n sh -c "echo out; echo err >&2"');
      assert.equal(both.stdout, 'out\n');
      assert.equal(both.stderr, 'err\n');
      assert.equal((await exec('sudo -n apt-get --version >/dev/null && echo ok')).stdout, 'ok\n');
      // Nothing of how it was started reaches the command, even with the caller's environment kept.
      assert.equal((await exec('LD_PRELOAD= sudo -n -E env | grep -c "SANDPIT_SUDO\\|LD_PRELOAD" || true')).stdout, '0\n');
    });

    test('sudoers still decides: a user it does not list is refused', async () => {
      const refused = await exec('sudo -n -u nobody sudo -n true');
      assert.notEqual(refused.exit_code, 0, JSON.stringify(refused));
    });

    test('pip install --user keeps working next to it', async () => {
      const out = await exec(
        'mkdir -p /tmp/pkg/hello && cd /tmp/pkg && printf "def hi():\\n    return 42\\n" > hello/__init__.py && ' +
          'printf "[project]\\nname = \\"hello\\"\\nversion = \\"1.0\\"\\n" > pyproject.toml && ' +
          'pip install --user --no-index --no-build-isolation --break-system-packages -q . 2>&1 && cd / && python3 -c "import hello; print(hello.hi())"',
      );
      assert.equal(out.exit_code, 0, JSON.stringify(out));
      assert.match(out.stdout, /42\n$/);
    });

    test('sudo works again after pause and resume', async () => {
      assert.equal((await api.post(`/sandboxes/${id}/pause`)).status, 200);
      assert.equal((await api.post(`/sandboxes/${id}/resume`)).status, 200);
      assert.equal((await exec('sudo -n id -u')).stdout, '0\n');
      assert.equal((await api.del(`/sandboxes/${id}`)).status, 204);
    });
  });
}
