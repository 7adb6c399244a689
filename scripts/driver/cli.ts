/**
 * npm run test:driver: postgres.js's own test suite (patches/postgres/upstream/tests, 3.4.9's, with
 * the tests of our fixes added: patches/postgres/fixes.test.js) against the build the service loads
 * (node_modules/postgres/cjs/src, as patched and built at install) and against its ES module source.
 *
 * The suite is run as upstream runs it: its bootstrap makes its users and settings on a server at
 * localhost:5432 (ssl on, md5 and scram users, wal_level logical, prepared transactions), and its
 * multi-host tests need a second server at localhost:5433. Both are throwaway clusters of this run,
 * in a network namespace of its own (`unshare --net`), so that they never meet the machine's server
 * on 127.0.0.1:5432; they are stopped by their own pg_ctl at the end. Needs root (the namespace, and
 * PostgreSQL run as the postgres user), openssl and PostgreSQL's server binaries.
 *
 *   npm run test:driver [-- --build cjs|esm] [-- --timeout-s 300]
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { runTool } from '../lib/tool';
import { failuresOf } from './failures';

const PATCHES = path.join(projectRoot, 'patches', 'postgres');
const INSTALLED = path.join(projectRoot, 'node_modules', 'postgres');
const INSIDE = 'ANIMAL_STORE_DRIVER_SUITE_NAMESPACE';
type Build = 'cjs' | 'esm';

/** The newest PostgreSQL server's binaries. */
function serverBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root) ? readdirSync(root).filter((v) => existsSync(path.join(root, v, 'bin', 'pg_ctl'))) : [];
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0];
  if (!newest) throw new Error(`no PostgreSQL server binaries under ${root}`);
  return path.join(root, newest, 'bin');
}

