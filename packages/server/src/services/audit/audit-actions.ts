/** What a mutating route does, as the audit log names it; `id` says where the resource's id comes from. */
export interface AuditAction {
  action: string;
  resourceType: string;
  /** A path parameter, the created resource's `id` in the response, or the data plane's sandbox. */
  id: { param: string } | 'response' | 'sandbox' | 'none';
}

const param = (name: string) => ({ param: name });
const act = (action: string, id: AuditAction['id']): AuditAction => ({ action, resourceType: action.split('.')[0]!, id });

/**
 * Every route that changes something, by method and route pattern. A mutating route missing here is
 * still recorded (under `<method> <route>`), and `audit.test.ts` fails until it has a name.
 */
const ACTIONS: Record<string, AuditAction> = {
  'POST /sandboxes': act('sandbox.create', 'response'),
  'PATCH /sandboxes/:sandbox_id': act('sandbox.update', param('sandbox_id')),
  'DELETE /sandboxes/:sandbox_id': act('sandbox.delete', param('sandbox_id')),
  'POST /sandboxes/:sandbox_id/pause': act('sandbox.pause', param('sandbox_id')),
  'POST /sandboxes/:sandbox_id/resume': act('sandbox.resume', param('sandbox_id')),
  'POST /sandboxes/:sandbox_id/migrate': act('sandbox.migrate', param('sandbox_id')),
  'POST /sandboxes/:sandbox_id/activate': act('sandbox.activate', param('sandbox_id')),
  'POST /sandboxes/:sandbox_id/exec': act('sandbox.exec', param('sandbox_id')),
  'POST /sandboxes/:sandbox_id/exec/stream': act('sandbox.exec', param('sandbox_id')),
  'POST /sandboxes/:sandbox_id/code/run': act('sandbox.code.run', param('sandbox_id')),
  'POST /sandboxes/:sandbox_id/code/contexts': act('sandbox.code.context_create', param('sandbox_id')),
  'POST /sandboxes/:sandbox_id/code/contexts/:context_id/restart': act('sandbox.code.context_restart', param('sandbox_id')),
  'DELETE /sandboxes/:sandbox_id/code/contexts/:context_id': act('sandbox.code.context_remove', param('sandbox_id')),
  'POST /sandboxes/:sandbox_id/preview-ports': act('sandbox.preview_port.publish', param('sandbox_id')),
  'DELETE /sandboxes/:sandbox_id/preview-ports/:port': act('sandbox.preview_port.unpublish', param('sandbox_id')),
  'POST /sandboxes/:sandbox_id/desktop/actions': act('sandbox.desktop.action', param('sandbox_id')),
  'POST /sandboxes/:sandbox_id/desktop/live-view': act('sandbox.desktop.live_view', param('sandbox_id')),
  'POST /sandboxes/:sandbox_id/snapshot': act('snapshot.create', 'response'),
  'POST /sandboxes/:sandbox_id/changes/apply': act('sandbox.changes.apply', param('sandbox_id')),
  'PATCH /snapshots/:snapshot_id': act('snapshot.update', param('snapshot_id')),
  'DELETE /snapshots/:snapshot_id': act('snapshot.delete', param('snapshot_id')),
  // The data plane: the sandbox is the one its access token opens.
  'POST /exec': act('sandbox.exec', 'sandbox'),
  'POST /exec/stream': act('sandbox.exec', 'sandbox'),
  'PUT /files': act('sandbox.file.write', 'sandbox'),
  'POST /files/mkdir': act('sandbox.file.mkdir', 'sandbox'),
  'POST /files/remove': act('sandbox.file.remove', 'sandbox'),
  'POST /files/rename': act('sandbox.file.rename', 'sandbox'),
  'POST /processes': act('sandbox.process.start', 'sandbox'),
  'POST /processes/:id/stdin': act('sandbox.process.stdin', 'sandbox'),
  'POST /processes/:id/signal': act('sandbox.process.signal', 'sandbox'),
  'DELETE /processes/:id': act('sandbox.process.kill', 'sandbox'),
  'POST /terminals': act('sandbox.terminal.create', 'sandbox'),
  'DELETE /terminals/:id': act('sandbox.terminal.kill', 'sandbox'),
  'GET /terminals/:id/connect': act('sandbox.terminal.open', 'sandbox'),
  'POST /templates': act('template.build', 'response'),
  'DELETE /templates/:template_id': act('template.delete', param('template_id')),
  'POST /secrets': act('secret.create', 'none'),
  'DELETE /secrets/:name': act('secret.revoke', param('name')),
  'POST /api-keys': act('api_key.create', 'response'),
  'DELETE /api-keys/:key_id': act('api_key.revoke', param('key_id')),
  'POST /session': act('console_session.create', 'none'),
  'DELETE /session': act('console_session.delete', 'none'),
  'POST /teams/:team_id/members': act('member.invite', 'response'),
  'DELETE /teams/:team_id/members/:user_id': act('member.deactivate', param('user_id')),
  'POST /teams/:team_id/members/:user_id/roles': act('member.role_grant', param('user_id')),
  'DELETE /teams/:team_id/members/:user_id/roles/:role_name': act('member.role_revoke', param('user_id')),
  'POST /webhooks': act('webhook.create', 'response'),
  'PATCH /webhooks/:webhook_id': act('webhook.update', param('webhook_id')),
  'DELETE /webhooks/:webhook_id': act('webhook.delete', param('webhook_id')),
  'POST /webhooks/:webhook_id/test': act('webhook.test', param('webhook_id')),
  'POST /volumes': act('volume.create', 'response'),
  'PATCH /volumes/:volume': act('volume.update', param('volume')),
  'DELETE /volumes/:volume': act('volume.delete', param('volume')),
  'PUT /volumes/:volume/files': act('volume.file.write', param('volume')),
  'DELETE /volumes/:volume/files': act('volume.file.remove', param('volume')),
  'POST /ssh-keys': act('ssh_key.create', 'response'),
  'DELETE /ssh-keys/:id': act('ssh_key.delete', param('id')),
};

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The audit entry's name for a call, or undefined when the call changes nothing (reads, internal routes). */
export function auditActionOf(method: string, route: string | undefined): AuditAction | undefined {
  if (!route || route.startsWith('/internal/')) return undefined;
  const known = ACTIONS[`${method} ${route}`];
  if (known) return known;
  if (!MUTATING.has(method)) return undefined;
  return { action: `${method} ${route}`, resourceType: route.split('/')[1] ?? '', id: 'none' };
}

