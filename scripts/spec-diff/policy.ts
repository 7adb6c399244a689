/**
 * spec/spec-diff-policy.yaml: a team's own levels. Per rule id, a level (`error`, `warning`,
 * `info`) or `off`, each with the reason the team gives; `extends: oasdiff` starts from
 * oasdiff's levels for the changes the default argues otherwise (policies/oasdiff.yaml).
 * The file is checked against the rule table: an unknown id, a level outside the four or a
 * missing reason is refused, naming it.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { isObject, parseYaml } from './load';
import { projectRoot } from '../../src/paths';
import { type Level, RULES } from './rules';

export type PolicyLevel = Level | 'off';
export const POLICY_LEVELS: readonly PolicyLevel[] = ['error', 'warning', 'info', 'off'];

export interface PolicyEntry {
  level: PolicyLevel;
  reason: string;
}

/** The levels a policy sets, by rule id; the rules it does not name keep the table's level. */
export type Policy = ReadonlyMap<string, PolicyEntry>;

/** The presets `extends` may name, each a policy file in policies/ (which extends none). */
export const PRESETS = ['oasdiff'] as const;

export class PolicyFileError extends Error {
  constructor(file: string, reason: string) {
    super(`${file}: ${reason}`);
    this.name = 'PolicyFileError';
  }
}

/** A preset's file: in the source tree, whether this module runs from it or compiled into dist/spec-diff/. */
const presetFile = (name: string) => path.join(projectRoot, 'scripts', 'spec-diff', 'policies', `${name}.yaml`);

/** Reads a policy file (and the preset it extends); its own entries override the preset's. */
export function readPolicy(file: string): Policy {
  let text: string;
  let data: unknown;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new PolicyFileError(file, `cannot be read: ${(err as Error).message.split('\n')[0]}`);
  }
  try {
    data = parseYaml(text);
  } catch (err) {
    throw new PolicyFileError(file, `cannot be read as YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  if (data === null || data === undefined) return new Map();
  if (!isObject(data)) throw new PolicyFileError(file, 'must be a mapping with `rules` (and optionally `extends`)');
  const unknownKeys = Object.keys(data).filter((k) => k !== 'rules' && k !== 'extends');
  if (unknownKeys.length) throw new PolicyFileError(file, `unknown key ${unknownKeys.join(', ')} (a policy has \`extends\` and \`rules\`)`);
  const policy = new Map<string, PolicyEntry>();
  if (data.extends !== undefined) {
    const name = data.extends;
    if (typeof name !== 'string' || !(PRESETS as readonly string[]).includes(name))
      throw new PolicyFileError(file, `/extends: ${JSON.stringify(name)} is no preset (presets: ${PRESETS.join(', ')})`);
    for (const [id, entry] of readPolicy(presetFile(name))) policy.set(id, entry);
  }
  const rules = data.rules ?? {};
  if (!isObject(rules)) throw new PolicyFileError(file, '/rules must map rule ids to { level, reason }');
  for (const [id, entry] of Object.entries(rules)) {
    const at = `/rules/${id}`;
    if (!RULES.has(id)) throw new PolicyFileError(file, `${at}: no rule ${id} in the rule table (docs/spec-diff.md lists every rule)`);
    if (!isObject(entry)) throw new PolicyFileError(file, `${at} must be { level, reason }`);
    const extra = Object.keys(entry).filter((k) => k !== 'level' && k !== 'reason');
    if (extra.length) throw new PolicyFileError(file, `${at}: unknown key ${extra.join(', ')} (an entry has level and reason)`);
    if (!(POLICY_LEVELS as readonly unknown[]).includes(entry.level))
      throw new PolicyFileError(file, `${at}/level must be one of ${POLICY_LEVELS.join(', ')}, got ${JSON.stringify(entry.level)}`);
    if (typeof entry.reason !== 'string' || entry.reason.trim() === '')
      throw new PolicyFileError(file, `${at}/reason is missing: say why the team grades ${id} as ${String(entry.level)}`);
    policy.set(id, { level: entry.level as PolicyLevel, reason: entry.reason.trim() });
  }
  return policy;
}

/** A preset's policy, as `extends: <name>` reads it. */
export const presetPolicy = (name: (typeof PRESETS)[number]): Policy => readPolicy(presetFile(name));

/** spec/spec-diff-policy.yaml beside a spec. */
export const policyFileFor = (specFile: string) => path.join(path.dirname(specFile), 'spec-diff-policy.yaml');

/** The policy beside a spec, or none when there is no file. */
export const policyBeside = (specFile: string): Policy | undefined => {
  const file = policyFileFor(specFile);
  return existsSync(file) ? readPolicy(file) : undefined;
};
