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

/** What the line of one request says (src/middleware.ts). Undefined fields are left out, as pino leaves them out. */
export interface RequestLogFields {
  req: { id: string; method: string; path: string };
  res: { statusCode: number };
  responseTime: number;
  operationId?: string;
  route?: string;
  apiKey?: string;
}

const str = JSON.stringify;

/**
 * `logger.info(fields, msg)` for the line written for every request, with the JSON built by
 * a template for these fields instead of pino's generic serializer, which costs several
 * percent of a request. The line is pino's, byte for byte (test/logs.test.ts compares them):
 * its level, time function and bindings are the logger's, read through pino.symbols, and it
 * goes to the logger's own destination, in order with every other line.
 */
export function requestLineWriter(logger: Logger): (fields: RequestLogFields, msg: string) => void {
  const internals = logger as unknown as Record<symbol, unknown>;
  const stream = internals[pino.symbols.streamSym] as pino.DestinationStream;
  const time = internals[pino.symbols.timeSym] as () => string;
  const level = logger.levels.values.info;
  return (f, msg) => {
    if (!logger.isLevelEnabled('info')) return;
    const chindings = internals[pino.symbols.chindingsSym] as string;
    let line = `{"level":${level}${time()}${chindings},"req":{"id":${str(f.req.id)},"method":${str(f.req.method)},"path":${str(f.req.path)}},"res":{"statusCode":${f.res.statusCode}},"responseTime":${f.responseTime}`;
    if (f.operationId !== undefined) line += `,"operationId":${str(f.operationId)}`;
    if (f.route !== undefined) line += `,"route":${str(f.route)}`;
    if (f.apiKey !== undefined) line += `,"apiKey":${str(f.apiKey)}`;
    stream.write(`${line},"msg":${str(msg)}}\n`);
  };
}
