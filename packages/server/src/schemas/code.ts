import { type Static, Type } from 'typebox';

export const CodeLanguage = Type.Union([Type.Literal('python'), Type.Literal('javascript'), Type.Literal('typescript'), Type.Literal('r'), Type.Literal('bash')], { description: 'Default python' });

export const RunCodeBody = Type.Object(
  {
    code: Type.String({ maxLength: 1_048_576 }),
    language: Type.Optional(CodeLanguage),
    context_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'A context from POST /code/contexts; not combinable with language' })),
    env: Type.Optional(Type.Record(Type.String({ pattern: '^[A-Za-z_][A-Za-z0-9_]*$' }), Type.String(), { maxProperties: 256, description: 'Set for this run only' })),
  },
  { additionalProperties: false },
);
export type RunCodeBody = Static<typeof RunCodeBody>;

export const CodeResult = Type.Object(
  {
    is_main_result: Type.Boolean({ description: 'The value of the last expression (else a display call such as a chart)' }),
    text: Type.Optional(Type.String()),
    html: Type.Optional(Type.String()),
    markdown: Type.Optional(Type.String()),
    svg: Type.Optional(Type.String()),
    png: Type.Optional(Type.String({ description: 'base64' })),
    jpeg: Type.Optional(Type.String({ description: 'base64' })),
    pdf: Type.Optional(Type.String({ description: 'base64' })),
    latex: Type.Optional(Type.String()),
    json: Type.Optional(Type.Unknown()),
    javascript: Type.Optional(Type.String()),
  },
  { additionalProperties: true, description: 'One output in its formats (Jupyter MIME bundles); other MIME types keep their names' },
);

export const CodeError = Type.Object({ name: Type.String(), value: Type.String(), traceback: Type.String() });

export const CodeEvent = Type.Union([
  Type.Object({ type: Type.Literal('stdout'), text: Type.String() }),
  Type.Object({ type: Type.Literal('stderr'), text: Type.String() }),
  Type.Intersect([Type.Object({ type: Type.Literal('result') }), CodeResult]),
  Type.Object({ type: Type.Literal('error'), name: Type.String(), value: Type.String(), traceback: Type.String() }),
  Type.Object({ type: Type.Literal('execution_count'), execution_count: Type.Integer() }),
  Type.Object(
    {
      type: Type.Literal('end'),
      results: Type.Array(CodeResult),
      stdout: Type.Array(Type.String()),
      stderr: Type.Array(Type.String()),
      error: Type.Optional(CodeError),
      execution_count: Type.Optional(Type.Integer()),
    },
    { description: 'The last event: everything the run produced' },
  ),
]);
export type CodeEvent = Static<typeof CodeEvent>;

export const CodeContext = Type.Object({ id: Type.String(), language: CodeLanguage, cwd: Type.String() });
export type CodeContext = Static<typeof CodeContext>;

export const CreateCodeContextBody = Type.Object(
  { language: Type.Optional(CodeLanguage), cwd: Type.Optional(Type.String({ minLength: 1, maxLength: 4096, pattern: '^/', description: 'Default /home/user' })) },
  { additionalProperties: false },
);
export type CreateCodeContextBody = Static<typeof CreateCodeContextBody>;

export const CodeContextParams = Type.Object({ sandbox_id: Type.String(), context_id: Type.String({ maxLength: 64 }) });
export type CodeContextParams = Static<typeof CodeContextParams>;
