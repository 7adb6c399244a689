/**
 * What `npm run bench` prints of its runs: the table of every contestant's medians, the ratios
 * per round of throughput and of CPU time per request with their medians and geometric means,
 * and the targets.
 */
import type { DeepPages } from './deep';
import type { WebhookFigures } from './webhooks';
import { type Measurement, type Scenario, f2, geomean, median } from './measure';

export type Contestant =
  | 'node'
  | 'bare'
  | 'bareBorn'
  | 'openapiBackend'
  | 'openapiValidator'
  | 'fastify'
  | 'product'
  | 'keyed'
  | 'logged'
  | 'validated'
  | 'unlimited'
  | 'traced';
export const CONTESTANTS: Contestant[] = [
  'node',
  'bare',
  'bareBorn',
  'openapiBackend',
  'openapiValidator',
  'fastify',
  'product',
  'keyed',
  'logged',
  'validated',
  'unlimited',
  'traced',
];
export const LABEL: Record<Contestant, string> = {
  node: 'node:http limit',
  bare: 'bare express floor',
  bareBorn: "bare express floor on the product's server",
  openapiBackend: 'express + openapi-backend (as documented)',
  openapiValidator: 'express + express-openapi-validator',
  fastify: 'fastify 5 with route schemas',
  product: 'product',
  keyed: 'product, a managed key (npm run keys)',
  logged: 'product, VALIDATE_RESPONSES=log',
  validated: 'product, VALIDATE_RESPONSES=enforce',
  unlimited: 'product, RATE_LIMIT=off',
  traced: 'product, tracing on (always_on, OTLP)',
};

/** Each scenario's runs, per contestant, one per round. */
export type Results = { scenario: Scenario; runs: Record<Contestant, Measurement[]> }[];

/** Milliseconds from spawn to the first 200, per start. */
export interface Startups {
  product: number[];
  bare: number[];
}

/** The ratios printed: a over b, per round. */
const COLUMNS: { title: string; a: Contestant; b: Contestant }[] = [
  { title: 'product / bare express floor', a: 'product', b: 'bare' },
  { title: 'product / express + openapi-backend', a: 'product', b: 'openapiBackend' },
  { title: 'product / express + express-openapi-validator', a: 'product', b: 'openapiValidator' },
  { title: 'product / fastify with route schemas', a: 'product', b: 'fastify' },
  { title: 'product / node:http', a: 'product', b: 'node' },
  // Information: the floor on a server that makes express's objects as the product's does; over it, the product's
  // contract layer and production features alone.
  { title: "product / floor on the product's server", a: 'product', b: 'bareBorn' },
  // A managed key, checked against the registry's memory, over an API_KEYS key (the product's other runs).
  { title: 'managed key / API_KEYS key', a: 'keyed', b: 'product' },
  { title: 'VALIDATE_RESPONSES=log / off', a: 'logged', b: 'product' },
  { title: 'VALIDATE_RESPONSES=enforce / off', a: 'validated', b: 'product' },
  // The rate limiter's cost per request: the product with it (its limit unreachable) over the product without.
  { title: 'RATE_LIMIT on / off', a: 'product', b: 'unlimited' },
  // Tracing's cost per request: every request sampled, its spans exported to a local receiver that discards them.
  { title: 'tracing on / off', a: 'traced', b: 'product' },
];

/** Per column of COLUMNS, the median ratio of each scenario. */
type Medians = number[][];

/** A table of a/b per round → median for `figure`, with its geometric mean row; returns the medians. */
function ratioTable(results: Results, figure: 'rps' | 'cpuUs', out: (line: string) => void): Medians {
  const medians: Medians = COLUMNS.map(() => []);
  out(`| scenario | ${COLUMNS.map((c) => c.title).join(' | ')} |`);
  out(`|---|${COLUMNS.map(() => '---|').join('')}`);
  for (const { scenario, runs } of results) {
    const cells = COLUMNS.map(({ a, b }, i) => {
      const rs = runs[a].map((m, round) => m[figure] / (runs[b][round]?.[figure] ?? Number.NaN));
      medians[i]?.push(median(rs));
      return `${rs.map(f2).join(' ')} → **${f2(median(rs))}**`;
    });
    out(`| ${scenario.name} | ${cells.join(' | ')} |`);
  }
  out(`| geometric mean | ${medians.map((m) => `**${f2(geomean(m))}**`).join(' | ')} |`);
  return medians;
}

/** What the targets are judged on. */
export interface Figures {
  rps: Medians;
  cpu: Medians;
  /** Per scenario: the product's median p99 over the bare floor's. */
  p99s: number[];
}

/** Prints the start-up times, the table of medians and the two ratio tables. */
export function printTables(results: Results, started: Startups, out: (line: string) => void): Figures {
  const ms = (xs: number[]) => `${xs.map((x) => `${Math.round(x)} ms`).join(', ')} (median ${Math.round(median(xs))} ms)`;
  out(
    `Start-up, spawn to the first 200 on a real PostgreSQL: product ${ms(started.product)}; bare express floor ${ms(started.bare)}; product / floor ${f2(median(started.product) / median(started.bare))}`,
  );
  out('');
  out('| scenario | contestant | req/s (median) | CPU µs/request (median) | p50 ms | p99 ms | errors | unexpected | max RSS MB |');
  out('|---|---|---|---|---|---|---|---|---|');
  const p99s: number[] = [];
  for (const { scenario, runs } of results) {
    for (const c of CONTESTANTS) {
      const m = runs[c];
      const med = (f: (x: Measurement) => number) => median(m.map(f));
      const sum = (f: (x: Measurement) => number) => m.reduce((a, x) => a + f(x), 0);
      out(
        `| ${scenario.name} | ${LABEL[c]} | ${Math.round(med((x) => x.rps))} | ${Math.round(med((x) => x.cpuUs))} | ${med((x) => x.p50)} | ${med((x) => x.p99)} | ${sum((x) => x.errors)} | ${sum((x) => x.unexpected)} | ${Math.round(Math.max(...m.map((x) => x.rssMb)))} |`,
      );
    }
    p99s.push(median(runs.product.map((m) => m.p99)) / Math.max(1, median(runs.bare.map((m) => m.p99))));
  }
  out('');
  out('Throughput (req/s) ratios per round → median; above 1 the first is faster:\n');
  const rps = ratioTable(results, 'rps', out);
  out('');
  out(
    'Server CPU time per request (user + system, from /proc) ratios per round → median; below 1 the first spends less CPU per request:\n',
  );
  const cpu = ratioTable(results, 'cpuUs', out);
  out('');
  out(`p99 product / bare floor per scenario: ${p99s.map(f2).join(', ')}`);
  return { rps, cpu, p99s };
}

