import { closeSync, openSync } from 'node:fs';
import koffi from 'koffi';
import { libc } from './libc.ts';

const setns = libc.func('int setns(int fd, int nstype)');
const mount = libc.func('int mount(const char *source, const char *target, const char *fstype, unsigned long flags, const char *data)');
const strerror = libc.func('const char *strerror(int errnum)');

const CLONE_NEWNET = 0x40000000;
const MS_RDONLY = 1;
const MS_NOSUID = 2;
const MS_NODEV = 4;
const MS_NOEXEC = 8;

/**
 * Mounts, read-only at `target`, a sysfs whose network part (/sys/class/net and the like) shows the
 * network namespace at `netnsPath`. A sandbox in a user namespace of its own may not mount sysfs for
 * a network namespace the host made (crun then binds the host's /sys, which lists the host's
 * interfaces), so host root mounts it for it. The namespace is per thread: this thread enters it
 * for the one mount call and returns at once, with nothing else running on it meanwhile.
 */
export function mountSysfsOf(netnsPath: string, target: string): void {
  const own = openSync('/proc/thread-self/ns/net', 'r');
  let ns: number | undefined;
  try {
    ns = openSync(netnsPath, 'r');
    if (setns(ns, CLONE_NEWNET) !== 0) throw new Error(`entering ${netnsPath}: ${strerror(koffi.errno())}`);
    let rc: number;
    let errno = 0;
    try {
      rc = mount('sysfs', target, 'sysfs', MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, null);
      if (rc !== 0) errno = koffi.errno();
    } finally {
      // Staying in the sandbox's namespace would move every later socket of the server there.
      if (setns(own, CLONE_NEWNET) !== 0) {
        console.error(`sandpit: could not return to the host network namespace: ${strerror(koffi.errno())}`);
        process.abort();
      }
    }
    if (rc !== 0) throw new Error(`mounting sysfs of ${netnsPath} at ${target}: ${strerror(errno)}`);
  } finally {
    if (ns !== undefined) closeSync(ns);
    closeSync(own);
  }
}
