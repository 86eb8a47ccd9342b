import { runCommand } from './run-command.ts';

/** Mounts the sandbox root: the shared read-only template below, the sandbox's own layer above. */
export async function mountOverlay(lower: string, upper: string, work: string, target: string): Promise<void> {
  for (const p of [lower, upper, work]) {
    // These characters separate or escape overlay mount options.
    if (/[,:\\]/.test(p)) throw new Error(`overlay path ${p} contains one of , : \\`);
  }
  await runCommand('mount', ['-t', 'overlay', 'overlay', '-o', `lowerdir=${lower},upperdir=${upper},workdir=${work}`, target]);
}
