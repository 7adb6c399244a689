/**
 * npm run test:extended [-- --repeat N]: what a contributor runs when touching a fault path, and what a
 * release runs; not the gate (.ci/run), which runs each fault once. The fault tier repeated (5 times unless
 * --repeat says, each file alone, with two busy loops beside it, as a loaded CI machine has), then the
 * soak for 10 minutes, the benchmark's smoke form and the image built from scratch. Every step runs to
 * its end, each is timed, and the run ends with what failed. Needs what the fault tier and the image's
 * test need (root, PostgreSQL's server binaries, pg_auto_failover, PgBouncer, a Docker engine with the
 * base images: docs/testing.md) and DATABASE_URL for the benchmark.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { positiveIntegerOption } from '../lib/processes';
import { runTool } from '../lib/tool';

/** A command to its end: its exit status. */
function run(command: string[], env: NodeJS.ProcessEnv = {}): Promise<number> {
  return new Promise((resolve) => {
    const [file = '', ...args] = command;
    const child = spawn(file, args, { cwd: projectRoot, env: { ...process.env, ...env }, stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** A process that keeps one core busy until killed. */
const busyLoop = (): ChildProcess => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });

async function main(): Promise<number> {
  const repeat = positiveIntegerOption(process.argv.slice(2), 'repeat', 5);
  const jest = path.join(projectRoot, 'node_modules', 'jest', 'bin', 'jest.js');
  const steps: [string, () => Promise<number>][] = [];
  for (let i = 1; i <= repeat; i++)
    steps.push([
      `the fault tier, run ${i} of ${repeat}, beside two busy loops`,
      async () => {
        const busy = [busyLoop(), busyLoop()];
        try {
          return await run([process.execPath, jest, '--selectProjects', 'faults', '--runInBand'], {
            REQUIRE_THROWAWAY_POSTGRES: '1',
            REQUIRE_AUTO_FAILOVER: '1',
          });
        } finally {
          for (const b of busy) b.kill('SIGKILL');
        }
      },
    ]);
  steps.push([
    'the soak, 10 minutes, a fault every 15 s',
    () => run(['npm', 'run', '-s', 'soak', '--', '--minutes', '10', '--fault-every', '15']),
  ]);
  steps.push(['the benchmark, smoke form', () => run(['npm', 'run', '-s', 'bench', '--', '--smoke'])]);
  steps.push([
    'the image, built from scratch',
    () => run(['docker', 'build', '--no-cache', '--pull=false', '-t', 'animal-store-api:extended', '.']),
  ]);
  const done: string[] = [];
  for (const [name, step] of steps) {
    process.stdout.write(`\n== ${name}\n`);
    const started = Date.now();
    const code = await step();
    done.push(`${String(Math.round((Date.now() - started) / 1000)).padStart(6)} s  ${code === 0 ? 'ok    ' : 'FAILED'}  ${name}`);
  }
  process.stdout.write(`\n== test:extended\n${done.join('\n')}\n`);
  return done.some((line) => line.includes('FAILED')) ? 1 : 0;
}

runTool('test:extended', main);
