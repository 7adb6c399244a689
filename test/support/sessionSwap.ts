import { type Socket, createServer, connect as tcpConnect } from 'node:net';
import { listenInFrontOf } from './proxy';

/**
 * A TCP proxy to PostgreSQL that moves its idle client connections to new server sessions, as a
 * proxy that reconnects behind its clients' backs does: the client keeps its socket, and the
 * session it prepared its statements in is gone (the next Bind of one is refused with 26000,
 * "prepared statement … does not exist"). Trust authentication only: the client's startup message
 * is replayed to open the new session, whose answers up to its ReadyForQuery are dropped.
 */
export interface SessionSwapProxy {
  /** The database URL, through the proxy. */
  url: string;
  /** Moves every connection that is idle (no statement in flight, no transaction open) to a new session; resolves with how many moved. */
  swapIdle(): Promise<number>;
  /** ErrorResponses with SQLSTATE 26000 the server sent through the proxy so far. */
  refusedStatements(): number;
  close(): void;
}

/**
 * Calls `onMessage` with each whole message of a stream (type byte and body); `first` says the stream
 * opens with a startup message (no type byte). `partial()` says a message has begun and not ended.
 */
function messages(onMessage: (type: number, body: Buffer) => void, first: boolean) {
  let pending: Buffer = Buffer.alloc(0);
  let startup = first;
  const read = (chunk: Buffer) => {
    pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
    for (;;) {
      const head = startup ? 0 : 1;
      if (pending.length < head + 4) return;
      const length = pending.readInt32BE(head);
      if (pending.length < head + length) return;
      onMessage(startup ? 0 : pending[0]!, pending.subarray(head + 4, head + length));
      pending = pending.subarray(head + length);
      startup = false;
    }
  };
  return Object.assign(read, { partial: () => pending.length > 0 });
}

const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'
const READY = 0x5a; // 'Z'
const ERROR = 0x45; // 'E'

export async function sessionSwapProxy(url: string): Promise<SessionSwapProxy> {
  const target = new URL(url);
  const open = () => tcpConnect(Number(target.port || 5432), target.hostname);
  const swaps = new Set<() => Promise<boolean>>();
  const sockets = new Set<Socket>();
  let refused = 0;

  const server = createServer((client) => {
    let upstream = open();
    let startupMessage: Buffer | undefined;
    // Answers the server owes (a ReadyForQuery per Sync or simple query), messages since the last
    // Sync (a statement described before it is bound), and the transaction status of the last answer.
    let owed = 0;
    let unsynced = false;
    let status = 'I';
    // A session that has started (its first ReadyForQuery came): a cancel request's connection never does.
    let started = false;
    let held: Buffer[] | undefined;
    const fromClient = messages((type, body) => {
      if (type === 0) startupMessage = Buffer.concat([Buffer.alloc(4), body]);
      else if (type === SYNC || type === QUERY) {
        owed += 1;
        unsynced = false;
      } else unsynced = true;
    }, true);
    const fromServer = messages((type, body) => {
      if (type === READY) {
        // The startup's ReadyForQuery answers no Sync.
        if (started) owed -= 1;
        started = true;
        status = String.fromCharCode(body[0]!);
      }
      if (type === ERROR && /C26000\0/.test(body.toString('latin1'))) refused += 1;
    }, false);
    const attach = (socket: Socket) => {
      sockets.add(socket);
      socket.on('data', (chunk: Buffer) => {
        if (socket !== upstream) return;
        fromServer(chunk);
        client.write(chunk);
      });
      socket.on('error', () => client.destroy());
      socket.on('close', () => socket === upstream && client.destroy());
    };
    attach(upstream);
    sockets.add(client);
    client.on('data', (chunk: Buffer) => {
      fromClient(chunk);
      if (held) held.push(chunk);
      else upstream.write(chunk);
    });
    client.on('error', () => upstream.destroy());
    client.on('close', () => {
      swaps.delete(swap);
      upstream.end();
    });

    const swap = async (): Promise<boolean> => {
      if (held || !started || !startupMessage || owed !== 0 || unsynced || status !== 'I' || fromClient.partial() || fromServer.partial())
        return false;
      held = [];
      const fresh = open();
      const message = Buffer.from(startupMessage);
      message.writeInt32BE(message.length, 0);
      let timer: NodeJS.Timeout | undefined;
      const ready = await new Promise<boolean>((resolve) => {
        const read = messages((type) => type === READY && resolve(true), false);
        fresh.on('data', read);
        fresh.on('error', () => resolve(false));
        fresh.on('close', () => resolve(false));
        fresh.on('connect', () => fresh.write(message));
        timer = setTimeout(() => resolve(false), 5_000);
      });
      clearTimeout(timer);
      fresh.removeAllListeners('data');
      const old = upstream;
      if (ready) {
        upstream = fresh;
        attach(fresh);
        old.end(Buffer.from([0x58, 0, 0, 0, 4])); // Terminate
      } else fresh.destroy();
      for (const chunk of held) upstream.write(chunk);
      held = undefined;
      return ready;
    };
    swaps.add(swap);
  });
  return {
    url: await listenInFrontOf(server, url),
    swapIdle: async () => (await Promise.all([...swaps].map((swap) => swap()))).filter(Boolean).length,
    refusedStatements: () => refused,
    close() {
      server.close();
      for (const socket of sockets) socket.destroy();
    },
  };
}
