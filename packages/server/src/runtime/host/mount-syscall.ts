import { libc } from './libc.ts';

// mount(2) straight from libc: spawning mount(8) costs a sandbox start many times the syscall (docs/host-timings.md).
const mount = libc.func('int mount(const char *source, const char *target, const char *fstype, unsigned long flags, const char *data)');

/** Resolves true when mounted; false when the syscall refused (the caller retries with mount(8) for its message). */
export function mountFs(source: string, target: string, fstype: string, data: string): Promise<boolean> {
  return new Promise((resolve) => {
    // On a worker thread, so the event loop never waits on the kernel.
    mount.async(source, target, fstype, 0, data, (err: unknown, rc: number) => resolve(!err && rc === 0));
  });
}
