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

/** A median for the tables: thousands grouped, no decimals. */
const whole = (x: number) => Math.round(x).toLocaleString('en');

/** Prints the start-up times, the table of medians and the two ratio tables (CPU, which decides, first). */
export function printTables(results: Results, started: Startups, out: (line: string) => void): Figures {
  const ms = (xs: number[]) => `${xs.map((x) => `${Math.round(x)} ms`).join(', ')} (median ${Math.round(median(xs))} ms)`;
  out(
    `Start-up, spawn to the first 200 on a real PostgreSQL: product ${ms(started.product)}; bare express floor ${ms(started.bare)}; product / floor ${f2(median(started.product) / median(started.bare))}`,
  );
  out('');
  out('Medians of the rounds, per contestant and scenario: server CPU µs per request · req/s · p99 ms; and the largest resident memory:');
  out('');
  out(`| contestant | ${results.map(({ scenario }) => scenario.name).join(' | ')} | max RSS MB |`);
  out(`|---|${results.map(() => '---|').join('')}---|`);
  for (const c of CONTESTANTS) {
    const cells = results.map(({ runs }) => {
      const med = (f: (x: Measurement) => number) => median(runs[c].map(f));
      return `${whole(med((x) => x.cpuUs))} · ${whole(med((x) => x.rps))} · ${med((x) => x.p99)}`;
    });
    const rss = Math.max(...results.flatMap(({ runs }) => runs[c].map((x) => x.rssMb)));
    out(`| ${LABEL[c]} | ${cells.join(' | ')} | ${Math.round(rss)} |`);
  }
  const faults = results.flatMap(({ scenario, runs }) =>
    CONTESTANTS.flatMap((c) => {
      const errors = runs[c].reduce((a, x) => a + x.errors, 0);
      const unexpected = runs[c].reduce((a, x) => a + x.unexpected, 0);
      return errors + unexpected > 0 ? [`${LABEL[c]} on ${scenario.name}: ${errors} errors, ${unexpected} unexpected statuses`] : [];
    }),
  );
  out('');
  out(`Errors and unexpected statuses: ${faults.length === 0 ? 'none in any run' : faults.join('; ')}.`);
  const p99s = results.map(({ runs }) => median(runs.product.map((m) => m.p99)) / Math.max(1, median(runs.bare.map((m) => m.p99))));
  out('');
  out(
    'Server CPU time per request (user + system, from /proc) ratios per round → median; below 1 the first spends less CPU per request (the verdicts are on these):\n',
  );
  const cpu = ratioTable(results, 'cpuUs', out);
  out('');
  out('Throughput (req/s) ratios per round → median, beside; above 1 the first served more:\n');
  const rps = ratioTable(results, 'rps', out);
  out('');
  out(`p99 product / bare floor per scenario, beside: ${p99s.map(f2).join(', ')}`);
  return { rps, cpu, p99s };
}

/** What a full run keeps for the next one to compare with (docs/bench-results.json): each CPU ratio's median, by column and scenario. */
export interface RunFigures {
  at: string;
  commit: string;
  cpu: Record<string, Record<string, number>>;
}

/** This run's figures, as the next full run reads them. */
export function runFigures(results: Results, figures: Figures, at: string, commit: string): RunFigures {
  const cpu: RunFigures['cpu'] = {};
  COLUMNS.forEach(({ title }, i) => {
    cpu[title] = Object.fromEntries(results.map(({ scenario }, s) => [scenario.name, figures.cpu[i]?.[s] ?? Number.NaN]));
  });
  return { at, commit, cpu };
}

/**
 * Each CPU ratio of this run over the same ratio of the previous full run: how far two runs on
 * this machine agree. Prints the table (bold where they differ by more than 10%) and returns the
 * count outside 10%, and of how many.
 */
