import type { components, paths } from './generated/openapi.ts';

/** The JSON request body of an operation. */
type BodyOf<Op> = Op extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The JSON body of an operation's answer with the given status. */
type AnswerOf<Op, S extends number> = Op extends { responses: { [K in S]: { content: { 'application/json': infer B } } } } ? B : never;

export type Info = AnswerOf<paths['/info']['get'], 200>;
export type Me = AnswerOf<paths['/me']['get'], 200>;

/** A sandbox as GET, list, update and pause return it. */
export type SandboxInfo = components['schemas']['Sandbox'];
/** A sandbox as create, resume and activate return it: with the data-plane access token. */
export type SandboxWithToken = components['schemas']['SandboxWithToken'];
export type SandboxStatus = SandboxInfo['status'];
export type CreateSandboxParams = BodyOf<paths['/sandboxes']['post']>;
export type UpdateSandboxParams = BodyOf<paths['/sandboxes/{sandbox_id}']['patch']>;
export type SandboxPage = AnswerOf<paths['/sandboxes']['get'], 200>;
/** A sandbox's sampled CPU, memory, disk and network series. */
export type SandboxMetrics = AnswerOf<paths['/sandboxes/{sandbox_id}/metrics']['get'], 200>;
export type MetricPoint = SandboxMetrics['points'][number];
export type SandboxEvent = AnswerOf<paths['/sandboxes/{sandbox_id}/events']['get'], 200>['events'][number];
/** A page of what a sandbox changed against its template or snapshot. */
export type SandboxChangePage = AnswerOf<paths['/sandboxes/{sandbox_id}/changes']['get'], 200>;
export type SandboxChange = components['schemas']['Change'];
export type ApplyChangesResult = AnswerOf<paths['/sandboxes/{sandbox_id}/changes/apply']['post'], 200>;

export type ExecParams = BodyOf<paths['/exec']['post']>;
export type ControlExecAnswer = AnswerOf<paths['/sandboxes/{sandbox_id}/exec']['post'], 200>;
export type DataExecAnswer = AnswerOf<paths['/exec']['post'], 200>;
export type ExecStreamEvent = paths['/exec/stream']['post']['responses'][200]['content']['text/event-stream'];

export type ApiKeyInfo = AnswerOf<paths['/api-keys']['get'], 200>['api_keys'][number];
export type CreatedApiKey = AnswerOf<paths['/api-keys']['post'], 201>;
export type CreateApiKeyParams = BodyOf<paths['/api-keys']['post']>;

export type FileEntry = components['schemas']['FileEntry'];
export type FileWatchEvent = paths['/files/watch']['get']['responses'][200]['content']['text/event-stream'];

export type TerminalInfo = components['schemas']['TerminalInfo'];
export type CreateTerminalParams = BodyOf<paths['/terminals']['post']>;

export type ProcessInfo = components['schemas']['ProcessInfo'];
export type ProcessOutput = AnswerOf<paths['/processes/{id}/output']['get'], 200>;
export type StartProcessParams = BodyOf<paths['/processes']['post']>;

export type Volume = components['schemas']['Volume'];
export type VolumePage = AnswerOf<paths['/volumes']['get'], 200>;
export type CreateVolumeParams = BodyOf<paths['/volumes']['post']>;
export type VolumeFileEntry = components['schemas']['VolumeFileEntry'];
/** One mount of `Sandbox.create({ volumes })`. */
export type VolumeMount = NonNullable<CreateSandboxParams['volumes']>[number];

export type Snapshot = components['schemas']['Snapshot'];
export type SnapshotPage = AnswerOf<paths['/snapshots']['get'], 200>;

export type Secret = AnswerOf<paths['/secrets']['post'], 201>;
export type CreateSecretParams = BodyOf<paths['/secrets']['post']>;
export type SshKey = AnswerOf<paths['/ssh-keys']['post'], 201>;
export type AddSshKeyParams = BodyOf<paths['/ssh-keys']['post']>;

