/**
 * The soak's clients: a mix of what callers do, sent to the instances in turn, each answer judged
 * as it comes. What may come back during a fault is an answer from a server that ran the request,
 * or a 503 (and no answer at all while an instance is down); anything else is counted as a wrong
 * answer, with what was sent and what came back.
 */

/** A pet as the API answers it. */
interface Pet {
  id: number;
  name: string;
  categoryId: number;
  status: string;
}

/** One HTTP exchange: its status (0: no answer, and why), headers and parsed body. */
interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
  error?: string;
}

export interface Ledger {
  /** Every create answered 201 (or replayed): id → the pet as answered. */
  acknowledged: Map<number, Pet>;
  /** Names of creates answered 503 (with an Idempotency-Key: every attempt): none of them may be stored. */
  refusedNames: string[];
  /** How many answers of each kind: `<what> <status>`. */
  statuses: Map<string, number>;
  /** Each wrong answer, said, with its X-Request-Id when it had one: its log line says why (the report quotes it). */
  wrong: { text: string; requestId?: string }[];
  /** Requests that got no answer (an instance killed, its connections cut). */
  unanswered: number;
  requests: number;
}

export interface Traffic {
  ledger: Ledger;
  /** Bearer keys the clients may use besides the bootstrap key (managed keys, live). */
  managedKeys: string[];
  /** Managed keys taken out of use (rotated or revoked): a 401 to one is what it should get. */
  retired: Set<string>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function send(url: string, init: RequestInit = {}, timeoutMs = 30_000): Promise<Answer> {
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      // Not JSON: kept as text.
    }
    return { status: res.status, headers: res.headers, body };
  } catch (err) {
    return { status: 0, headers: new Headers(), body: undefined, error: (err as Error).message };
  }
}

const samePet = (a: unknown, b: Pet) => JSON.stringify(a) === JSON.stringify(b);
const pick = <T>(xs: readonly T[]): T | undefined => xs[Math.floor(Math.random() * xs.length)];

/** The clients' shared state, and what each kind of request sends and how its answer is judged. */
class Clients {
  readonly ledger: Ledger = {
    acknowledged: new Map(),
    refusedNames: [],
    statuses: new Map(),
    wrong: [],
    unanswered: 0,
    requests: 0,
  };
  readonly managedKeys: string[] = [];
  readonly retired = new Set<string>();
  private readonly etags = new Map<number, string>();
  private seq = 0;
  stopped = false;

  constructor(
    private readonly origins: () => string[],
    private readonly bootstrapKey: string,
    private readonly runId: string,
  ) {}

  /** Counts an answer; false when there is nothing more to judge (no answer, a 5xx other than 503 counted wrong, a retired key refused). */
  count(what: string, a: Answer, key: string): boolean {
    this.ledger.requests += 1;
    const excused = a.status === 401 && this.retired.has(key);
    const label = `${what} ${a.status}${excused ? ' (a retired key)' : ''}`;
    this.ledger.statuses.set(label, (this.ledger.statuses.get(label) ?? 0) + 1);
    if (a.status === 0) this.ledger.unanswered += 1;
    else if (a.status >= 500 && a.status !== 503) this.noteWrong(`${what}: ${a.status} ${JSON.stringify(a.body)}`, a);
    return a.status !== 0 && !excused && (a.status < 500 || a.status === 503);
  }
  wrong(what: string, a: Answer, why: string): void {
    this.noteWrong(`${what}: ${why} (answered ${a.status} ${JSON.stringify(a.body).slice(0, 300)})`, a);
  }
  private noteWrong(text: string, a: Answer): void {
    this.ledger.wrong.push({ text, requestId: a.headers.get('x-request-id') ?? undefined });
  }

  chooseKey(): string {
    return Math.random() < 0.3 ? (pick(this.managedKeys) ?? this.bootstrapKey) : this.bootstrapKey;
  }

