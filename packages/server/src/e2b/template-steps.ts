import { posix } from 'node:path';
import { badRequest } from '../errors.ts';
import { ARCHIVE_HASH, type CreateTemplateBody, type TemplateStep } from '../schemas/template.ts';
import { templateRef } from './sandbox-view.ts';

/** E2B's `TemplateStep`. */
export interface E2bStep {
  type?: unknown;
  args?: unknown;
  filesHash?: unknown;
  force?: unknown;
}

/** E2B's `TemplateBuildStartV2`. */
export interface E2bBuildStart {
  fromImage?: unknown;
  fromTemplate?: unknown;
  fromImageRegistry?: unknown;
  force?: unknown;
  steps?: unknown;
  startCmd?: unknown;
  readyCmd?: unknown;
}

/** A Sandpit definition of an E2B build, and which E2B step (1-based, as E2B counts them) each Sandpit step came from. */
export interface TranslatedBuild {
  body: CreateTemplateBody;
  noCacheFrom?: number;
  origin: { e2bStep: number; type: string; command?: string }[];
}

/** E2B's default base image: Sandpit's own base template stands for it. */
const E2B_BASE_IMAGE = /^(docker\.io\/)?e2bdev\/base(:[A-Za-z0-9_.-]+)?$/;
/** Build steps may take long (package installs); E2B sets no bound of its own. */
const RUN_TIMEOUT_S = 3600;
/** The ready wait of E2B templates: readiness checks such as waitForURL may wait for slow servers. */
const READY_TIMEOUT_S = 300;
const DEFAULT_HOME = '/home/user';

const str = (v: unknown, what: string): string => {
  if (typeof v !== 'string' || v === '') throw badRequest(`${what} must be a non-empty string`);
  return v;
};

function argsOf(step: E2bStep, n: number): string[] {
  if (step.args === undefined) return [];
  if (!Array.isArray(step.args) || step.args.some((a) => typeof a !== 'string')) throw badRequest(`steps[${n}].args must be a list of strings`);
  return step.args as string[];
}

/**
 * Reads E2B's build definition as Sandpit's: RUN -> run (as the current USER), COPY -> archive
 * (the uploaded files, by their hash), ENV -> env, WORKDIR -> workdir (relative ones against the
 * current one); USER changes the account of later RUN and COPY steps. The base is a template
 * (fromTemplate, or E2B's base image) or an image.
 */
export function translateBuild(name: string, start: E2bBuildStart): TranslatedBuild {
  if (start.fromImageRegistry !== undefined)
    throw badRequest("fromImageRegistry: registry credentials are not taken inline; store the password as a team secret and build through Sandpit's API (registry_auth)");
  if (start.fromImage !== undefined && start.fromTemplate !== undefined) throw badRequest('fromImage and fromTemplate are exclusive');
  if (start.steps !== undefined && !Array.isArray(start.steps)) throw badRequest('steps must be a list');
  const e2bSteps = (start.steps ?? []) as E2bStep[];
  const steps: TemplateStep[] = [];
  const origin: TranslatedBuild['origin'] = [];
  let user = 'user';
  let workdir: string | undefined;
  let noCacheFrom: number | undefined = start.force === true ? 0 : undefined;
  for (const [n, step] of e2bSteps.entries()) {
    if (step === null || typeof step !== 'object') throw badRequest(`steps[${n}] must be an object`);
    const args = argsOf(step, n);
    if (step.force === true && noCacheFrom === undefined) noCacheFrom = steps.length;
    const from = { e2bStep: n + 1, type: String(step.type) };
    switch (step.type) {
      case 'RUN':
        steps.push({ type: 'run', command: str(args[0], `steps[${n}].args[0]`), user: args[1] || user, timeout_s: RUN_TIMEOUT_S });
        origin.push({ ...from, command: args[0] });
        break;
      case 'COPY': {
        const hash = str(step.filesHash, `steps[${n}].filesHash`);
        if (!ARCHIVE_HASH.test(hash)) throw badRequest(`steps[${n}].filesHash must be a sha256 in hex`);
        const mode = args[3] ? args[3].replace(/^0*(?=[0-7]{3,4}$)/, '') : '';
        steps.push({ type: 'archive', archive: hash, src: str(args[0], `steps[${n}].args[0]`), dest: str(args[1], `steps[${n}].args[1]`), user: args[2] || user, ...(mode ? { mode } : {}) });
        origin.push(from);
        break;
      }
      case 'ENV': {
        if (args.length % 2 !== 0) throw badRequest(`steps[${n}].args must be name, value pairs`);
        const env: Record<string, string> = {};
        for (let i = 0; i < args.length; i += 2) env[args[i]!] = args[i + 1]!;
        steps.push({ type: 'env', env });
        origin.push(from);
        break;
      }
      case 'WORKDIR': {
        const path = str(args[0], `steps[${n}].args[0]`);
        workdir = posix.resolve(workdir ?? DEFAULT_HOME, path);
        steps.push({ type: 'workdir', path: workdir });
        origin.push(from);
        break;
      }
      case 'USER':
        user = str(args[0], `steps[${n}].args[0]`);
        break;
      default:
        throw badRequest(`steps[${n}].type: '${String(step.type).slice(0, 32)}' is not one of RUN, COPY, ENV, WORKDIR, USER`);
    }
  }
  const body: CreateTemplateBody = { name, steps, ready_timeout_s: READY_TIMEOUT_S };
  if (typeof start.fromImage === 'string' && !E2B_BASE_IMAGE.test(start.fromImage)) body.from_image = start.fromImage;
  else if (start.fromTemplate !== undefined) body.base = templateRef(str(start.fromTemplate, 'fromTemplate'));
  else if (start.fromImage !== undefined && typeof start.fromImage !== 'string') throw badRequest('fromImage must be a string');
  if (start.startCmd !== undefined && start.startCmd !== '') body.start_cmd = str(start.startCmd, 'startCmd');
  if (start.readyCmd !== undefined && start.readyCmd !== '') body.ready_cmd = str(start.readyCmd, 'readyCmd');
  return { body, origin, ...(noCacheFrom !== undefined ? { noCacheFrom } : {}) };
}
