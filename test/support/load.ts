import { waitFor } from '../../scripts/lib/processes';

export { waitFor };
/** What one HTTP call gave: its status (0 when no response came, and then why), time taken, and body. */
export interface Outcome {
  status: number;
  ms: number;
  body: any;
  headers: Headers | undefined;
  /** Why no response came (status 0): the error, and the socket's error under it (`fetch failed (ECONNRESET)`). */
  error?: string;
}

const reason = (err: unknown): string => {
  const { name, message, cause } = err instanceof Error ? err : new Error(String(err));
  const under = cause instanceof Error ? ` (${(cause as NodeJS.ErrnoException).code ?? cause.message})` : '';
  return `${name}: ${message}${under}`;
};

export async function call(url: string, init: RequestInit = {}, timeoutMs = 15_000): Promise<Outcome> {
  const started = Date.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const text = await res.text();
    return { status: res.status, ms: Date.now() - started, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  } catch (err) {
    return { status: 0, ms: Date.now() - started, body: undefined, headers: undefined, error: reason(err) };
  }
}

export interface CreateLoad {
  /** Every pet the service acknowledged with 201: id → name. */
  acknowledged: Map<number, string>;
  /** Count of responses by status (0: no response). */
  statuses: Map<number, number>;
  /** Each create's answer, by the name it sent: its status (0: no response, and why). */
  answers: Map<string, { status: number; error?: string }>;
  stop: () => Promise<void>;
}

/**
 * `connections` clients each creating pets one after another, with unique names, until
 * stopped; a client whose server is gone keeps trying (so a restarted server gets load again).
 */
export function createLoad(baseUrl: () => string, apiKey: string, connections: number, tag: string): CreateLoad {
  const acknowledged = new Map<number, string>();
  const statuses = new Map<number, number>();
  const answers = new Map<string, { status: number; error?: string }>();
  let running = true;
  let seq = 0;
  const worker = async () => {
    while (running) {
      const name = `${tag} ${++seq}`;
      const r = await call(
        `${baseUrl()}/pets`,
        {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiKey}`, 'Content-Type': 'application/json' },
          body: JSON.stringify({ name, categoryId: seq }),
        },
        10_000,
      );
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      answers.set(name, { status: r.status, error: r.error });
      if (r.status === 201) acknowledged.set(r.body.id, name);
      if (r.status === 0 || r.status === 503) await new Promise((res) => setTimeout(res, 20));
    }
  };
  const workers = Array.from({ length: connections }, worker);
  return {
    acknowledged,
    statuses,
    answers,
    stop: async () => {
      running = false;
      await Promise.all(workers);
    },
  };
}
