/**
 * The JSON Schema 2020-12 keywords OpenAPI 3.1 brought in, compared in a direction as the
 * older keywords are (schema.ts): tuple positions (`prefixItems`, then `items`), `contains`
 * (`minContains` / `maxContains` are bounds, with the others in schema.ts), `dependentRequired`,
 * `dependentSchemas`, `if` / `then` / `else`, `propertyNames`, `patternProperties`,
 * `unevaluatedProperties` / `unevaluatedItems`, and `contentMediaType` / `contentEncoding` /
 * `contentSchema`. A keyword added narrows what a
 * schema allows, removed widens it; where both sides have a subschema it is compared in turn,
 * so a change nested under any of them is found as it is under `properties`.
 */
import { esc, type Json } from './load';
import { type ConstraintName, type VerbOf, describeVerb } from './rules';

/** A finding on one keyword: `verb` one of the keyword's verbs in CONSTRAINT_VERBS. */
export type Constraint = <C extends ConstraintName>(name: C, verb: VerbOf<C>, message: string, keyword?: string) => void;
/** Compares two subschemas in the same direction, at `at`. */
export type Recurse = (oldS: unknown, newS: unknown, at: string) => void;

const isSchema = (v: unknown) => v === true || v === false || (typeof v === 'object' && v !== null && !Array.isArray(v));
const text = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** A keyword whose value is one subschema: added, removed, or compared. */
function subschema(
  o: Json,
  n: Json,
  keyword: 'contains' | 'then' | 'else' | 'propertyNames' | 'contentSchema',
  at: string,
  constraint: Constraint,
  recurse: Recurse,
): void {
  const has = (s: Json) => isSchema(s[keyword]);
  if (has(o) && has(n)) recurse(o[keyword], n[keyword], `${at}/${keyword}`);
  else if (has(n)) constraint(keyword, 'added', `\`${keyword}\` added: values must now match it`);
  else if (has(o)) constraint(keyword, 'removed', `\`${keyword}\` removed: values need no longer match it`);
}

/** A keyword whose value maps names (or patterns) to subschemas: each name added, removed or compared. */
function schemaMap(
  o: Json,
  n: Json,
  keyword: 'dependentSchemas' | 'patternProperties',
  at: string,
  constraint: Constraint,
  recurse: Recurse,
): void {
  const om: Json = isSchema(o[keyword]) ? o[keyword] : {};
  const nm: Json = isSchema(n[keyword]) ? n[keyword] : {};
  for (const name of Object.keys(om)) {
    const where = `${keyword}/${esc(name)}`;
    if (name in nm) recurse(om[name], nm[name], `${at}/${where}`);
    else constraint(keyword, 'removed', `${keyword} '${name}' removed`, where);
  }
  for (const name of Object.keys(nm))
    if (!(name in om)) constraint(keyword, 'added', `${keyword} '${name}' added`, `${keyword}/${esc(name)}`);
}

/** Tuple positions: the schema of position i is prefixItems[i], or `items` past the prefix. */
function tuplePositions(o: Json, n: Json, at: string, recurse: Recurse): void {
  const op: unknown[] = Array.isArray(o.prefixItems) ? o.prefixItems : [];
  const np: unknown[] = Array.isArray(n.prefixItems) ? n.prefixItems : [];
  for (let i = 0; i < Math.max(op.length, np.length); i++)
    recurse(i < op.length ? op[i] : o.items, i < np.length ? np[i] : n.items, `${at}/prefixItems/${i}`);
}

/** dependentRequired: for each property, the names it makes required. */
function dependentRequired(o: Json, n: Json, constraint: Constraint): void {
  const names = (s: Json, p: string): string[] => {
    const list: unknown = (s.dependentRequired as Json | undefined)?.[p];
    return Array.isArray(list) ? list.filter((x): x is string => typeof x === 'string') : [];
  };
  const props = new Set([...Object.keys(o.dependentRequired ?? {}), ...Object.keys(n.dependentRequired ?? {})]);
  for (const p of props) {
    const before = names(o, p);
    const after = names(n, p);
    const where = `dependentRequired/${esc(p)}`;
    for (const name of after.filter((x) => !before.includes(x)))
      constraint('dependentRequired', 'added', `with '${p}', '${name}' is now required`, where);
    for (const name of before.filter((x) => !after.includes(x)))
      constraint('dependentRequired', 'removed', `with '${p}', '${name}' is no longer required`, where);
  }
}

