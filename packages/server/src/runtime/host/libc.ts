import koffi from 'koffi';

/** libc, for the few calls Node does not offer (koffi calls it directly: no compiler needed). */
export const libc = koffi.load('libc.so.6');