/** Runs a command to its end, failing with what it printed. */
function run(file: string, args: string[], options: { cwd?: string } = {}): void {
  const r = spawnSync(file, args, { ...options, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${file} ${args.join(' ')} exited ${r.status ?? r.signal}: ${r.stderr || r.stdout}`);
}

const asPostgres = (command: string) => run('su', ['postgres', '-s', '/bin/sh', '-c', command]);

/** postgres.js laid out as its repository is: the installed package, upstream's tests and transpile script, our tests appended. */
function stage(dir: string, build: Build): string {
  const repo = path.join(dir, 'postgres');
  mkdirSync(repo);
  for (const part of ['package.json', 'src', 'cjs', 'types'])
    cpSync(path.join(INSTALLED, part), path.join(repo, part), { recursive: true });
  cpSync(path.join(PATCHES, 'upstream', 'tests'), path.join(repo, 'tests'), { recursive: true });
  cpSync(path.join(PATCHES, 'upstream', 'transpile.cjs'), path.join(repo, 'transpile.cjs'));
  const suite = path.join(repo, 'tests', 'index.js');
  writeFileSync(suite, readFileSync(suite, 'utf8') + readFileSync(path.join(PATCHES, 'fixes.test.js'), 'utf8'));
  if (build === 'esm') return path.join(repo, 'tests');
  // Upstream's `npm run test:cjs`: the tests transpiled beside cjs/src. The sources it rebuilds are put
  // back as installed, so that the suite tests the build the service loads, not a fresh one.
  run(process.execPath, ['transpile.cjs'], { cwd: repo });
  rmSync(path.join(repo, 'cjs', 'src'), { recursive: true });
  cpSync(path.join(INSTALLED, 'cjs', 'src'), path.join(repo, 'cjs', 'src'), { recursive: true });
  return path.join(repo, 'cjs', 'tests');
}

/** Two servers as upstream's CI has them: 5432 with its pg_hba.conf, ssl and logical WAL; 5433 plain. */
function startServers(dir: string, bin: string): string[] {
  const data = ['a', 'b'].map((n) => path.join(dir, `pg-${n}`));
  chownSync(dir, uid('postgres'), uid('postgres', 'g'));
  for (const [i, d] of data.entries()) {
    asPostgres(`${bin}/initdb -D ${d} -A trust -U postgres > /dev/null`);
    const socket = path.join(dir, `socket-${i}`);
    mkdirSync(socket);
    chownSync(socket, uid('postgres'), uid('postgres', 'g'));
    const conf = [`port = ${5432 + i}`, "listen_addresses = 'localhost'", `unix_socket_directories = '${socket}'`];
    if (i === 0) {
      cpSync(path.join(PATCHES, 'upstream', 'tests', 'pg_hba.conf'), path.join(d, 'pg_hba.conf'));
      run(
        'openssl',
        ['req', '-new', '-x509', '-nodes', '-days', '2', '-subj', '/CN=localhost', '-keyout', 'server.key', '-out', 'server.crt'],
        {
          cwd: d,
        },
      );
      for (const f of ['server.key', 'server.crt']) chownSync(path.join(d, f), uid('postgres'), uid('postgres', 'g'));
      run('chmod', ['600', path.join(d, 'server.key')]);
      conf.push('ssl = on', 'wal_level = logical', 'max_prepared_transactions = 100');
    }
    writeFileSync(path.join(d, 'postgresql.conf'), `${readFileSync(path.join(d, 'postgresql.conf'), 'utf8')}\n${conf.join('\n')}\n`);
    asPostgres(`${bin}/pg_ctl -D ${d} -l ${d}.log -w start > /dev/null`);
  }
  return data;
}

function uid(user: string, kind: 'u' | 'g' = 'u'): number {
  return Number(spawnSync('id', [`-${kind}`, user], { encoding: 'utf8' }).stdout.trim());
}

/** The suite in `testsDir`, bounded by `timeoutMs` (a test that never settles keeps upstream's runner from exiting). */
function runSuite(
  testsDir: string,
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
): Promise<{ code: number | null; output: string; timedOut: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['index.js'], { cwd: testsDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output, timedOut });
    });
  });
}

/** Inside the namespace: servers up, each build's suite, servers down. */
async function inside(builds: Build[], timeoutMs: number): Promise<number> {
  run('ip', ['link', 'set', 'lo', 'up']);
  const bin = serverBin();
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-driver-suite-'));
  let data: string[] = [];
  let failed = 0;
  try {
    data = startServers(dir, bin);
    // As upstream's CI: PGUSER and PGSOCKET; TCP to localhost, which is this namespace's.
    const env = { ...process.env, PGUSER: 'postgres', PGHOST: 'localhost', PGPORT: '5432', PGSOCKET: path.join(dir, 'socket-0') };
    for (const build of builds) {
      const started = Date.now();
      const { code, output, timedOut } = await runSuite(stage(mkdtempSync(path.join(dir, `${build}-`)), build), env, timeoutMs);
      const passed = (output.match(/✅/g) ?? []).length;
      const ok = code === 0 && !timedOut && output.includes('🎉');
      if (!ok) failed += 1;
      const report = output.replace(/✅/g, '').trim();
      if (!ok && process.env.TEST_FAILURES_FILE)
        for (const line of failuresOf(build === 'cjs' ? 'cjs/tests' : 'tests', report, timedOut ? timeoutMs : undefined))
          appendFileSync(process.env.TEST_FAILURES_FILE, `${JSON.stringify(line)}\n`);
      process.stdout.write(
        `postgres.js suite, ${build === 'cjs' ? 'cjs/src (the build the service loads)' : 'src (ES modules)'}: ` +
          `${ok ? 'passed' : 'FAILED'}, ${passed} tests passed, ${((Date.now() - started) / 1000).toFixed(1)} s` +
          `${timedOut ? `; it did not end within ${timeoutMs / 1000} s` : ''}\n${ok ? '' : `${report}\n`}`,
      );
    }
  } finally {
    for (const d of data)
      spawnSync('su', ['postgres', '-s', '/bin/sh', '-c', `${bin}/pg_ctl -D ${d} -m immediate -w stop`], { stdio: 'ignore' });
    rmSync(dir, { recursive: true, force: true });
  }
  return failed === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
  const builds = (option('--build') ? [option('--build')] : ['cjs', 'esm']) as Build[];
  if (builds.some((b) => b !== 'cjs' && b !== 'esm')) throw new Error('--build takes cjs or esm');
  const timeoutMs = Number(option('--timeout-s') ?? 300) * 1000;
  if (process.env[INSIDE] === '1') return inside(builds, timeoutMs);
  if (process.getuid?.() !== 0) throw new Error('runs as root: a network namespace of its own (unshare --net), and PostgreSQL as postgres');
  if (!existsSync(path.join(INSTALLED, 'cjs', 'src'))) throw new Error('no node_modules/postgres: npm install first');
  // The same command again, inside a network namespace of its own.
  const child = spawn('unshare', ['--net', '--fork', '--', process.execPath, ...process.execArgv, __filename, ...args], {
    env: { ...process.env, [INSIDE]: '1' },
    stdio: 'inherit',
  });
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0))));
}

runTool('test:driver', main);
