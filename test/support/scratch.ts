import { type SpawnSyncReturns, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { projectRoot } from '../../src/paths';

/** A copy of the project's spec and code in a scratch folder (node_modules linked), for tests that edit them. */
export interface ScratchProject {
  dir: string;
  file(relative: string): string;
  read(relative: string): string;
  write(relative: string, text: string): void;
  /** Runs a command in the copy, with the project's binaries on the path. */
  run(command: string[], env?: NodeJS.ProcessEnv): SpawnSyncReturns<string>;
  remove(): void;
}

export function scratchProject(): ScratchProject {
  const dir = mkdtempSync(path.join(tmpdir(), 'animal-store-scratch-'));
  for (const entry of [
    'package.json',
    'package-lock.json',
    'tsconfig.json',
    'eslint.config.mjs',
    '.prettierrc.json',
    '.prettierignore',
    'spec',
    'generated',
    'src',
    'scripts',
    'test',
  ]) {
    cpSync(path.join(projectRoot, entry), path.join(dir, entry), {
      recursive: true,
      filter: (from) => !from.includes(`${path.sep}.cache`),
    });
  }
  symlinkSync(path.join(projectRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  const file = (relative: string) => path.join(dir, relative);
  return {
    dir,
    file,
    read: (relative) => readFileSync(file(relative), 'utf8'),
    write: (relative, text) => writeFileSync(file(relative), text),
    run: (command, env = {}) =>
      spawnSync(command[0] as string, command.slice(1), {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, PATH: `${path.join(dir, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}`, ...env },
        timeout: 180_000,
      }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * The spec with an operation added as a team would add one: `GET /pets/count` (countPets),
 * answering `{count}`, with the responses every operation documents; and an optional property
 * (`nickname`) on Pet.
 */
export function withCountPets(specText: string): string {
  const doc = parse(specText);
  const ref = (name: string) => ({ $ref: `#/components/responses/${name}` });
  doc.paths['/pets/count'] = {
    get: {
      operationId: 'countPets',
      summary: 'Count animals',
      description: 'The number of animals in the catalogue.',
      tags: ['animals'],
      responses: {
        '200': {
          description: 'The count.',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Count' }, example: { count: 2 } } },
        },
        '401': ref('Unauthorized'),
        '429': ref('TooManyRequests'),
        '500': ref('InternalError'),
        '501': ref('NotImplemented'),
        '503': ref('ServiceUnavailable'),
        default: ref('Error'),
      },
    },
  };
  doc.components.schemas.Count = {
    type: 'object',
    description: 'How many animals there are.',
    required: ['count'],
    properties: { count: { type: 'integer', format: 'int32', minimum: 0 } },
  };
  doc.components.schemas.Pet.allOf[1].properties.nickname = {
    type: 'string',
    description: 'What the staff call the animal.',
    maxLength: 50,
  };
  return stringify(doc, { lineWidth: 0 });
}