  headers(key: string, extra: Record<string, string> = {}): Record<string, string> {
    return { Authorization: `Bearer ${key}`, ...extra };
  }

  origin(): string {
    return pick(this.origins()) as string;
  }

  async create(withKey: boolean) {
    const key = this.chooseKey();
    this.seq += 1;
    const name = `soak-${this.runId}-${this.seq}`;
    const body = JSON.stringify({ name, categoryId: this.seq % 1000, status: ['available', 'pending', 'sold'][this.seq % 3] });
    const idem: Record<string, string> = withKey ? { 'Idempotency-Key': `soak-${this.runId}-${this.seq}` } : {};
    // With a key, a 503 is retried with it, as a client would: one 201 in the end, or still refused.
    for (let attempt = 0; attempt < (withKey ? 4 : 1); attempt++) {
      const a = await send(`${this.origin()}/v1/pets`, {
        method: 'POST',
        headers: this.headers(key, { 'Content-Type': 'application/json', ...idem }),
        body,
      });
      if (!this.count(withKey ? 'create (Idempotency-Key)' : 'create', a, key)) return; // Its outcome unknown: neither acknowledged nor refused.
      if (a.status === 201) {
        const pet = a.body as Pet;
        if (pet.name !== name) return this.wrong('create', a, `another animal than the one sent (${name})`);
        const earlier = this.ledger.acknowledged.get(pet.id);
        if (earlier && earlier.name !== name) return this.wrong('create', a, `id ${pet.id} acknowledged before for ${earlier.name}`);
        this.ledger.acknowledged.set(pet.id, pet);
        return;
      }
      if (a.status !== 503) return this.wrong('create', a, 'neither 201 nor 503');
      if (!withKey) return void this.ledger.refusedNames.push(name);
      await sleep(500);
    }
    this.ledger.refusedNames.push(name);
  }

  async getPet(conditional: boolean) {
    const key = this.chooseKey();
    const pet = pick([...this.ledger.acknowledged.values()]);
    if (!pet) return;
    const etag = this.etags.get(pet.id);
    const a = await send(`${this.origin()}/v1/pets/${pet.id}`, {
      headers: this.headers(key, conditional && etag ? { 'If-None-Match': etag } : {}),
    });
    if (!this.count(conditional ? 'getPet (If-None-Match)' : 'getPet', a, key)) return;
    if (a.status === 200) {
      if (!samePet(a.body, pet)) this.wrong('getPet', a, `not the animal acknowledged as ${JSON.stringify(pet)}`);
      const tag = a.headers.get('etag');
      if (tag) this.etags.set(pet.id, tag);
    } else if (a.status === 304) {
      if (!conditional || !etag) this.wrong('getPet', a, '304 to a request without If-None-Match');
    } else if (a.status !== 503) this.wrong('getPet', a, `animal ${pet.id} exists`);
  }

  /** The first page: never empty once an animal was acknowledged before it was asked, and holding each such animal below its last id. */
  async firstPage() {
    const key = this.chooseKey();
    const before = [...this.ledger.acknowledged.keys()];
    const a = await send(`${this.origin()}/v1/pets?limit=20`, { headers: this.headers(key) });
    if (!this.count('listPets', a, key) || a.status === 503) return;
    if (a.status !== 200) return this.wrong('listPets', a, 'neither 200 nor 503');
    const ids = (a.body as Pet[]).map((p) => p.id);
    if (before.length > 0 && ids.length === 0) return this.wrong('listPets', a, `empty, with ${before.length} animals acknowledged`);
    const last = ids.at(-1) ?? 0;
    const missing = before.filter((id) => id <= last && !ids.includes(id));
    if (missing.length > 0) this.wrong('listPets', a, `acknowledged animals ${missing.slice(0, 5).join(', ')} missing from the page`);
  }

