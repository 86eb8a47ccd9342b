import { type DestinationStream, pino, type Logger } from 'pino';
import { activeTraceId } from './tracing.ts';

/** The one logger; credentials in headers never reach it. `traced`: each line written within a trace carries its `trace_id`. */
export function createLogger(level: string, traced = false, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      redact: { paths: ['req.headers["x-api-key"]', 'req.headers["x-access-token"]', 'req.headers.authorization'], censor: '[redacted]' },
      ...(traced
        ? {
            mixin: () => {
              const traceId = activeTraceId();
              return traceId ? { trace_id: traceId } : {};
            },
          }
        : {}),
    },
    destination,
  );
}