/** if / then / else: the branches compared while the condition is the same; a changed condition is its own finding. */
function conditional(
  o: Json,
  n: Json,
  at: string,
  constraint: Constraint,
  recurse: Recurse,
  same: (a: unknown, b: unknown) => boolean,
): void {
  const oIf = isSchema(o.if);
  const nIf = isSchema(n.if);
  if (!oIf && !nIf) return;
  if (oIf && nIf && !same(o.if, n.if)) {
    constraint('if', 'changed', '`if` changed: other values now take the `then` and `else` branches');
    return;
  }
  if (!oIf) return constraint('if', 'added', '`if` added: values that match it now meet `then`, the others `else`');
  if (!nIf) return constraint('if', 'removed', '`if` removed: `then` and `else` no longer apply');
  for (const branch of ['then', 'else'] as const) subschema(o, n, branch, at, constraint, recurse);
}

/**
 * additionalProperties, unevaluatedProperties, unevaluatedItems: absent or true allows anything,
 * false nothing, a schema what it allows.
 */
export function compareOpenness(
  o: Json,
  n: Json,
  keyword: 'additionalProperties' | 'unevaluatedProperties' | 'unevaluatedItems',
  at: string,
  constraint: Constraint,
  recurse: Recurse,
): void {
  const kind = (v: unknown) => (v === false ? 'none' : typeof v === 'object' && v !== null && Object.keys(v).length > 0 ? 'schema' : 'any');
  const ok = kind(o[keyword]);
  const nk = kind(n[keyword]);
  if (ok === 'schema' && nk === 'schema') return recurse(o[keyword], n[keyword], `${at}/${keyword}`);
  if (ok === nk) return;
  const verb = nk === 'none' ? 'refused' : ok === 'none' ? 'allowed' : nk === 'schema' ? 'schema-added' : 'schema-removed';
  constraint(keyword, verb, describeVerb(keyword, verb) ?? verb);
}

/** contentMediaType / contentEncoding: what a string carries, and how it is encoded. */
function content(o: Json, n: Json, at: string, constraint: Constraint, recurse: Recurse): void {
  for (const keyword of ['contentMediaType', 'contentEncoding'] as const) {
    const ov = text(o[keyword]);
    const nv = text(n[keyword]);
    if (ov === nv) continue;
    const verb = ov === undefined ? 'added' : nv === undefined ? 'removed' : 'changed';
    constraint(keyword, verb, `${keyword} changed from ${ov ?? 'none'} to ${nv ?? 'none'}`);
  }
  subschema(o, n, 'contentSchema', at, constraint, recurse);
}

/** Every 2020-12 keyword of two (flattened) schemas, compared in one direction. */
export function compareKeywords2020(
  o: Json,
  n: Json,
  at: string,
  constraint: Constraint,
  recurse: Recurse,
  same: (a: unknown, b: unknown) => boolean,
): void {
  tuplePositions(o, n, at, recurse);
  subschema(o, n, 'contains', at, constraint, recurse);
  dependentRequired(o, n, constraint);
  schemaMap(o, n, 'dependentSchemas', at, constraint, recurse);
  conditional(o, n, at, constraint, recurse, same);
  subschema(o, n, 'propertyNames', at, constraint, recurse);
  schemaMap(o, n, 'patternProperties', at, constraint, recurse);
  compareOpenness(o, n, 'unevaluatedProperties', at, constraint, recurse);
  compareOpenness(o, n, 'unevaluatedItems', at, constraint, recurse);
  content(o, n, at, constraint, recurse);
}
