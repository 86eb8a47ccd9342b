import { posix } from 'node:path';
import type { FileEntry } from '../../services/data-plane/files.ts';
import type { FileMetadata } from '../../store/file-metadata.ts';

const FILE_TYPE: Record<FileEntry['type'], string> = {
  file: 'FILE_TYPE_FILE',
  dir: 'FILE_TYPE_DIRECTORY',
  symlink: 'FILE_TYPE_SYMLINK',
  other: 'FILE_TYPE_UNSPECIFIED',
};
const MODE_CHAR: Record<FileEntry['type'], string> = { file: '-', dir: 'd', symlink: 'L', other: '?' };

/** The base template's accounts (templates/base-user.sh); other ids are reported as numbers. */
const ACCOUNT: Record<number, string> = { 0: 'root', 1000: 'user' };
const account = (id: number | undefined) => (id === undefined ? '' : (ACCOUNT[id] ?? String(id)));

/**
 * What a directory's size is reported as where the sandbox's filesystem (overlay over tmpfs) says 0:
 * one block, as on the ext4 root filesystem E2B's envd stats, which the SDK's callers expect to be above 0.
 */
const DIR_BLOCK = 4096;

/** A Sandpit file entry as envd's `filesystem.EntryInfo` in proto3 JSON (int64 as a string), with its user metadata if it has any. */
export function entryInfo(e: FileEntry, metadata?: FileMetadata): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: e.name,
    type: FILE_TYPE[e.type],
    path: e.path,
    size: String(e.type === 'dir' && e.size === 0 ? DIR_BLOCK : e.size),
    mode: e.mode,
    permissions: MODE_CHAR[e.type] + e.permissions,
    owner: account(e.uid),
    group: account(e.gid),
    modifiedTime: e.modified_at,
  };
  // envd reports where a link points as an absolute path.
  if (e.symlink_target !== undefined) out.symlinkTarget = posix.resolve(posix.dirname(e.path), e.symlink_target);
  if (metadata) out.metadata = metadata;
  return out;
}

/** The entry shape envd's HTTP /files upload answers with. */
export const writtenInfo = (e: FileEntry, metadata?: FileMetadata) => ({ name: e.name, type: e.type === 'dir' ? 'directory' : 'file', path: e.path, ...(metadata ? { metadata } : {}) });
