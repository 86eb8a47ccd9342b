import { useState } from 'preact/hooks';
import { get, type Me, signIn } from '../api.ts';
import { ErrorText, useAction } from '../ui.tsx';

/** The key goes to the server once and is dropped: the page keeps only the HttpOnly session cookie. */
export function SignInPage({ onSignedIn }: { onSignedIn: (me: Me) => void }) {
  const [key, setKey] = useState('');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      await signIn(key);
      setKey('');
      onSignedIn(await get<Me>('/me'));
    });
  };
  return (
    <main class="sign-in">
      <form class="card" onSubmit={submit}>
        <h1>Sandpit</h1>
        <label for="api-key">API key</label>
        <input id="api-key" type="password" autocomplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} placeholder="sp_…" />
        <button type="submit" disabled={busy || !key}>
          Sign in
        </button>
        <ErrorText error={error} />
        <p class="hint">The key is exchanged for a session cookie; it is not kept in this page.</p>
      </form>
    </main>
  );
}
