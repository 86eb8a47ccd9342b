import { libc } from './libc.ts';

const fcntl = libc.func('int fcntl(int fd, int cmd, int arg)');
const F_SETPIPE_SZ = 1031;

/**
 * Grows the kernel buffer of the pipe or FIFO open on `fd` to `bytes` (at most /proc/sys/fs/pipe-max-size
 * without CAP_SYS_RESOURCE): with the default 64 KiB, a stream through it costs both ends a context switch
 * per 64 KiB. Answers whether it grew; a pipe left at its size still works.
 */
export function growPipe(fd: number, bytes: number): boolean {
  return fcntl(fd, F_SETPIPE_SZ, bytes) >= bytes;
}
