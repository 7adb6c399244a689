import pino from 'pino';
import pretty from 'pino-pretty';

export type Logger = pino.Logger;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * JSON lines on stdout, one per request and one per fault; readable lines instead when
 * stdout is a terminal. `destination` lets tests read the lines back. Lines are written
 * asynchronously (under load several go out in one write) and flushed when the process exits.
 */
export function createLogger(level: LogLevel, destination: pino.DestinationStream = process.stdout.isTTY ? pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' }) : pino.destination({ dest: 1, sync: false })): Logger {
  return pino({ level, base: { service: 'animal-store-api' }, timestamp: pino.stdTimeFunctions.isoTime }, destination);
}
