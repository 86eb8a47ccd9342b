import { pino, type Logger } from 'pino';

/** The one logger; credentials in headers never reach it. */
export function createLogger(level: string): Logger {
  return pino({
    level,
    redact: { paths: ['req.headers["x-api-key"]', 'req.headers["x-access-token"]', 'req.headers.authorization'], censor: '[redacted]' },
  });
}
