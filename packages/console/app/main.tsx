import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get, type Me, setSignedOutHandler, signOut } from './api.ts';
import { AuditLogPage } from './pages/audit-log.tsx';
import { BillingPage } from './pages/billing.tsx';
import { CreateSandboxPage } from './pages/create-sandbox.tsx';
import { KeysPage } from './pages/keys.tsx';
import { SandboxPage } from './pages/sandbox.tsx';
import { SandboxesPage } from './pages/sandboxes.tsx';
import { SecretsPage } from './pages/secrets.tsx';
import { SignInPage } from './pages/sign-in.tsx';
import { SnapshotsPage } from './pages/snapshots.tsx';
import { TeamPage } from './pages/team.tsx';
import { TemplatesPage } from './pages/templates.tsx';
import { VolumesPage } from './pages/volumes.tsx';
import { WebhookDeliveriesPage, WebhooksPage } from './pages/webhooks.tsx';
import { href, navigate, usePath } from './router.ts';
import './styles.css';

const NAV: [string, string, string?][] = [
  ['/sandboxes', 'Sandboxes', 'sandboxes:read'],
  ['/templates', 'Templates', 'templates:read'],
  ['/snapshots', 'Snapshots', 'snapshots:read'],
  ['/volumes', 'Volumes', 'sandboxes:read'],
  ['/secrets', 'Secrets', 'secrets:read'],
  ['/keys', 'API keys', 'keys:manage'],
  ['/team', 'Team', 'members:read'],
  ['/billing', 'Billing', 'billing:read'],
  ['/webhooks', 'Webhooks', 'webhooks:manage'],
  ['/audit-log', 'Audit log', 'audit:read'],
];

function Page({ path, me }: { path: string; me: Me }) {
  const can = (perm: string) => me.permissions.includes(perm);
  const sandbox = /^\/sandboxes\/([^/]+)$/.exec(path);
  const webhook = /^\/webhooks\/([^/]+)$/.exec(path);
  if (path === '/sandboxes/new') return <CreateSandboxPage />;
  if (sandbox) return <SandboxPage id={decodeURIComponent(sandbox[1]!)} />;
  if (path === '/sandboxes' || path === '/') return <SandboxesPage />;
  if (path === '/templates') return <TemplatesPage />;
  if (path === '/snapshots') return <SnapshotsPage />;
  if (path === '/volumes') return <VolumesPage />;
  if (path === '/secrets') return <SecretsPage />;
  if (path === '/keys') return <KeysPage me={me} />;
  if (path === '/team') return <TeamPage me={me} />;
  if (webhook) return <WebhookDeliveriesPage id={decodeURIComponent(webhook[1]!)} />;
  if (path === '/webhooks') return <WebhooksPage />;
  if (path === '/audit-log') return can('audit:read') ? <AuditLogPage /> : <p role="alert">This API key has no audit:read permission.</p>;
  if (path === '/billing') return can('billing:read') ? <BillingPage me={me} /> : <p role="alert">This API key has no billing:read permission.</p>;
  return (
    <p>
      Nothing here. <a {...href('/sandboxes')}>Back to sandboxes</a>
    </p>
  );
}

function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [menuOpen, setMenuOpen] = useState(false);
  const path = usePath();
  useEffect(() => {
    setSignedOutHandler(() => setMe(null));
    get<{ session?: Me }>('/session').then(
      (r) => setMe(r.session ?? null),
      () => setMe(null),
    );
  }, []);
  useEffect(() => setMenuOpen(false), [path]);
  if (me === undefined) return <p class="loading">Loading…</p>;
  if (me === null)
    return (
      <SignInPage
        onSignedIn={(m) => {
          setMe(m);
          if (path === '/') navigate('/sandboxes');
        }}
      />
    );
  const out = async () => {
    await signOut().catch(() => undefined);
    setMe(null);
  };
  return (
    <div class="shell">
      <header class="top">
        <a class="brand" {...href('/sandboxes')}>
          Sandpit
        </a>
        <button type="button" class="menu-toggle" aria-expanded={menuOpen} aria-controls="nav" onClick={() => setMenuOpen(!menuOpen)}>
          Menu
        </button>
        <nav id="nav" class={menuOpen ? 'open' : ''} aria-label="Main">
          {NAV.filter(([, , perm]) => !perm || me.permissions.includes(perm)).map(([to, label]) => (
            <a key={to} {...href(to)} aria-current={path === to || path.startsWith(`${to}/`) ? 'page' : undefined}>
              {label}
            </a>
          ))}
          <button type="button" class="link" onClick={out}>
            Sign out
          </button>
        </nav>
      </header>
      <main>
        <Page path={path} me={me} />
      </main>
    </div>
  );
}

render(<App />, document.getElementById('app')!);