/** Whether the table names the route (for the test that keeps it complete). */
export const isNamedAuditRoute = (method: string, route: string) => `${method} ${route}` in ACTIONS;

/** The E2B-compatible control plane's calls that change something (its own port; docs/e2b.md), named as on the main API. */
/** Requests whose audited action is not their route's (a DELETE /templates/{id} that deleted a template). */
const E2B_ACTION_OF = new WeakMap<object, string>();
export const e2bAuditAs = (req: object, action: string) => E2B_ACTION_OF.set(req, action);
export const e2bActionOf = (req: object, route: string): string | undefined => E2B_ACTION_OF.get(req) ?? E2B_ACTIONS[route];

export const E2B_ACTIONS: Record<string, string> = {
  'POST /sandboxes': 'sandbox.create',
  'POST /v2/sandboxes': 'sandbox.create',
  'DELETE /sandboxes/:sandboxID': 'sandbox.delete',
  'POST /sandboxes/:sandboxID/pause': 'sandbox.pause',
  'POST /sandboxes/:sandboxID/resume': 'sandbox.resume',
  'POST /sandboxes/:sandboxID/connect': 'sandbox.activate',
  'POST /v2/sandboxes/:sandboxID/connect': 'sandbox.activate',
  'POST /sandboxes/:sandboxID/timeout': 'sandbox.update',
  'POST /sandboxes/:sandboxID/snapshots': 'snapshot.create',
  'POST /sandboxes/:sandboxID/fork': 'sandbox.fork',
  // E2B deletes snapshots and templates alike: the route says which it was (e2bAuditAs).
  'DELETE /templates/:templateID': 'snapshot.delete',
  'POST /v2/templates/:templateID/builds/:buildID': 'template.build',
  'POST /templates/tags': 'template.tags.assign',
  'DELETE /templates/tags': 'template.tags.remove',
  'POST /volumes': 'volume.create',
  'DELETE /volumes/:volumeID': 'volume.delete',
  // The volume content API (its calls carry a volume token, not an API key).
  'PUT /volumecontent/:volumeID/file': 'volume.file.write',
  'POST /volumecontent/:volumeID/dir': 'volume.file.mkdir',
  'PATCH /volumecontent/:volumeID/path': 'volume.file.update',
  'DELETE /volumecontent/:volumeID/path': 'volume.file.remove',
};
