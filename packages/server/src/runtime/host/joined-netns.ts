import { closeSync, openSync, writeFileSync } from 'node:fs';
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
 * Readies a network namespace the host made for a sandbox that runs in a user namespace of its own,
 * where root's capabilities count for nothing against the host-owned network namespace:
 * - mounts, read-only at `sysfsTarget`, a sysfs whose network part (/sys/class/net) shows this
 *   namespace: the sandbox may not mount one (crun then binds the host's /sys, which lists the
 *   host's interfaces);
 * - lets every sandbox user bind ports below 1024 and open ICMP echo sockets (ping), as root inside
 *   did before and as Docker sets up its containers: without CAP_NET_BIND_SERVICE / CAP_NET_RAW in
 *   the namespace's owner, root would lose both.
 * The namespace is per thread: this thread enters it for these few calls and returns at once, with
 * nothing else running on it meanwhile.
 */
export function prepareJoinedNetns(netnsPath: string, sysfsTarget: string): void {
  const own = openSync('/proc/thread-self/ns/net', 'r');
  let ns: number | undefined;
  try {
    ns = openSync(netnsPath, 'r');
    if (setns(ns, CLONE_NEWNET) !== 0) throw new Error(`entering ${netnsPath}: ${strerror(koffi.errno())}`);
    try {
      // /proc/sys/net is the namespace of the thread that opens it.
      writeFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', '0');
      writeFileSync('/proc/sys/net/ipv4/ping_group_range', '0 2147483647');
      if (mount('sysfs', sysfsTarget, 'sysfs', MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, null) !== 0) {
        throw new Error(`mounting sysfs of ${netnsPath} at ${sysfsTarget}: ${strerror(koffi.errno())}`);
      }
    } finally {
      // Staying in the sandbox's namespace would move every later socket of the server there.
      if (setns(own, CLONE_NEWNET) !== 0) {
        console.error(`sandpit: could not return to the host network namespace: ${strerror(koffi.errno())}`);
        process.abort();
      }
    }
  } finally {
    if (ns !== undefined) closeSync(ns);
    closeSync(own);
  }
}
