#!/usr/bin/env bash
# Runs E2B's own JS SDK tests (packages/js-sdk/tests of github.com/e2b-dev/E2B), unmodified,
# with the published `e2b` package from npm, against a live Sandpit server's E2B port, one file
# at a time, and prints pass/fail counts per file. Nothing of E2B's code enters this repository:
# the tests are copied from a checkout to a temporary directory at run time.
#
#   E2B_REPO=/path/to/E2B E2B_API_URL=http://127.0.0.1:3001 E2B_API_KEY=... \
#     scripts/e2b-upstream-suite.sh [test files relative to packages/js-sdk, default: all below]
#
# Or as an E2B user configures it, by domain alone: E2B_DOMAIN=<SANDPIT_E2B_DOMAIN> with
# SANDPIT_E2B_CA and no E2B_API_URL; the SDK then calls https://api.<domain>, which is also where
# the tests that mock some routes (msw) expect it, so those run as written.
#
# E2B_REPO is a checkout or a bare git directory (its HEAD is used). E2B_SDK_VERSION picks the
# npm release (default 2.45.0); E2B_SUITE_WORKDIR reuses an install between runs. SANDPIT_E2B_CA
# (the server's <data dir>/e2b-ca/ca.crt, with SANDPIT_E2B_DOMAIN set on the server) is trusted by
# the tests, for the `https://{port}-{id}.{domain}` hosts the SDK builds (envd's included).
set -euo pipefail

: "${E2B_REPO:?E2B_REPO: a checkout (or git directory) of github.com/e2b-dev/E2B}"
if [ -z "${E2B_DOMAIN:-}" ]; then : "${E2B_API_URL:?E2B_API_URL: the Sandpit E2B port, e.g. http://127.0.0.1:3001 (or E2B_DOMAIN with SANDPIT_E2B_CA)}"; fi
if [ -n "${E2B_DOMAIN:-}" ] && [ -z "${E2B_API_URL:-}" ]; then : "${SANDPIT_E2B_CA:?SANDPIT_E2B_CA: by domain the SDK calls https://api.<domain>}"; fi
: "${E2B_API_KEY:?E2B_API_KEY: a Sandpit API key}"
# With the server's E2B CA the SDK reaches envd its own way, `https://49983-{id}.{domain}`; without
# it, through E2B_SANDBOX_URL on the same port.
if [ -z "${SANDPIT_E2B_CA:-}" ]; then export E2B_SANDBOX_URL="${E2B_SANDBOX_URL:-$E2B_API_URL}"; fi
unset E2B_DEBUG
version="${E2B_SDK_VERSION:-2.45.0}"
work="${E2B_SUITE_WORKDIR:-$(mktemp -d /tmp/e2b-suite.XXXXXX)}"
case "$work" in "$(cd "$(dirname "$0")/.." && pwd)"*)
	echo "E2B_SUITE_WORKDIR must be outside the repository" >&2
	exit 2
	;;
esac

# Files that never reach a server (SDK internals with mocked streams or a mocked HTTP layer)
# or that need the public internet from inside the sandbox: not run, listed with the reason.
declare -A skip=(
	[tests/sandbox/internetAccess.test.ts]="needs the public internet from inside the sandbox"
	[tests/sandbox/network.test.ts]="curls 1.1.1.1 and 8.8.8.8 (public addresses)"
	[tests/sandbox/commands/commandHandle.test.ts]="SDK internals with mocked streams"
	[tests/sandbox/files/watchHandle.test.ts]="SDK internals with mocked streams"
	[tests/sandbox/files/entryInfo.test.ts]="SDK internals (imports src/ modules the package does not export)"
	[tests/sandbox/configPropagation.test.ts]="SDK internals: spies on src/ modules the package does not export, on a sandbox object made offline (reaches no server)"
	[tests/sandbox/abortSignal.test.ts]="mocks the HTTP layer (msw)"
	[tests/sandbox/egressProxy.test.ts]="mocks the HTTP layer (msw)"
	[tests/sandbox/iam.test.ts]="mocks the HTTP layer (msw)"
	[tests/sandbox/lifecycleRequest.test.ts]="mocks the HTTP layer (msw)"
	[tests/sandbox/networkTransform.test.ts]="mocks the HTTP layer (msw)"
	[tests/sandbox/rpcHeaders.test.ts]="mocks the HTTP layer (msw)"
	[tests/volume/volume.test.ts]="mocks the HTTP layer (msw): the volume API is served by an in-process mock"
	[tests/volume/file.test.ts]="mocks the HTTP layer (msw): the volume content API is served by an in-process mock"
	[tests/template/abortSignal.test.ts]="mocks the HTTP layer (msw)"
	[tests/template/boundOpts.test.ts]="mocks the HTTP layer (msw)"
	[tests/template/stacktrace.test.ts]="mocks the HTTP layer (msw): every build answers a mocked failure"
	[tests/template/uploadFile.test.ts]="SDK internals (src/template/buildApi, which the package does not export) against a local HTTP server"
	[tests/template/methods/fromDockerfile.test.ts]="SDK internals offline (InstructionType and private fields the package does not export)"
	[tests/template/utils/getAllFilesInPath.test.ts]="SDK internals offline (src/template/utils)"
	[tests/template/utils/getCallerDirectory.test.ts]="SDK internals offline (src/template/utils)"
	[tests/template/utils/normalizeBuildArguments.test.ts]="SDK internals offline (src/template/utils)"
	[tests/template/utils/spoolTarArchive.test.ts]="SDK internals offline (src/template/utils)"
	[tests/template/utils/validateRelativePath.test.ts]="SDK internals offline (src/template/utils)"
)

