// The javascript kernel's Node.js side: runs each request's code in one persistent context and answers
// with JSON lines (stream, display, error, done) on stdout. With --typescript (the typescript kernel),
// each cell's types are removed by Node's own TypeScript support first.
import { createRequire, stripTypeScriptTypes } from 'node:module';
import { createInterface } from 'node:readline';
import { inspect, types } from 'node:util';
import vm from 'node:vm';

const out = process.stdout.write.bind(process.stdout);
const send = (event) => out(`${JSON.stringify(event)}\n`);
const text = (args) => `${args.map((a) => (typeof a === 'string' ? a : inspect(a))).join(' ')}\n`;
// Each returns nothing, as console's own do: a cell ending in console.log(...) has no value to show.
const streamConsole = {
  ...console,
  log: (...a) => void send({ stream: 'stdout', text: text(a) }),
  info: (...a) => void send({ stream: 'stdout', text: text(a) }),
  debug: (...a) => void send({ stream: 'stdout', text: text(a) }),
  warn: (...a) => void send({ stream: 'stderr', text: text(a) }),
  error: (...a) => void send({ stream: 'stderr', text: text(a) }),
};
// Writes by user code to the process streams are output, not protocol.
process.stdout.write = (chunk) => send({ stream: 'stdout', text: String(chunk) }) || true;
process.stderr.write = (chunk) => send({ stream: 'stderr', text: String(chunk) }) || true;

const contextRequire = createRequire(`${process.cwd()}/`);
/** What an `import` of a cell gets: an ES module's namespace, or a CommonJS module's exports as its default and named exports. */
function importSync(specifier) {
  const loaded = contextRequire(specifier);
  if (types.isModuleNamespaceObject(loaded)) return loaded;
  return loaded !== null && (typeof loaded === 'object' || typeof loaded === 'function') ? { ...loaded, default: loaded } : { default: loaded };
}

const context = vm.createContext({
  console: streamConsole,
  process,
  require: contextRequire,
  __sandpit_import: importSync,
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

// `import a, { b as c } from 'm'`, `import * as ns from 'm'` and `import 'm'` at the start of a line.
const IMPORT_FROM = /^([ \t]*)import\s+(?:([\w$]+)\s*(?:,\s*)?)?(?:\*\s*as\s+([\w$]+)|\{([^}]*)\})?\s*from\s*(['"])([^'"\n]+)\5[ \t]*;?/gm;
const IMPORT_BARE = /^([ \t]*)import\s*(['"])([^'"\n]+)\2[ \t]*;?/gm;

/**
 * A cell's ES import declarations as statements of a script (which cannot have them): each binding a
 * `var` (kept by later cells, as a declaration of the cell is) to what the module exports, loaded
 * synchronously (require, which loads ES modules too), so the cell stays a script.
 */
function withoutImports(code) {
  return code
    .replace(IMPORT_FROM, (whole, indent, name, namespace, names, _q, specifier) => {
      if (!name && !namespace && names === undefined) return whole;
      const from = `__sandpit_import(${JSON.stringify(specifier)})`;
      if (namespace) return `${indent}var ${namespace} = ${from};${name ? ` var ${name} = ${namespace}.default;` : ''}`;
      const bindings = (names ?? '')
        .split(',')
        .map((n) => n.trim())
        .filter(Boolean)
        .map((n) => n.replace(/^([\w$]+)\s+as\s+([\w$]+)$/, '$1: $2'));
      if (name) bindings.unshift(`default: ${name}`);
      return `${indent}var { ${bindings.join(', ')} } = ${from};`;
    })
    .replace(IMPORT_BARE, (_whole, indent, _q, specifier) => `${indent}__sandpit_import(${JSON.stringify(specifier)});`);
}

function compile(code) {
  try {
    return new vm.Script(code, { filename: 'cell.js' });
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    if (/import statement outside a module/.test(err.message)) {
      const rewritten = withoutImports(code);
      if (rewritten !== code) return compile(rewritten);
    }
    if (/await/.test(err.message)) return asyncScript(code);
    throw err;
  }
}

const typescript = process.argv.includes('--typescript');

async function evaluate(code) {
  // 'transform' also turns enums, namespaces and parameter properties into JavaScript, as tsc would.
  const js = typescript ? stripTypeScriptTypes(code, { mode: 'transform' }) : code;
  let value = compile(js).runInContext(context);
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
