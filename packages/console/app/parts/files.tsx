import type { FileEntry } from '../sdk-types.ts';
import { useState } from 'preact/hooks';
import { dataPlane, dp, fail, fmtSize } from '../api.ts';
import { ErrorText, useAction, usePoll } from '../ui.tsx';

/** Uploads with XMLHttpRequest, the one browser API that reports upload progress. */
function upload(sandboxId: string, path: string, file: File, onProgress: (share: number) => void): Promise<void> {
  return dataPlane(sandboxId).then(
    (headers) =>
      new Promise<void>((resolve, reject) => {
        const xhr = new XMLHttpRequest();
        xhr.open('PUT', `/files?path=${encodeURIComponent(path)}`);
        for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
        xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
        xhr.onload = () => (xhr.status < 300 ? resolve() : reject(new Error(JSON.parse(xhr.responseText)?.error?.message ?? `upload failed: ${xhr.status}`)));
        xhr.onerror = () => reject(new Error('upload failed: network error'));
        xhr.send(file);
      }),
  );
}

/** Downloads through fetch (the token is a header, not a URL) and reads the body in chunks for progress. */
async function download(sandboxId: string, entry: FileEntry, onProgress: (share: number) => void): Promise<void> {
  const res = await dp(sandboxId, 'GET', `/files?path=${encodeURIComponent(entry.path)}`);
  if (!res.ok) await fail(res);
  const total = Number(res.headers.get('content-length') ?? entry.size) || 1;
  const reader = res.body!.getReader();
  const parts: Uint8Array[] = [];
  let got = 0;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    parts.push(value);
    got += value.length;
    onProgress(got / total);
  }
  const url = URL.createObjectURL(new Blob(parts as BlobPart[]));
  const a = document.createElement('a');
  a.href = url;
  a.download = entry.name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A directory browser over the data plane, with upload and download progress. */
export function FilesPanel({ id }: { id: string }) {
  const [dir, setDir] = useState('/home/user');
  const [progress, setProgress] = useState<{ label: string; share: number } | undefined>(undefined);
  const list = usePoll(async () => (await (await dp(id, 'GET', `/files/list?path=${encodeURIComponent(dir)}`)).json()) as { entries: FileEntry[] }, [id, dir]);
  const { busy, error, run } = useAction();
  const up = (e: Event) => {
    const input = e.currentTarget as HTMLInputElement;
    const file = input.files?.[0];
    if (!file) return;
    void run(async () => {
      const label = `Uploading ${file.name}`;
      setProgress({ label, share: 0 });
      await upload(id, `${dir}/${file.name}`, file, (share) => setProgress({ label, share }));
      setProgress({ label: `Uploaded ${file.name}`, share: 1 });
      input.value = '';
      await list.reload();
    });
  };
  const down = (entry: FileEntry) =>
    run(async () => {
      const label = `Downloading ${entry.name}`;
      setProgress({ label, share: 0 });
      await download(id, entry, (share) => setProgress({ label, share }));
      setProgress({ label: `Downloaded ${entry.name}`, share: 1 });
    });
  const parent = dir === '/' ? undefined : dir.replace(/\/[^/]+$/, '') || '/';
  return (
    <div class="files">
      <div class="row">
        <label class="grow">
          Directory
          <input value={dir} onChange={(e) => setDir(e.currentTarget.value || '/')} />
        </label>
        <label class="button">
          Upload file
          <input type="file" class="visually-hidden" disabled={busy} onChange={up} />
        </label>
      </div>
      {progress && (
        <div class="progress">
          <span>{progress.label}</span>
          <progress max={1} value={progress.share} aria-label={progress.label} />
          <span>{Math.round(progress.share * 100)}%</span>
        </div>
      )}
      <ErrorText error={error ?? list.error} />
      <ul class="file-list" aria-label="Files">
        {parent && (
          <li>
            <button type="button" class="link" onClick={() => setDir(parent)}>
              ..
            </button>
          </li>
        )}
        {list.data?.entries.map((e) => (
          <li key={e.path}>
            {e.type === 'dir' ? (
              <button type="button" class="link" onClick={() => setDir(e.path)}>
                {e.name}/
              </button>
            ) : (
              <>
                <span>{e.name}</span>
                <span class="sub">{fmtSize(e.size)}</span>
                {e.type === 'file' && (
                  <button type="button" class="small" disabled={busy} onClick={() => down(e)} aria-label={`Download ${e.name}`}>
                    Download
                  </button>
                )}
              </>
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}
