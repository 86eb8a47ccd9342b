import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';

/**
 * Fastify's own response serializers (fast-json-stringify), each compiled when its route first answers
 * with that status instead of all at start-up: compiling every route's response schemas was the largest
 * part of a start's CPU (about 1.5 s of 10.6 s sampled, restarting beside 100 running sandboxes).
 * What a response holds is the same either way.
 */
export const lazySerializers: NonNullable<FastifyServerOptions['schemaController']> = {
  compilersFactory: {
    buildSerializer(externalSchemas, options) {
      const compile = SerializerSelector()(externalSchemas, options);
      return (route) => {
        let serialize: ((doc: unknown) => string) | undefined;
        return (doc: unknown) => {
          serialize ??= compile(route);
          return serialize(doc);
        };
      };
    },
  },
};
