import pino from 'pino';

export type Logger = pino.Logger;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** What the line of one request says (`requestLog`). Undefined fields are left out, as pino leaves them out. */
export interface RequestLogFields {
  req: { id: string; method: string; path: string };
  res: { statusCode: number };
  responseTime: number;
  operationId?: string;
  route?: string;
  /** The key the request was made with (`asa_<id>`, or `env:<digest>` for a bootstrap key, API_KEYS): never its secret. */
  apiKey?: string;
  /** The client the key belongs to (its name). */
  client?: string;
  /** POST /mcp: the tools the request called. */
  mcpTool?: string;
  /** Tracing on: the request's trace and server span (W3C hex ids), as OpenTelemetry's log correlation names them. */
  trace_id?: string;
  span_id?: string;
}

/** Writes the line of one request at level info (nothing below that level). */
export type RequestLineWriter = (fields: RequestLogFields, msg: string) => void;

export interface Logging {
  /** pino, for every line but the per-request one. */
  logger: Logger;
  /** The per-request line, to the same destination, as pino would write it. */
  requestLine: RequestLineWriter;
  /** Lines the destination dropped since start-up, its queue full because stdout did not keep up (LOG_BUFFER.maxLength). */
  droppedLines(): number;
}

export interface LoggingOptions {
  level: LogLevel;
  /** Default: readable lines on a terminal, JSON lines otherwise (gathered and written asynchronously: gatheredDestination; flushed at exit). Tests pass their own. */
  destination?: pino.DestinationStream;
  /** Fields on every line (strings and numbers). */
  base?: Record<string, string | number>;
  /** pino's time function (default: ISO time). */
  time?: () => string;
}

/**
 * Lines are gathered and written 4 KiB at a time (or every 250 ms, whichever comes first)
 * rather than one write per line: under load a write per request line cost more than the rest
 * of the log line together (docs/performance.md). What is gathered is flushed when the process
 * exits, a crash's fatal line included; only a SIGKILL can lose up to 250 ms of lines.
 * What waits to be written is bounded: past `maxLength` bytes queued (stdout read more slowly
 * than lines come, or not at all), a batch is dropped whole and counted, rather than the
 * process's memory growing until it is killed.
 */
export const LOG_BUFFER = { minLength: 4096, periodicFlush: 250, maxLength: 16 * 1024 * 1024 };

/** The most often a warning says lines were dropped. */
const DROP_WARNING_INTERVAL_MS = 10_000;

type Target = ReturnType<typeof pino.destination>;

/**
 * A destination that gathers lines in one string and hands `target` (sonic-boom, writing
 * asynchronously) a batch of LOG_BUFFER.minLength characters at a time. sonic-boom measures the
 * UTF-8 length of the batch it appends to on every write it is given: given every line, that
 * was a scan of up to 16 KiB per request; given a batch, it is one per 4 KiB.
 */
export function gatheredDestination(
  target: Target,
  { minLength, periodicFlush }: { minLength: number; periodicFlush: number } = LOG_BUFFER,
  onDrop?: (lines: number) => void,
): pino.DestinationStream {
  // A batch is whole lines, so a dropped one is too (sonic-boom's maxLength: it emits what it did not queue).
  if (onDrop) target.on('drop', (batch: string) => onDrop(linesIn(batch)));
  let pending = '';
  const handOver = () => {
    if (pending === '') return;
    target.write(pending);
    pending = '';
  };
  setInterval(handOver, periodicFlush).unref();
  // Everything gathered, written before the process ends (an exit, a crash's fatal line).
  process.on('exit', () => {
    handOver();
    target.flushSync();
  });
  return {
    write(line: string) {
      pending += line;
      if (pending.length >= minLength) handOver();
    },
    flush(cb?: (err?: Error) => void) {
      handOver();
      target.flush(cb);
    },
    flushSync() {
      handOver();
      target.flushSync();
    },
  } as pino.DestinationStream;
}

function linesIn(batch: string): number {
  let lines = 0;
  for (let at = batch.indexOf('\n'); at !== -1; at = batch.indexOf('\n', at + 1)) lines += 1;
  return lines;
}

