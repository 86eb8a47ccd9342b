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

export type ExecParams = BodyOf<paths['/exec']['post']>;
export type ControlExecAnswer = AnswerOf<paths['/sandboxes/{sandbox_id}/exec']['post'], 200>;
export type DataExecAnswer = AnswerOf<paths['/exec']['post'], 200>;
export type ExecStreamEvent = paths['/exec/stream']['post']['responses'][200]['content']['text/event-stream'];

export type ApiKeyInfo = AnswerOf<paths['/api-keys']['get'], 200>['api_keys'][number];
export type CreatedApiKey = AnswerOf<paths['/api-keys']['post'], 201>;
export type CreateApiKeyParams = BodyOf<paths['/api-keys']['post']>;
