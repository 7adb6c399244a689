/**
 * The bench's conditional re-read: a client polling a page it holds, with `If-None-Match`,
 * answered 304 (no body, not counted by the rate limit), beside the same page read in full (200),
 * on the product as production runs it. The 304 is decided after the key, the scope, the rate
 * limit and the page's read, as a 200 is (docs/performance.md says why): what it saves is the
 * body on the wire, its transfer and the client's parse, not the database read.
 */
import { type PairSection, type Scenario, auth, f2, sideBySide } from './measure';

export const conditionalReads: PairSection = async (server, key, o, out) => {
  const path = '/v1/pets?limit=20';
  const origin = new URL(server.baseUrl).origin;
  const etag = (await fetch(`${origin}${path}`, { headers: auth(key) })).headers.get('etag');
  if (etag === null) throw new Error(`${path} answered without an ETag`);
  const full: Scenario = {
    name: `${path} (200, the page)`,
    database: true,
    expected: 200,
    request: (k) => ({ method: 'GET', path, headers: auth(k) }),
  };
  const notModified: Scenario = {
    name: `${path} with If-None-Match: its ETag (304)`,
    database: true,
    expected: 304,
    request: (k) => ({ method: 'GET', path, headers: { ...auth(k), 'if-none-match': etag } }),
  };
  out('');
  out('## Conditional re-reads: a page polled with its ETag\n');
  out(
    `The first page (limit=20) read in full, beside the same request with \`If-None-Match\` naming its ETag; ${o.rounds} interleaved round(s) after a warm-up.\n`,
  );
  const { cpuRatio, clean } = await sideBySide(server, [full, notModified], key, o, out, 'answer');
  out(`\nserver CPU per request, 304 / 200: ${f2(cpuRatio)}`);
  return { clean };
};