/** Where the product is held to fastify's pace: the reads and the create (the refusals are held to the express floors). */
const FASTIFY_SCENARIOS = [
  'GET /v1/pets?limit=20',
  'GET /v1/pets?status=available&limit=100',
  'GET /v1/pets/{random id}',
  'POST /v1/pets (valid)',
];

/** Prints the targets; returns the exit code: 0 when they hold (smoke: when every run got what it expected). */
export function verdict(
  results: Results,
  figures: Figures,
  started: Startups,
  deep: DeepPages,
  hooks: WebhookFigures,
  run: { smoke: boolean; deepPets: number },
  out: (line: string) => void,
): number {
  const column = (medians: Medians, a: Contestant, b: Contestant) => medians[COLUMNS.findIndex((c) => c.a === a && c.b === b)] ?? [];
  const lowest = (xs: number[]) => f2(Math.min(...xs));
  const highest = (xs: number[]) => f2(Math.max(...xs));
  const allRuns = results.flatMap(({ runs }) => CONTESTANTS.flatMap((c) => runs[c]));
  const clean = deep.clean && hooks.clean && allRuns.every((m) => m.errors === 0 && m.unexpected === 0);
  const productRss = Math.max(...results.flatMap(({ runs }) => runs.product.map((m) => m.rssMb)));
  const startup = median(started.product) / median(started.bare);
  const rps = (b: Contestant) => column(figures.rps, 'product', b);
  const cpu = (b: Contestant) => column(figures.cpu, 'product', b);
  const fastify = rps('fastify').filter((_, i) => FASTIFY_SCENARIOS.includes(results[i]?.scenario.name ?? ''));
  const targets: [string, boolean][] = [
    [
      `CPU per request ≤ 1.1× the bare express floor's on every scenario (highest ${highest(cpu('bare'))})`,
      cpu('bare').every((r) => r <= 1.1),
    ],
    ...(['openapiBackend', 'openapiValidator'] as const).flatMap((alt): [string, boolean][] => [
      [
        `CPU per request ≤ 1/1.3 (0.77) of ${LABEL[alt]}'s on every scenario (highest ${highest(cpu(alt))})`,
        cpu(alt).every((r) => r <= 1 / 1.3),
      ],
      [`req/s ≥ 1.3× ${LABEL[alt]} on every scenario (lowest ${lowest(rps(alt))})`, rps(alt).every((r) => r >= 1.3)],
    ]),
    [`req/s ≥ 1.3× the bare express floor on every scenario (lowest ${lowest(rps('bare'))})`, rps('bare').every((r) => r >= 1.3)],
    [
      `req/s ≥ 0.9× fastify with route schemas on ${FASTIFY_SCENARIOS.join(', ')} (lowest ${lowest(fastify)})`,
      fastify.every((r) => r >= 0.9),
    ],
    [`p99 ≤ 1.25× the bare express floor's on every scenario (highest ${highest(figures.p99s)})`, figures.p99s.every((r) => r <= 1.25)],
    ['zero errors and zero unexpected statuses', clean],
    [`a page 90% through ${run.deepPets.toLocaleString('en')} animals: p99 ≤ 1.25× the first page's`, deep.ok],
    [
      `VALIDATE_RESPONSES=log within 10% of off on every scenario (lowest ${lowest(column(figures.rps, 'logged', 'product'))})`,
      column(figures.rps, 'logged', 'product').every((r) => r >= 0.9),
    ],
    [
      `CPU per request with a managed key within 5% of an API_KEYS key's on every scenario (highest ${highest(column(figures.cpu, 'keyed', 'product'))})`,
      column(figures.cpu, 'keyed', 'product').every((r) => r <= 1.05),
    ],
    [`a create's CPU with one webhook endpoint subscribed ≤ 1.1× with none (${f2(hooks.cpuRatio)})`, hooks.cpuRatio <= 1.1],
    [
      `every webhook event delivered once (${hooks.lost} not delivered, ${hooks.duplicates} more than once)`,
      hooks.lost === 0 && hooks.duplicates === 0,
    ],
    [`resident memory under load < 200 MB per process (max ${Math.round(productRss)} MB)`, productRss < 200],
    [`start-up ≤ 1.5× the bare express floor's (${f2(startup)})`, startup <= 1.5],
    [`start-up < 1 s (median ${Math.round(median(started.product))} ms)`, median(started.product) < 1000],
  ];
  out('');
  out('Targets:');
  for (const [what, ok] of targets) out(`- ${ok ? 'met' : 'NOT met'}: ${what}`);
  // The smoke form asserts no targets, only that every run got what it expected.
  if (run.smoke) return clean && hooks.lost === 0 && hooks.duplicates === 0 ? 0 : 1;
  return targets.every(([, ok]) => ok) ? 0 : 1;
}
