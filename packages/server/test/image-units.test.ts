import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../src/errors.ts';
import { parseImageRef } from '../src/templates/images/image-ref.ts';
import { parseManifest, pickAmd64 } from '../src/templates/images/manifest.ts';
import { chooseAccount } from '../src/templates/images/platform-layer.ts';
import { classify } from '../src/templates/images/skopeo.ts';
import { parseDockerfile } from '../src/services/templates/dockerfile.ts';

describe('image references', () => {
  test('Docker Hub names, registries with ports, tags and digests', () => {
    assert.deepEqual(parseImageRef('debian'), { registry: 'docker.io', repository: 'library/debian', tag: 'latest' });
    assert.deepEqual(parseImageRef('ghcr.io/acme/app:1.2'), { registry: 'ghcr.io', repository: 'acme/app', tag: '1.2' });
    const d = `sha256:${'a'.repeat(64)}`;
    assert.deepEqual(parseImageRef(`localhost:5000/x/y@${d}`), { registry: 'localhost:5000', repository: 'x/y', digest: d });
    for (const bad of ['Upper/Case', 'x@sha256:short', 'a:b:c', '']) assert.throws(() => parseImageRef(bad), bad);
  });
});

describe('manifests', () => {
  const digest = (c: string) => `sha256:${c.repeat(64)}`;
  test('an index gives its linux/amd64 image; a bad layer type or JSON is malformed', () => {
    const index = parseManifest(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.index.v1+json',
        manifests: [
          { digest: digest('1'), size: 1, platform: { os: 'linux', architecture: 'arm64' } },
          { digest: digest('2'), size: 1, platform: { os: 'linux', architecture: 'amd64' } },
        ],
      }),
    );
    assert.equal(index.kind, 'index');
    if (index.kind === 'index') assert.equal(pickAmd64(index).digest, digest('2'));
    assert.throws(() => parseManifest('{'), /malformed manifest: not JSON/);
    assert.throws(
      () => parseManifest(JSON.stringify({ schemaVersion: 2, config: { digest: digest('3'), size: 2 }, layers: [{ mediaType: 'text/plain', digest: digest('4'), size: 1 }] })),
      /malformed manifest: layers\[0\] has media type 'text\/plain'/,
    );
  });
  test('skopeo messages are named by cause', () => {
    assert.match(classify('time="x" level=fatal msg="writing blob: Digest did not match, expected sha256:1"'), /^layer digest mismatch: /);
    assert.match(classify('level=fatal msg="reading manifest 1 in r/x: manifest unknown: manifest unknown"'), /^not found: /);
    assert.match(classify('msg="initializing source: reading manifest: unauthorized: authentication required"'), /^denied: /);
    assert.match(classify('msg="pinging container registry h: Get \\"https://h/v2/\\": dial tcp: connect: connection refused"'), /^registry unreachable: /);
    // Ports that contain a status number (a random test port, 40171) are not that status.
    assert.match(classify('msg="pinging container registry localhost:40171: Get \\"https://localhost:40171/v2/\\": http: server gave HTTP response to HTTPS client"'), /^registry unreachable: /);
    assert.match(classify('msg="reading manifest 1 in h:14045/r: StatusCode: 404, "'), /^not found: /);
    assert.match(classify('msg="fetching blob: received unexpected HTTP status: 403 Forbidden"'), /^denied: /);
  });
});

describe('the user account of an image', () => {
  test("the image's user, else its USER account, else the first free uid from 1000", () => {
    const passwd = 'root:x:0:0::/root:/bin/sh\nnode:x:1000:1000::/home/node:/bin/sh\n';
    assert.deepEqual(chooseAccount(passwd, 'node:x:1000:\n', 'node'), { uid: 1000, gid: 1000, home: '/home/node' });
    assert.deepEqual(chooseAccount(passwd, 'node:x:1000:\n', undefined), { uid: 1001, gid: 1001, home: '/home/user' });
    assert.deepEqual(chooseAccount(passwd, '', '2000:3000'), { uid: 2000, gid: 3000, home: '/home/user' });
    assert.deepEqual(chooseAccount(`${passwd}user:x:1500:1500::/u:/bin/sh\n`, '', 'node'), { uid: 1500, gid: 1500, home: '/u' });
  });
});

describe('Dockerfile subset', () => {
  test('instructions become steps; ARG reaches RUN; CMD after exec ENTRYPOINT is its arguments', () => {
    const b = parseDockerfile(
      [
        'ARG BASE=debian:12',
        'FROM $BASE',
        'ARG V=1',
        'ENV A="x y" B=$V',
        'WORKDIR app',
        'RUN ["echo", "it\'s"]',
        'USER 1000',
        'COPY <<EOF conf/',
        'k=v',
        'EOF',
        'ENTRYPOINT ["/bin/app"]',
        'CMD ["--port", "80"]',
      ].join('\n'),
    );
    assert.equal(b.from, 'debian:12');
    assert.deepEqual(b.steps[0], { type: 'env', env: { A: 'x y', B: '1' } });
    assert.deepEqual(b.steps[1], { type: 'workdir', path: '/app' });
    assert.deepEqual(b.steps[2], { type: 'run', command: "export V=1\necho 'it'\\''s'", user: 'root' });
    assert.deepEqual(b.steps[3], { type: 'copy', path: '/app/conf/EOF', content_base64: Buffer.from('k=v\n').toString('base64'), user: 'root' });
    assert.equal(b.startCmd, '/bin/app --port 80');
  });
  test('RUN heredocs: a script, or the input of a command', () => {
    const b = parseDockerfile('FROM a\nRUN <<EOF\necho one\necho two\nEOF\nRUN cat <<-END > /etc/x\n\tline\nEND\n');
    assert.deepEqual(b.steps, [
      { type: 'run', command: 'echo one\necho two\n', user: 'root' },
      { type: 'run', command: 'cat <<-END > /etc/x\nline\nEND', user: 'root' },
    ]);
  });
  test('anything outside the subset is a bad_request naming its line', () => {
    const err = (text: string) => {
      try {
        parseDockerfile(text);
      } catch (e) {
        assert.ok(e instanceof ApiError);
        assert.equal(e.code, 'bad_request');
        return e.message;
      }
      throw new Error('no error');
    };
    assert.match(err('FROM a\nADD x /y'), /line 2: ADD is not supported/);
    assert.match(err('FROM a\nFROM b'), /line 2: a second FROM/);
    assert.match(err('RUN true'), /line 1: RUN before FROM/);
    assert.match(err('FROM a\nCOPY <<EOF /x\nno end'), /line 2: heredoc 'EOF' is not closed/);
    assert.match(err('FROM --platform=linux/arm64 a'), /only linux\/amd64/);
  });
});
