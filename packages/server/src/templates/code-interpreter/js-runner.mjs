// The javascript kernel's Node.js side: runs each request's code in one persistent context and answers
// with JSON lines (stream, display, error, done) on stdout.
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { inspect } from 'node:util';
import vm from 'node:vm';

const out = process.stdout.write.bind(process.stdout);
const send = (event) => out(`${JSON.stringify(event)}\n`);
const text = (args) => `${args.map((a) => (typeof a === 'string' ? a : inspect(a))).join(' ')}\n`;
const streamConsole = {
  ...console,
  log: (...a) => send({ stream: 'stdout', text: text(a) }),
  info: (...a) => send({ stream: 'stdout', text: text(a) }),
  debug: (...a) => send({ stream: 'stdout', text: text(a) }),
  warn: (...a) => send({ stream: 'stderr', text: text(a) }),
  error: (...a) => send({ stream: 'stderr', text: text(a) }),
};
// Writes by user code to the process streams are output, not protocol.
process.stdout.write = (chunk) => send({ stream: 'stdout', text: String(chunk) }) || true;
process.stderr.write = (chunk) => send({ stream: 'stderr', text: String(chunk) }) || true;

const context = vm.createContext({
  console: streamConsole,
  process,
  require: createRequire(`${process.cwd()}/`),
  Buffer,
  URL,
  URLSearchParams,
  TextEncoder,
  TextDecoder,
  setTimeout,
  clearTimeout,
  setInterval,
  clearInterval,
  setImmediate,
  queueMicrotask,
  structuredClone,
  fetch,
});
context.globalThis = context;

/** A cell with a top-level await runs as an async function: as one expression if it is one (its value kept), else as a body. */
function asyncScript(code) {
  try {
    return new vm.Script(`(async () => (\n${code}\n))()`, { filename: 'cell.js' });
  } catch {
    return new vm.Script(`(async () => {\n${code}\n})()`, { filename: 'cell.js' });
  }
}

async function evaluate(code) {
  let script;
  try {
    script = new vm.Script(code, { filename: 'cell.js' });
  } catch (err) {
    if (!(err instanceof SyntaxError && /await/.test(err.message))) throw err;
    script = asyncScript(code);
  }
  let value = script.runInContext(context);
  if (value instanceof Promise || (value && typeof value.then === 'function')) value = await value;
  return value;
}

function errorEvent(err) {
  if (err instanceof Error || (err && typeof err === 'object' && 'stack' in err)) {
    return { name: err.name ?? 'Error', value: err.message ?? String(err), traceback: String(err.stack ?? '').split('\n') };
  }
  return { name: 'Error', value: inspect(err), traceback: [] };
}

// A callback that throws after its cell finished is reported as output rather than ending the context.
process.on('uncaughtException', (err) => send({ stream: 'stderr', text: `${err?.stack ?? err}\n` }));

let queue = Promise.resolve();
createInterface({ input: process.stdin }).on('line', (line) => {
  const { code } = JSON.parse(line);
  queue = queue.then(async () => {
    try {
      const value = await evaluate(code);
      if (value !== undefined) send({ display: { 'text/plain': inspect(value) }, main: true });
      send({ done: true });
    } catch (err) {
      send({ error: errorEvent(err) });
    }
  });
});
