#!/usr/bin/env bash
# Runs the JS tests of E2B's Code Interpreter SDK (js/tests of github.com/e2b-dev/code-interpreter),
# unmodified, with the published `@e2b/code-interpreter` from npm, against a live Sandpit server's
# E2B port, and prints pass/fail counts per file. Nothing of E2B's code enters this repository: the
# tests are copied from a checkout to a temporary directory at run time.
#
#   CI_REPO=/path/to/code-interpreter E2B_API_URL=http://127.0.0.1:3001 E2B_API_KEY=... \
#     scripts/code-interpreter-upstream-suite.sh [test files relative to js/, default: all]
#
# CI_REPO is a checkout or a bare git directory (its HEAD is used). CI_SDK_VERSION picks the npm
# release (default 2.8.0); CI_SUITE_WORKDIR reuses an install between runs.
set -euo pipefail

: "${CI_REPO:?CI_REPO: a checkout (or git directory) of github.com/e2b-dev/code-interpreter}"
: "${E2B_API_URL:?E2B_API_URL: the Sandpit E2B port, e.g. http://127.0.0.1:3001}"
: "${E2B_API_KEY:?E2B_API_KEY: a Sandpit API key}"
export E2B_SANDBOX_URL="${E2B_SANDBOX_URL:-$E2B_API_URL}"
unset E2B_DEBUG
version="${CI_SDK_VERSION:-2.8.0}"
work="${CI_SUITE_WORKDIR:-$(mktemp -d /tmp/ci-suite.XXXXXX)}"

# Files that need what Sandpit's template does not have, or other runtimes: not run, with the reason.
declare -A skip=(
	[tests/runtimes/bun/run.test.ts]="needs the bun runtime"
	[tests/runtimes/deno/run.test.ts]="needs the deno runtime"
	[tests/env_vars/java.test.ts]="Java kernel (not in platform/code-interpreter)"
)

js="$work/upstream/js"
if [ ! -d "$js/tests" ]; then
	mkdir -p "$work/upstream"
	if [ -d "$CI_REPO/.git" ] || [ -f "$CI_REPO/HEAD" ]; then
		git -C "$CI_REPO" archive HEAD js/tests | tar -x -C "$work/upstream"
	else
		mkdir -p "$js" && cp -r "$CI_REPO/js/tests" "$js/"
	fi
fi
if [ ! -d "$js/node_modules/@e2b/code-interpreter" ] || ! grep -q "\"version\": \"$version\"" "$js/node_modules/@e2b/code-interpreter/package.json"; then
	(cd "$js" && echo '{"name":"ci-upstream-suite","private":true,"type":"module"}' >package.json &&
		npm install --no-audit --no-fund --loglevel=error "@e2b/code-interpreter@$version" vitest@4 >/dev/null)
fi
# The tests import the SDK from ../src; point every such import at the published package.
cat >"$js/vitest.config.mts" <<'CONF'
import { defineConfig } from 'vitest/config'
export default defineConfig({
  resolve: { alias: [{ find: /^(\.\.\/)+src(\/.*)?$/, replacement: '@e2b/code-interpreter' }] },
  test: { include: ['tests/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000, isolate: true },
})
CONF

if [ $# -gt 0 ]; then
	files=("$@")
else
	mapfile -t files < <(cd "$js" && find tests -name '*.test.ts' | sort)
fi

total_pass=0 total_fail=0 total_skip=0
printf '%-44s %6s %6s %6s\n' file passed failed skipped
for f in "${files[@]}"; do
	if [ -n "${skip[$f]:-}" ]; then
		printf '%-44s %s\n' "$f" "not run: ${skip[$f]}"
		continue
	fi
	report="$work/$(echo "$f" | tr / _).json"
	(cd "$js" && npx vitest run "$f" --reporter=json --outputFile="$report" >/dev/null 2>&1) || true
	read -r p x s < <(node -e '
		const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
		console.log(r.numPassedTests, r.numFailedTests, r.numPendingTests + r.numTodoTests);
	' "$report" 2>/dev/null || echo "0 1 0")
	printf '%-44s %6s %6s %6s\n' "$f" "$p" "$x" "$s"
	total_pass=$((total_pass + p)) total_fail=$((total_fail + x)) total_skip=$((total_skip + s))
done
printf '%-44s %6s %6s %6s\n' total "$total_pass" "$total_fail" "$total_skip"
