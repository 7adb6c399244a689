/**
 * npm test: every tier, as the gate runs them. First unit, component and system together (jest's two
 * workers), then the fault tier (jest.config.ts's `faults` project: the tests that start clusters of their
 * own, kill processes or measure a recovery) alone and one file at a time, so that no fault's load and no
 * recovery's clock shares the cores with another test. Both runs go to their end, whatever the first
 * gave; the exit status is a failure if either failed. The arguments go to both runs:
 * `npm test -- test/system/process/failover.test.ts` runs that file in the run it belongs to.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { runTool } from '../lib/tool';

const JEST = path.join(projectRoot, 'node_modules', 'jest', 'bin', 'jest.js');

/** One jest run to its end: its exit status and how long it took. */
function jest(args: string[]): Promise<{ code: number; seconds: number }> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [JEST, ...args], { cwd: projectRoot, stdio: 'inherit' });
    child.on('exit', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), seconds: (Date.now() - started) / 1000 }));
  });
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  // A path given may name files of one run only: the other then finds none, which is no failure.
  const parallel = await jest(['--selectProjects', 'unit', 'component', 'system', '--passWithNoTests', ...args]);
  const faults = await jest(['--selectProjects', 'faults', '--runInBand', '--passWithNoTests', ...args]);
  const said = (name: string, { code, seconds }: { code: number; seconds: number }) =>
    `${name}: ${code === 0 ? 'passed' : 'FAILED'} (${Math.round(seconds)} s)`;
  process.stderr.write(`\nnpm test: ${said('unit, component and system', parallel)}; ${said('the fault tier, alone', faults)}\n`);
  return parallel.code === 0 && faults.code === 0 ? 0 : 1;
}

runTool('npm test', main);
