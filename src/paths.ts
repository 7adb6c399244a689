import { existsSync } from 'node:fs';
import path from 'node:path';

// The same modules run from src/ (tests, ts-node) and from dist/src/ (npm start),
// so the project root is found by walking up to package.json rather than by a fixed depth.
function findProjectRoot(from: string): string {
  let dir = from;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${from}`);
    dir = parent;
  }
  return dir;
}

export const projectRoot = findProjectRoot(__dirname);
export const specPath = path.join(projectRoot, 'spec', 'openapi.yaml');
export const migrationsDir = path.join(projectRoot, 'src', 'store', 'database', 'migrations');
export const embeddedDataDir = path.join(projectRoot, '.data', 'pglite');
