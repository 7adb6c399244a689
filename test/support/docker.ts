import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/paths';
import { throwawayUnavailable } from './throwawayPostgres';

/**
 * Docker for the image's tests: the engine (Debian's docker.io, dockerd), docker-compose 1.29,
 * and the base images the Dockerfile and the compose file name. No registry is reached: where
 * those images are missing, the script BASE_IMAGES_BUILD names makes them (.ci/run runs it).
 */
export const dockerfile = readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8');

/** The Node.js release the image runs: the Dockerfile's `ARG NODE_VERSION=…`, its one mention. */
export const imageNodeVersion = (() => {
  const m = /^ARG NODE_VERSION=(\d+\.\d+\.\d+)$/m.exec(dockerfile);
  if (!m) throw new Error('the Dockerfile has no ARG NODE_VERSION=<major.minor.patch> line');
  return m[1]!;
})();

export const BASE_IMAGES = [`node:${imageNodeVersion}-bookworm-slim`, 'debian:bookworm-slim', 'postgres:15'];

export interface Ran {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** A command run to its end (asynchronously, so the test's own servers keep answering), killed after `timeoutMs`. */
export function runCommand(command: string[], { env = {}, timeoutMs = 600_000 }: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}) {
  return new Promise<Ran>((resolve) => {
    const [file = '', ...args] = command;
    const child = spawn(file, args, { cwd: projectRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let [stdout, stderr] = ['', ''];
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

/** `docker …`, failing with its output unless it exits 0. */
export async function docker(args: string[], timeoutMs?: number): Promise<string> {
  const r = await runCommand(['docker', ...args], { timeoutMs });
  if (r.status !== 0) throw new Error(`docker ${args.join(' ')} exited ${r.status}:\n${r.stdout}${r.stderr}`);
  return r.stdout.trim();
}

/** Why the image cannot be built and run here, or undefined when it can. */
export function dockerUnavailable(): string | undefined {
  const info = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], { encoding: 'utf8', timeout: 20_000 });
  if (info.error || info.status !== 0)
    return `no Docker engine answers (docker info: ${(info.error?.message ?? info.stderr).trim().split('\n')[0]}): apt-get install docker.io, then start dockerd`;
  if (spawnSync('docker-compose', ['version'], { encoding: 'utf8' }).status !== 0)
    return 'docker-compose is missing: apt-get install docker-compose';
  const missing = BASE_IMAGES.filter((image) => spawnSync('docker', ['image', 'inspect', image], { stdio: 'ignore' }).status !== 0);
  if (missing.length)
    return `base image(s) ${missing.join(', ')} missing: pull them from a registry, or build them with the script BASE_IMAGES_BUILD names ($BASE_IMAGES_BUILD ${imageNodeVersion})`;
  return throwawayUnavailable();
}

/** `describe`, or `describe.skip` naming why; REQUIRE_DOCKER=1 (set by .ci/run) turns the skip into a failure. */
export function describeWithDocker(name: string, fn: () => void): void {
  const why = dockerUnavailable();
  if (why && process.env.REQUIRE_DOCKER === '1') throw new Error(`${name}: ${why}, and REQUIRE_DOCKER=1`);
  if (why) describe.skip(`${name} (skipped: ${why})`, fn);
  else describe(name, fn);
}

/** The container's health as its HEALTHCHECK last judged it, once it is `want` (or throws after `ms`). */
export async function healthOf(container: string, want: string, ms: number): Promise<string> {
  const end = Date.now() + ms;
  for (;;) {
    const health = await docker(['inspect', '--format', '{{if .State.Health}}{{.State.Health.Status}}{{end}}', container]);
    if (health === want) return health;
    if (Date.now() > end) throw new Error(`${container} is ${health || 'without a health check'}, not ${want}, after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 500));
  }
}
