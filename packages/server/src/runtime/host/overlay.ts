import { mountFs } from './mount-syscall.ts';
import { runCommand } from './run-command.ts';

/** Lower dirs of a sandbox's overlay, top first: the template's step layers above its root. */
export function lowerDirs(spec: { templateRoot: string; templateLayers?: string[] }): string[] {
  return [...(spec.templateLayers ?? []), spec.templateRoot];
}

/** Mounts the sandbox root: the shared read-only template (top layer first) below, the sandbox's own layer above. */
export async function mountOverlay(lowers: string[], upper: string, work: string, target: string): Promise<void> {
  for (const p of [...lowers, upper, work]) {
    // These characters separate or escape overlay mount options.
    if (/[,:\\]/.test(p)) throw new Error(`overlay path ${p} contains one of , : \\`);
  }
  const data = `lowerdir=${lowers.join(':')},upperdir=${upper},workdir=${work}`;
  if (await mountFs('overlay', target, 'overlay', data)) return;
  await runCommand('mount', ['-t', 'overlay', 'overlay', '-o', data, target]);
}
