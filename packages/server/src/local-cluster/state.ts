import { readFile, writeFile } from 'node:fs/promises';
import { writeFileAtomic } from '../optional-files.ts';
import { join } from 'node:path';
import type { Member } from './plan.ts';
import type { ProcessRef } from './processes.ts';

export interface MemberState extends Member {
  /** Unset until started (or after a failed start). */
  process?: ProcessRef;
}

/** What `down`, `status` and the node commands need to find a cluster that another process started. */
export interface ClusterState {
  dir: string;
  createdAt: string;
  /** The settings `up` was given for every member, reused by `restart`. */
  env: Record<string, string>;
  apiKey: string;
  clusterKey: string;
  postgres: { dir: string; databaseUrl: string; durable: boolean };
  regions: { name: string; apis: MemberState[]; nodes: MemberState[] }[];
}

/** Holds keys: readable by root only. */
const FILE = 'cluster.json';

export const stateFile = (dir: string) => join(dir, FILE);

/**
 * Claims the directory for a new cluster: creating the state file fails when it exists, so a second
 * `up` (even a concurrent one) stops before it starts anything.
 */
export async function claim(dir: string): Promise<void> {
  try {
    await writeFile(stateFile(dir), '{}\n', { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    throw new Error(`a cluster is already up in ${dir} (sandpit cluster status --dir ${dir}); stop it with sandpit cluster down --dir ${dir}`);
  }
}

/** Written after every step of `up`, so an interrupted start is still found and stopped by `down`. */
export async function save(state: ClusterState): Promise<void> {
  await writeFileAtomic(stateFile(state.dir), `${JSON.stringify(state, null, 2)}\n`, 0o600);
}

/** The cluster of a directory; undefined when there is none. A claim without a saved state yet reads as an empty cluster. */
export async function load(dir: string): Promise<Partial<ClusterState> | undefined> {
  const text = await readFile(stateFile(dir), 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  return text === undefined ? undefined : (JSON.parse(text) as Partial<ClusterState>);
}
