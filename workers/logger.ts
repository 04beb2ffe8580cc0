import pino from 'pino';
import type { Logger as PinoLogger } from 'pino';
import { DefaultLogger, Runtime, type LogLevel, type LogMetadata } from '@temporalio/worker';

/**
 * The one pino logger of a worker process. Card data, email addresses and secrets are redacted by key
 * wherever they appear in log metadata; Temporal's workflow and activity `log` calls are routed here so
 * every line carries the workflow ID (the run or the action key) and the activity's key.
 */
export const REDACT_PATHS = [
  '*.cardNumber',
  '*.cvc',
  '*.pan',
  '*.to',
  '*.email',
  '*.apiKey',
  '*.authorization',
  '*.password',
  '*.secret',
  '*.privateKey',
  '*.signingKey',
  'intent.to',
  'intent.body',
];

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g;

/**
 * A pino logger that redacts secrets, card numbers and email addresses; pretty-printed on a terminal unless `pretty`
 * says otherwise.
 */
export function createLogger(
  options: { level?: string; pretty?: boolean; name?: string; destination?: NodeJS.WritableStream } = {},
): PinoLogger {
  const pretty = !options.destination && (options.pretty ?? process.stdout.isTTY === true);
  const settings: pino.LoggerOptions = {
    name: options.name ?? 'retrysafe',
    level: options.level ?? process.env.LOG_LEVEL ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    // Email addresses also hide inside free-text messages; mask them there too.
    hooks: {
      logMethod(args, method) {
        const masked = args.map((a) => (typeof a === 'string' ? a.replace(EMAIL, '[email]') : a)) as typeof args;
        return method.apply(this, masked);
      },
    },
    ...(pretty
      ? { transport: { target: 'pino-pretty', options: { colorize: true, translateTime: 'SYS:HH:MM:ss.l' } } }
      : {}),
  };
  return options.destination ? pino(settings, options.destination as pino.DestinationStream) : pino(settings);
}

const LEVELS: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/** Routes the Temporal Runtime's logger (SDK, workflow and activity `log`) into pino. Call once per process. */
export function installRuntimeLogger(logger: PinoLogger, level: LogLevel = 'INFO'): void {
  Runtime.install({ logger: runtimeLogger(logger, level) });
}

/** A Temporal Runtime logger that writes into pino, for `Runtime.install({ logger })`. */
export function runtimeLogger(logger: PinoLogger, level: LogLevel = 'INFO'): DefaultLogger {
  return new DefaultLogger(level, (entry) => {
    const meta: LogMetadata = entry.meta ?? {};
    logger[LEVELS[entry.level]](meta, entry.message);
  });
}
