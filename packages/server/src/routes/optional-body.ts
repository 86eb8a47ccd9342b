import type { RouteOptions } from 'fastify';

/** True when the route's body is an object none of whose fields is required. */
function bodyIsOptional(route: RouteOptions): boolean {
  const body = route.schema?.body as { type?: unknown; required?: unknown[] } | undefined;
  return body !== undefined && body.type === 'object' && (body.required ?? []).length === 0;
}

/**
 * onRoute hook: a request that leaves out a body whose every field is optional (plain `curl -X POST`,
 * or an empty body under a JSON content type) is taken as `{}` instead of failing validation as null.
 */
export function acceptMissingOptionalBody(route: RouteOptions): void {
  if (!bodyIsOptional(route)) return;
  const own = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
  route.preValidation = [
    async (req) => {
      if (req.body === undefined || req.body === null) req.body = {};
    },
    ...own,
  ];
}
