import { type Static, Type } from 'typebox';
import { DateTime } from './common.ts';

export const AuditEntry = Type.Object(
  {
    id: Type.String(),
    at: DateTime,
    actor: Type.Object({
      type: Type.Union([Type.Literal('api_key'), Type.Literal('console_session'), Type.Literal('access_token')], {
        description: 'api_key: X-API-Key; console_session: the console, acting through the key it was opened with; access_token: a sandbox access token on the data plane',
      }),
      key_id: Type.Optional(Type.String()),
      user_id: Type.Optional(Type.String()),
    }),
    action: Type.String({ description: 'Dotted name, e.g. sandbox.create, sandbox.exec, sandbox.terminal.open, secret.revoke, api_key.create, member.deactivate, webhook.update' }),
    resource: Type.Object({ type: Type.String(), id: Type.Optional(Type.String()) }),
    request: Type.Object({
      method: Type.String(),
      route: Type.String({ description: 'The route pattern (no query string, no body)' }),
      ip: Type.String(),
      user_agent: Type.Optional(Type.String()),
    }),
    status: Type.Integer({ description: 'The HTTP status the call answered' }),
    trace_id: Type.Optional(Type.String({ description: 'The OpenTelemetry trace of the call, when tracing is on' })),
  },
  { $id: 'AuditEntry' },
);
export type AuditEntry = Static<typeof AuditEntry>;

export const AuditLogPage = Type.Object({ entries: Type.Array(Type.Ref('AuditEntry')), next_cursor: Type.Optional(Type.String()) });

export const AuditLogQuery = Type.Object(
  {
    limit: Type.Optional(Type.String({ description: 'Page size, 1 to 1000 (default 100)' })),
    cursor: Type.Optional(Type.String()),
    actor: Type.Optional(Type.String({ maxLength: 128, description: 'An API key id or a user id' })),
    action: Type.Optional(Type.String({ maxLength: 128 })),
    resource_type: Type.Optional(Type.String({ maxLength: 64, description: 'sandbox, snapshot, template, secret, api_key, member, webhook, console_session' })),
    resource_id: Type.Optional(Type.String({ maxLength: 256 })),
    since: Type.Optional(Type.String({ description: 'RFC 3339 time: entries at or after it' })),
    until: Type.Optional(Type.String({ description: 'RFC 3339 time: entries before it' })),
  },
  { additionalProperties: false },
);
export type AuditLogQuery = Static<typeof AuditLogQuery>;
