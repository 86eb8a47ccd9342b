import { type Static, Type } from 'typebox';
import { DateTime } from './common.ts';

export const PreviewAccess = Type.Union([Type.Literal('public'), Type.Literal('private')]);

export const PublishPreviewPortBody = Type.Object(
  {
    port: Type.Integer({ minimum: 1, maximum: 65535 }),
    access: Type.Optional(PreviewAccess),
  },
  { additionalProperties: false, description: 'access defaults to the sandbox preview_access (legacy_public publishes as public)' },
);
export type PublishPreviewPortBody = Static<typeof PublishPreviewPortBody>;

export const PreviewPort = Type.Object({
  port: Type.Integer(),
  access: PreviewAccess,
  url: Type.String({ description: 'Where the port is reachable; the server inside must listen on 0.0.0.0' }),
  preview_token: Type.Optional(Type.String({ description: 'Private ports only: send as X-Preview-Token or ?preview_token= (X-Access-Token also works)' })),
  created_at: DateTime,
});

export const PreviewPortList = Type.Object({ preview_ports: Type.Array(PreviewPort) });

export const PreviewPortParams = Type.Object({
  sandbox_id: Type.String({ description: 'PublicSandboxId: a UUID or sb-<region>-<uuid>' }),
  port: Type.String({ description: 'Port number, 1 to 65535' }),
});
export type PreviewPortParams = Static<typeof PreviewPortParams>;
