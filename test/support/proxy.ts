import { type AddressInfo, type Server, type Socket, createServer, connect as tcpConnect } from 'node:net';

/** What the proxy does to a client's COMMIT (seen in its bytes: the connection must send statement text, as an unprepared one does). */
export type CommitFault = 'none' | 'hold' | 'lose-answer';

export interface Proxy {
  /** The database URL, through the proxy. */
  url: string;
  /** Stops forwarding in both directions, keeping every connection open (what arrives is held). */
  freeze(): void;
  /** Forwards what was held, and goes on forwarding. */
  thaw(): void;
  /**
   * `hold`: a client's COMMIT is kept from the server (its connection stays open). `lose-answer`:
   * the COMMIT reaches the server, and the server's answer is thrown away. `none`: forwarded.
   */
  commitFault(fault: CommitFault): void;
  /** Connections whose COMMIT the fault caught. */
  caught(): number;
  /** Closes the client side of those connections, as a network failure would; the server side stays open. */
  cutCaught(): void;
  /** Resets every client connection it has (TCP RST), as a server host that vanished does: the client reads ECONNRESET. */
  resetAll(): void;
  /** Stops forwarding on the connections it has, keeping them open; new connections are forwarded. */
  freezeExisting(): void;
  /** Stops taking new connections, keeping the ones it has. */
  refuseNew(): void;
  /**
   * The next connection is cut when its client sends its first statement after the startup
   * message (with trust authentication, its second write), and from then on no new connection is taken.
   */
  cutAtFirstStatement(): void;
  close(): void;
}

/** Starts `server` listening on a loopback port; returns the database URL `url` as reached through it. */
export async function listenInFrontOf(server: Server, url: string): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const proxied = new URL(url);
  proxied.hostname = '127.0.0.1';
  proxied.port = String((server.address() as AddressInfo).port);
  return proxied.toString();
}

/**
 * Whether `chunk` (whole frontend messages, as postgres.js writes them) holds a COMMIT statement: a
 * simple Query or a Parse whose SQL ends with COMMIT. Only the statements are read: a value bound to a
 * parameter (an Idempotency-Key named "held-commit-key") is not a COMMIT.
 */
function sendsCommit(chunk: Buffer): boolean {
  for (let at = 0; at + 5 <= chunk.length; at += 1 + chunk.readInt32BE(at + 1)) {
    if (chunk.readInt32BE(at + 1) < 4) return false; // not a typed message (a startup packet's bytes)
    const type = String.fromCharCode(chunk[at] ?? 0);
    const body = chunk.subarray(at + 5, at + 1 + chunk.readInt32BE(at + 1)).toString('latin1');
    // Query: the SQL, NUL-ended; Parse: the statement's name, NUL, then the SQL, NUL-ended.
    const text = type === 'Q' ? body.split('\0')[0] : type === 'P' ? body.split('\0')[1] : undefined;
    if (text !== undefined && /(^|;)\s*commit\s*;?\s*$/i.test(text)) return true;
  }
  return false;
}

/** A TCP proxy to PostgreSQL that can freeze, stop taking connections, and hold or lose a COMMIT. */
export async function proxyTo(url: string): Promise<Proxy> {
  const target = new URL(url);
  const sockets: Socket[] = [];
  const clients: Socket[] = [];
  const stuck = new Set<Socket>();
  const caught: { client: Socket; upstream: Socket }[] = [];
  let frozen = false;
  let fault: CommitFault = 'none';
  let cutAtFirst = false;
  const waiting: (() => void)[] = [];
  const whenThawed = (forward: () => void) => (frozen ? waiting.push(forward) : forward());

  const server: Server = createServer((client) => {
    const upstream = tcpConnect(Number(target.port || 5432), target.hostname);
    sockets.push(client, upstream);
    clients.push(client);
    let answerLost = false;
    let holding = false;
    let writes = 0;
    client.on('data', (chunk: Buffer) => {
      if (holding) return;
      if (cutAtFirst && ++writes === 2) {
        server.close();
        client.destroy();
        upstream.destroy();
        return;
      }
      if (fault !== 'none' && sendsCommit(chunk)) {
        caught.push({ client, upstream });
        if (fault === 'hold') {
          holding = true;
          return;
        }
        answerLost = true;
      }
      if (!stuck.has(client)) whenThawed(() => upstream.write(chunk));
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!answerLost && !stuck.has(client)) whenThawed(() => client.write(chunk));
    });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => !holding && !answerLost && upstream.end());
    upstream.on('close', () => client.destroy());
  });
  return {
    url: await listenInFrontOf(server, url),
    freeze: () => void (frozen = true),
    thaw: () => {
      frozen = false;
      waiting.splice(0).forEach((forward) => forward());
    },
    commitFault: (f) => void (fault = f),
    caught: () => caught.length,
    cutCaught: () => caught.forEach(({ client }) => client.destroy()),
    resetAll: () => clients.forEach((client) => !client.destroyed && client.resetAndDestroy()),
    freezeExisting: () => clients.forEach((client) => stuck.add(client)),
    // close() stops listening at once; its callback would wait for the open connections to end.
    refuseNew: () => void server.close(),
    cutAtFirstStatement: () => void (cutAtFirst = true),
    close: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}