export function againstPrevious(now: RunFigures, before: RunFigures, out: (line: string) => void): { outside: number; of: number } {
  const scenarios = Object.keys(Object.values(now.cpu)[0] ?? {});
  let outside = 0;
  let of = 0;
  out(`\n## Against the previous full run (${before.at}, at ${before.commit})\n`);
  out('Each CPU ratio of this run over the same ratio of the previous one; bold: more than 10% apart.\n');
  out(`| scenario | ${COLUMNS.map((c) => c.title).join(' | ')} |`);
  out(`|---|${COLUMNS.map(() => '---|').join('')}`);
  for (const scenario of scenarios) {
    const cells = COLUMNS.map(({ title }) => {
      const was = before.cpu[title]?.[scenario];
      const is = now.cpu[title]?.[scenario];
      if (was === undefined || is === undefined) return '—';
      of += 1;
      const r = is / was;
      const apart = r > 1.1 || r < 1 / 1.1;
      if (apart) outside += 1;
      return apart ? `**${f2(r)}**` : f2(r);
    });
    out(`| ${scenario} | ${cells.join(' | ')} |`);
  }
  out(`\n${of - outside} of ${of} CPU ratios within 10% of the previous run's.`);
  return { outside, of };
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
  const highest = (xs: number[]) => f2(Math.max(...xs));
  const allRuns = results.flatMap(({ runs }) => CONTESTANTS.flatMap((c) => runs[c]));
  const clean = deep.clean && hooks.clean && allRuns.every((m) => m.errors === 0 && m.unexpected === 0);
  const productRss = Math.max(...results.flatMap(({ runs }) => runs.product.map((m) => m.rssMb)));
  const startup = median(started.product) / median(started.bare);
  const cpu = (b: Contestant) => column(figures.cpu, 'product', b);
  const onFastify = (xs: number[]) => xs.filter((_, i) => FASTIFY_SCENARIOS.includes(results[i]?.scenario.name ?? ''));
  const fastify = onFastify(cpu('fastify'));
  const within = (xs: number[], limit: number) => xs.every((r) => r <= limit);
  const mcp = deep.mcp.map(({ connections, cpuRatio }) => `${f2(cpuRatio)} at ${connections}`).join(', ');
  // Decided on server CPU per request (a figure of what the server does); req/s and p99 are printed beside, in the tables.
  const targets: [string, boolean][] = [
    [
      `CPU per request ≤ 1/1.3 (0.77) of the bare express floor's on every scenario (highest ${highest(cpu('bare'))})`,
      within(cpu('bare'), 1 / 1.3),
    ],
    ...(['openapiBackend', 'openapiValidator'] as const).map((alt): [string, boolean] => [
      `CPU per request ≤ 1/1.3 (0.77) of ${LABEL[alt]}'s on every scenario (highest ${highest(cpu(alt))})`,
      within(cpu(alt), 1 / 1.3),
    ]),
    [
      `CPU per request ≤ 1/0.9 (1.11) of fastify's with route schemas on ${FASTIFY_SCENARIOS.join(', ')} (highest ${highest(fastify)})`,
      within(fastify, 1 / 0.9),
    ],
    ['zero errors and zero unexpected statuses', clean],
    [`a page 90% through ${run.deepPets.toLocaleString('en')} animals: p99 ≤ 1.25× the first page's`, deep.ok],
    [
      `CPU per request with VALIDATE_RESPONSES=log ≤ 1.1× off on every scenario (highest ${highest(column(figures.cpu, 'logged', 'product'))})`,
      within(column(figures.cpu, 'logged', 'product'), 1.1),
    ],
    [
      `CPU per request with a managed key within 5% of an API_KEYS key's on every scenario (highest ${highest(column(figures.cpu, 'keyed', 'product'))})`,
      within(column(figures.cpu, 'keyed', 'product'), 1.05),
    ],
    [
      `an MCP tool call's CPU ≤ 1.3× the same page asked for directly, at 10 and at 50 connections (${mcp})`,
      deep.mcp.every((m) => m.cpuRatio <= 1.3),
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