src="$work/upstream"
if [ ! -d "$src/packages/js-sdk/tests" ]; then
	mkdir -p "$src"
	if [ -d "$E2B_REPO/.git" ] || [ -f "$E2B_REPO/HEAD" ]; then
		git -C "$E2B_REPO" archive HEAD packages/js-sdk/tests | tar -x -C "$src"
	else
		mkdir -p "$src/packages/js-sdk" && cp -r "$E2B_REPO/packages/js-sdk/tests" "$src/packages/js-sdk/"
	fi
fi
sdk="$src/packages/js-sdk"
if [ ! -d "$sdk/node_modules/msw" ] || ! grep -q "\"version\": \"$version\"" "$sdk/node_modules/e2b/package.json"; then
	(cd "$sdk" && echo '{"name":"e2b-upstream-suite","private":true,"type":"module"}' >package.json &&
		npm install --no-audit --no-fund --loglevel=error "e2b@$version" vitest@4 dotenv@16 msw@2 >/dev/null)
fi
# The tests import the SDK from ../src; point every such import at the published package.
cat >"$sdk/vitest.config.mts" <<'EOF'
import { defineConfig } from 'vitest/config'
export default defineConfig({
  resolve: { alias: [{ find: /^(\.\.\/)+src(\/.*)?$/, replacement: 'e2b' }] },
  test: { include: ['tests/**/*.test.ts'], testTimeout: 60_000, hookTimeout: 60_000, isolate: true },
})
EOF

if [ $# -gt 0 ]; then
	files=("$@")
else
	# tests/template builds from Docker Hub's ubuntu:22.04: give the server SANDPIT_DOCKER_HUB_MIRROR
	# (scripts/e2b-stand-in-images.sh fills a local registry where Docker Hub is out of reach).
	mapfile -t files < <(cd "$sdk" && find tests/sandbox tests/api tests/template -name '*.test.ts' | sort |
		grep -v -E '^tests/api/(http2|handleApiError|validateApiKey|inflight)\.test\.ts$')
fi

# The tests alone trust the server's E2B CA, beside what this shell already trusts (npm keeps its own).
test_ca=()
if [ -n "${SANDPIT_E2B_CA:-}" ]; then
	cat ${NODE_EXTRA_CA_CERTS:+"$NODE_EXTRA_CA_CERTS"} "$SANDPIT_E2B_CA" >"$work/trusted-ca.pem"
	test_ca=(env NODE_EXTRA_CA_CERTS="$work/trusted-ca.pem")
fi

total_pass=0 total_fail=0 total_skip=0
printf '%-52s %6s %6s %6s\n' file passed failed skipped
for f in "${files[@]}"; do
	if [ -n "${skip[$f]:-}" ]; then
		printf '%-52s %s\n' "$f" "not run: ${skip[$f]}"
		continue
	fi
	report="$work/$(echo "$f" | tr / _).json"
	(cd "$sdk" && timeout 900 "${test_ca[@]}" npx vitest run "$f" --reporter=json --outputFile="$report" >"$report.log" 2>&1) || true
	read -r p fl s < <(node -e '
		const fs = require("node:fs")
		let r = { numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, numTodoTests: 0 }
		try { r = JSON.parse(fs.readFileSync(process.argv[1], "utf8")) } catch {}
		console.log(r.numPassedTests, r.numFailedTests, r.numPendingTests + r.numTodoTests)
	' "$report")
	printf '%-52s %6s %6s %6s\n' "$f" "$p" "$fl" "$s"
	total_pass=$((total_pass + p)) total_fail=$((total_fail + fl)) total_skip=$((total_skip + s))
done
printf '%-52s %6s %6s %6s\n' TOTAL "$total_pass" "$total_fail" "$total_skip"
echo "reports and logs: $work"