/** The fields on every line, unless the caller gives its own. */
export const LOG_BASE = { service: 'animal-store-api' };

/** Readable lines on a terminal (pino-pretty, loaded only then), JSON lines elsewhere, with at most LOG_BUFFER.maxLength bytes queued. */
function defaultDestination(onDrop: (lines: number) => void): pino.DestinationStream {
  if (!process.stdout.isTTY)
    return gatheredDestination(
      pino.destination({ dest: 1, sync: false, minLength: 0, maxLength: LOG_BUFFER.maxLength }),
      LOG_BUFFER,
      onDrop,
    );
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const pretty = require('pino-pretty') as typeof import('pino-pretty');
  return pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service' });
}

/**
 * JSON lines on stdout, one per request and one per fault; readable lines instead when
 * stdout is a terminal. The logger and the request-line writer are made from the same
 * options and share one destination, so their lines come out in order and alike.
 */
export function createLogging({ level, destination, base = LOG_BASE, time = isoTimeByMillisecond() }: LoggingOptions): Logging {
  let dropped = 0;
  let warnedAt = -Infinity;
  let warning: NodeJS.Immediate | undefined;
  const to = destination ?? defaultDestination(onDrop);
  const logger = pino({ level, base, timestamp: time }, to);
  // Said after the write that dropped them (not from inside it), at most every 10 s; dropped too while stdout is still full,
  // and counted then (animal_store_log_lines_dropped_total says it either way).
  function onDrop(lines: number) {
    dropped += lines;
    if (warning || performance.now() - warnedAt < DROP_WARNING_INTERVAL_MS) return;
    warning = setImmediate(() => {
      warning = undefined;
      warnedAt = performance.now();
      logger.warn({ droppedLines: dropped }, 'log lines dropped: stdout did not keep up, and 16 MiB of lines were waiting for it');
    });
  }
  return { logger, requestLine: requestLineWriter(logger, { destination: to, base, time }), droppedLines: () => dropped };
}

/**
 * pino's isoTime, the same text, made once per millisecond rather than once per line: under
 * load a server writes several lines a millisecond, and formatting the date was a percent of a
 * request (docs/performance.md).
 */
export function isoTimeByMillisecond(): () => string {
  let at = Number.NaN;
  let text = '';
  return () => {
    const now = Date.now();
    if (now !== at) {
      at = now;
      text = `,"time":"${new Date(now).toISOString()}"`;
    }
    return text;
  };
}

const str = JSON.stringify;

/**
 * `logger.info(fields, msg)` for the line written for every request, with the JSON built by a
 * template for these fields instead of pino's generic serializer, which costs several percent
 * of a request. The line is pino's, byte for byte (a test compares them): its
 * destination, fields and time function are the ones the logger was made with, and its level
 * is read through the logger's public methods.
 */
function requestLineWriter(
  logger: Logger,
  { destination, base, time }: { destination: pino.DestinationStream; base: Record<string, string | number>; time: () => string },
): RequestLineWriter {
  const level = logger.levels.values.info;
  const bound = Object.keys(base).length ? `,${str(base).slice(1, -1)}` : '';
  return (f, msg) => {
    if (!logger.isLevelEnabled('info')) return;
    let line = `{"level":${level}${time()}${bound},"req":{"id":${str(f.req.id)},"method":${str(f.req.method)},"path":${str(f.req.path)}},"res":{"statusCode":${f.res.statusCode}},"responseTime":${f.responseTime}`;
    if (f.operationId !== undefined) line += `,"operationId":${str(f.operationId)}`;
    if (f.route !== undefined) line += `,"route":${str(f.route)}`;
    if (f.apiKey !== undefined) line += `,"apiKey":${str(f.apiKey)}`;
    if (f.client !== undefined) line += `,"client":${str(f.client)}`;
    if (f.mcpTool !== undefined) line += `,"mcpTool":${str(f.mcpTool)}`;
    if (f.trace_id !== undefined) line += `,"trace_id":${str(f.trace_id)},"span_id":${str(f.span_id)}`;
    destination.write(`${line},"msg":${str(msg)}}\n`);
  };
}