  /** A walk to the end along `next`, 100 at a time: every animal acknowledged before it started is met. */
  async walk() {
    const key = this.chooseKey();
    const before = new Set(this.ledger.acknowledged.keys());
    const seen = new Set<number>();
    let url: string | undefined = `${this.origin()}/v1/pets?limit=100`;
    while (url && !this.stopped) {
      const a = await send(url, { headers: this.headers(key) });
      // No answer or a 503: given up, as a client would; not a wrong answer.
      if (!this.count('listPets (walk)', a, key) || a.status === 503) return;
      if (a.status !== 200) return this.wrong('walk', a, 'neither 200 nor 503');
      for (const p of a.body as Pet[]) seen.add(p.id);
      const next = /^<([^>]+)>; rel="next"$/.exec(a.headers.get('link') ?? '')?.[1];
      url = next ? new URL(next, url).toString() : undefined;
    }
    if (this.stopped) return;
    const missing = [...before].filter((id) => !seen.has(id));
    if (missing.length > 0)
      this.ledger.wrong.push({ text: `walk: ${missing.length} acknowledged animals never met (${missing.slice(0, 5).join(', ')})` });
  }

  async mcpCall() {
    const key = this.chooseKey();
    const a = await send(`${this.origin()}/mcp`, {
      method: 'POST',
      headers: this.headers(key, { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'listPets', arguments: { limit: 5 } } }),
    });
    if (!this.count('mcp tools/call', a, key) || a.status === 503) return;
    if (a.status !== 200) return this.wrong('mcp tools/call', a, 'neither 200 nor 503');
    // The operation's own answer: a page (status 200), or a tool error that says 503.
    const result = (a.body as { result?: { isError?: boolean; structuredContent?: { status?: number }; content?: { text: string }[] } })
      .result;
    const ok = result?.isError ? /^listPets failed: 503 /.test(result.content?.[0]?.text ?? '') : result?.structuredContent?.status === 200;
    if (!ok) this.wrong('mcp tools/call', a, 'the tool answered neither a page nor 503');
  }

  async readiness() {
    const a = await send(`${this.origin()}/readyz`);
    if (this.count('readyz', a, '') && a.status !== 200 && a.status !== 503) this.wrong('readyz', a, 'neither 200 nor 503');
  }
}

/**
 * `clients` loops sending the mix to `origins()` (the instances' origins, read on each request),
 * with `bootstrapKey` or one of `managedKeys`, until stopped. `runId` makes every name unique to the run.
 */
export function startTraffic(origins: () => string[], bootstrapKey: string, clients: number, runId: string): Traffic {
  const c = new Clients(origins, bootstrapKey, runId);
  const { ledger } = c;
  const mix: [number, () => Promise<void>][] = [
    [20, () => c.create(false)],
    [10, () => c.create(true)],
    [20, () => c.getPet(false)],
    [10, () => c.getPet(true)],
    [15, () => c.firstPage()],
    [2, () => c.walk()],
    [8, () => c.mcpCall()],
    [5, () => c.readiness()],
  ];
  const total = mix.reduce((n, [w]) => n + w, 0);
  const next = () => {
    let r = Math.random() * total;
    for (const [w, op] of mix) if ((r -= w) < 0) return op;
    return () => c.firstPage();
  };
  const loops = Array.from({ length: clients }, async () => {
    while (!c.stopped) {
      const unanswered = ledger.unanswered;
      // A throw here is the soak's own bug: counted as a wrong answer, so that the run fails and still cleans up.
      await next()().catch(
        (err: unknown) => void ledger.wrong.push({ text: `the soak itself threw: ${(err as Error).stack ?? String(err)}` }),
      );
      // No answer (an instance down, refusing connections): a client backs off rather than spin.
      if (ledger.unanswered > unanswered) await sleep(200);
    }
  });
  return {
    ledger,
    managedKeys: c.managedKeys,
    retired: c.retired,
    async stop() {
      c.stopped = true;
      await Promise.all(loops);
    },
  };
}