export type PreviewPort = AnswerOf<paths['/sandboxes/{sandbox_id}/preview-ports']['post'], 201>;
export type PublishPreviewPortParams = BodyOf<paths['/sandboxes/{sandbox_id}/preview-ports']['post']>;

export type Template = components['schemas']['Template'];
export type TemplateWithBuild = AnswerOf<paths['/templates']['post'], 202>;
export type CreateTemplateParams = BodyOf<paths['/templates']['post']>;
export type TemplateStep = NonNullable<CreateTemplateParams['steps']>[number];
export type TemplateBuild = AnswerOf<paths['/templates/{template_id}/builds/{build_id}']['get'], 200>;
/** One event of a build log: a line, or the final one with `finished`, `status` and maybe `error`. */
export interface BuildLogEvent {
  timestamp: string;
  line?: string;
  finished?: boolean;
  status?: 'ready' | 'failed';
  error?: string;
}

export type TeamManagement = AnswerOf<paths['/teams/{team_id}/management']['get'], 200>;
export type TeamMember = components['schemas']['TeamMember'];
export type RoleAssignment = components['schemas']['RoleAssignment'];
export type InviteMemberParams = BodyOf<paths['/teams/{team_id}/members']['post']>;
export type InvitedMember = AnswerOf<paths['/teams/{team_id}/members']['post'], 201>;

export type BillingSummary = components['schemas']['BillingSummary'];
export type TeamBillingUsage = components['schemas']['TeamBillingUsage'];
export type BillingPeriod = components['schemas']['BillingPeriod'];
export type SandboxBillingUsage = AnswerOf<paths['/teams/{team_id}/billing/usage/sandboxes']['get'], 200>;

export type Webhook = components['schemas']['Webhook'];
/** A new webhook, with its signing secret (shown only here). */
export type CreatedWebhook = AnswerOf<paths['/webhooks']['post'], 201>;
export type CreateWebhookParams = BodyOf<paths['/webhooks']['post']>;
export type UpdateWebhookParams = BodyOf<paths['/webhooks/{webhook_id}']['patch']>;
export type WebhookDelivery = components['schemas']['WebhookDelivery'];
export type WebhookDeliveryPage = AnswerOf<paths['/webhooks/{webhook_id}/deliveries']['get'], 200>;
/** The dotted names a webhook subscribes to ('*' for all). */
export type WebhookEventType =
  | 'sandbox.created'
  | 'sandbox.paused'
  | 'sandbox.resumed'
  | 'sandbox.deleted'
  | 'sandbox.failed'
  | 'sandbox.auto_paused'
  | 'sandbox.auto_deleted'
  | 'snapshot.ready'
  | 'snapshot.failed'
  | 'template.built'
  | 'template.failed';

export type AuditEntry = components['schemas']['AuditEntry'];
export type AuditLogPage = AnswerOf<paths['/audit-log']['get'], 200>;

export type DesktopAction = BodyOf<paths['/sandboxes/{sandbox_id}/desktop/actions']['post']>;
export type CursorPosition = AnswerOf<paths['/sandboxes/{sandbox_id}/desktop/cursor']['get'], 200>;
export type ScreenSize = AnswerOf<paths['/sandboxes/{sandbox_id}/desktop/screen']['get'], 200>;
export type LiveView = AnswerOf<paths['/sandboxes/{sandbox_id}/desktop/live-view']['post'], 201>;
export type RunCodeParams = BodyOf<paths['/sandboxes/{sandbox_id}/code/run']['post']>;
export type CodeEvent = paths['/sandboxes/{sandbox_id}/code/run']['post']['responses'][200]['content']['application/x-ndjson'];
export type CodeRunResult = Extract<CodeEvent, { type: 'end' }>;
export type CodeResult = CodeRunResult['results'][number];
export type CodeContext = AnswerOf<paths['/sandboxes/{sandbox_id}/code/contexts']['post'], 201>;
