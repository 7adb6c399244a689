/**
 * Comparing two JSON schemas (OpenAPI 3.0 or 3.1) in a direction: a request schema may only
 * accept more than before, a response schema may only promise what it promised before.
 * Every constraint is compared both ways; oneOf/anyOf branch by branch; properties with
 * their readOnly/writeOnly visibility, requiredness and deprecation; the 2020-12 keywords of
 * OpenAPI 3.1 in keywords.ts.
 */
import type { Ctx } from './context';
import { compareDeprecation, removal } from './deprecation';
import { type Constraint, type Recurse, compareKeywords2020, compareOpenness } from './keywords';
import { esc, type Json } from './load';
import { type ConstraintName, type Direction, type RuleId, type VerbOf } from './rules';

const fmt = (v: unknown) => JSON.stringify(v);

// ---------------------------------------------------------------- canonical form

const canonicalCache = new WeakMap<object, string>();
/** A text that two schemas share exactly when they are equal (key order ignored; a cycle is written as its depth). */
export function canonical(value: unknown, stack: object[] = []): string {
  if (typeof value !== 'object' || value === null) return fmt(value) ?? 'undefined';
  const cached = canonicalCache.get(value);
  if (cached !== undefined) return cached;
  const depth = stack.indexOf(value);
  if (depth >= 0) return `#cycle${stack.length - depth}`;
  stack.push(value);
  const text = Array.isArray(value)
    ? `[${value.map((v) => canonical(v, stack)).join(',')}]`
    : `{${Object.keys(value)
        .sort()
        .map((k) => `${fmt(k)}:${canonical((value as Json)[k], stack)}`)
        .join(',')}}`;
  stack.pop();
  // Only what does not lie on a cycle has one text wherever it is reached from.
  if (!text.includes('#cycle')) canonicalCache.set(value, text);
  return text;
}

// ---------------------------------------------------------------- schemas

/** allOf merged into one schema, so that `Pet = allOf[NewPet, {id}]` compares property by property. */
function flatten(schema: unknown, depth = 0): Json {
  if (!schema || typeof schema !== 'object') return schema === false ? { not: {} } : {};
  const s = schema as Json;
  if (!Array.isArray(s.allOf) || depth > 20) return s;
  const merged: Json = { ...s, properties: { ...(s.properties ?? {}) }, required: [...(s.required ?? [])] };
  delete merged.allOf;
  for (const part of s.allOf.map((p: unknown) => flatten(p, depth + 1))) {
    for (const [k, v] of Object.entries(part)) {
      // A property named in two branches must meet both schemas: they are merged, not overwritten.
      if (k === 'properties')
        for (const [name, property] of Object.entries(v as Json))
          merged.properties[name] =
            name in merged.properties ? flatten({ allOf: [merged.properties[name], property] }, depth + 1) : property;
      else if (k === 'required') merged.required.push(...(v as string[]));
      else if (merged[k] === undefined) merged[k] = v;
    }
  }
  if (Object.keys(merged.properties).length === 0) delete merged.properties;
  if (merged.required.length === 0) delete merged.required;
  return merged;
}

/** The types a schema allows, null apart (3.0 `nullable` and 3.1 `type: [..., 'null']` alike); undefined: any. */
function typesOf(s: Json): { types?: Set<string>; nullable: boolean } {
  let t: unknown = s.type;
  if (t === undefined) {
    if (s.properties) t = 'object';
    else if (s.items) t = 'array';
  }
  const list: string[] =
    t === undefined ? [] : (Array.isArray(t) ? (t as unknown[]) : [t]).map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
  const nullable = s.nullable === true || list.includes('null') || (Array.isArray(s.enum) && s.enum.includes(null) && list.length === 0);
  const types = list.filter((x) => x !== 'null');
  return { types: t === undefined || types.length === 0 ? (list.includes('null') ? new Set() : undefined) : new Set(types), nullable };
}

/** Every value of type set `b` is also of type set `a` (an integer is a number). */
function covers(a: Set<string> | undefined, b: Set<string> | undefined): boolean {
  if (a === undefined) return true;
  if (b === undefined) return false;
  return [...b].every((t) => a.has(t) || (t === 'integer' && a.has('number')));
}
/**
 * `covers` for values sent as text (parameters, headers): every integer, number or boolean is
 * also a string there, so string covers them; arrays and objects keep their JSON types.
 */
function textCovers(a: Set<string> | undefined, b: Set<string> | undefined): boolean {
  if (a?.has('string') && b)
    return [...b].every((t) => a.has(t) || t === 'integer' || t === 'number' || t === 'boolean' || covers(a, new Set([t])));
  return covers(a, b);
}
const typeText = (t: Set<string> | undefined) => (t ? [...t].sort().join('|') || 'null' : 'any');

const WIDER_FORMAT: Record<string, string> = { int32: 'int64', float: 'double' };

interface Bound {
  value: number;
  exclusive: boolean;
}

/** A lower or upper bound, in either form: 3.0 `minimum` + `exclusiveMinimum: true`, 3.1 `exclusiveMinimum: 1`. */
function boundOf(s: Json, side: 'min' | 'max'): Bound | undefined {
  const incl: unknown = side === 'min' ? s.minimum : s.maximum;
  const excl: unknown = side === 'min' ? s.exclusiveMinimum : s.exclusiveMaximum;
  const candidates: Bound[] = [];
  if (typeof incl === 'number') candidates.push({ value: incl, exclusive: excl === true });
  if (typeof excl === 'number') candidates.push({ value: excl, exclusive: true });
  if (candidates.length === 0) return undefined;
  // The tighter of the two when both are written.
  return candidates.reduce((a, b) => {
    if (a.value === b.value) return a.exclusive ? a : b;
    return (side === 'min') === a.value > b.value ? a : b;
  });
}
const boundText = (b: Bound | undefined) => (b ? `${b.value}${b.exclusive ? ' (exclusive)' : ''}` : 'none');

type Pairs = Map<object, Set<object>>;

/** Compares two schemas; `stack` holds the pairs being compared, so that a recursive schema ends. */
export function compareSchema(oldS: unknown, newS: unknown, dir: Direction, at: string, ctx: Ctx, stack: Pairs = new Map()): void {
  if (typeof oldS === 'object' && oldS !== null && typeof newS === 'object' && newS !== null) {
    if (oldS === newS) return; // the same object (one document compared with itself)
    const onStack = stack.get(oldS);
    if (onStack?.has(newS)) return;
    if (!onStack) stack.set(oldS, new Set([newS]));
    else onStack.add(newS);
    try {
      compareResolved(oldS, newS, dir, at, ctx, stack);
    } finally {
      stack.get(oldS)?.delete(newS);
    }
    return;
  }
  compareResolved(oldS, newS, dir, at, ctx, stack);
}

/** A constraint's finding, pointing at the keyword (which the locator resolves to the schema when it was removed). */
function constraint<C extends ConstraintName>(
  dir: Direction,
  name: C,
  verb: VerbOf<C>,
  at: string,
  message: string,
  ctx: Ctx,
  keyword: string = name,
): void {
  // The id is one of the table's: `name` and `verb` are typed from CONSTRAINT_VERBS, whose every pair the table has.
  ctx.push(`${dir}-${name}-${verb}` as RuleId, `${at}/${keyword}`, message);
}

function compareResolved(oldS: unknown, newS: unknown, dir: Direction, at: string, ctx: Ctx, stack: Pairs): void {
  let o = flatten(oldS);
  let n = flatten(newS);
  if (canonical(o) === canonical(n)) return;

  // A schema wrapped in oneOf/anyOf (or unwrapped) is compared as a composition of one branch.
  for (const key of ['oneOf', 'anyOf'] as const) {
    const plain = (s: Json) => !Array.isArray(s.oneOf) && !Array.isArray(s.anyOf);
    if (Array.isArray(o[key]) && plain(n) && Object.keys(n).length > 0) n = { [key]: [n] };
    else if (Array.isArray(n[key]) && plain(o) && Object.keys(o).length > 0) o = { [key]: [o] };
  }

  compareTypes(o, n, dir, at, ctx);
  compareConstraints(o, n, dir, at, ctx);

  for (const key of ['oneOf', 'anyOf'] as const) compareBranches(o, n, key, dir, at, ctx, stack);
  if (canonical(o.not) !== canonical(n.not)) ctx.push(`${dir}-not-changed`, `${at}/not`, '`not` changed (not compared in detail)');
  compareDiscriminator(o, n, dir, at, ctx);

  if ((o.description ?? '') !== (n.description ?? '')) ctx.push('description-changed', `${at}/description`, 'description changed');
  if (canonical(o.xml) !== canonical(n.xml))
    ctx.push(`${dir}-xml-changed`, `${at}/xml`, `xml changed: ${xmlText(o.xml)} → ${xmlText(n.xml)}`);

  compareProperties(o, n, dir, at, ctx, stack);
  if (o.items !== undefined || n.items !== undefined) compareSchema(o.items, n.items, dir, `${at}/items`, ctx, stack);
  const push: Constraint = (name, verb, message, keyword) => constraint(dir, name, verb, at, message, ctx, keyword);
  const recurse: Recurse = (a, b, where) => compareSchema(a, b, dir, where, ctx, stack);
  compareOpenness(o, n, 'additionalProperties', at, push, recurse);
  compareKeywords2020(o, n, at, push, recurse, (a, b) => canonical(flatten(a)) === canonical(flatten(b)));
}

function compareTypes(o: Json, n: Json, dir: Direction, at: string, ctx: Ctx): void {
  const ot = typesOf(o);
  const nt = typesOf(n);
  if (typeText(ot.types) !== typeText(nt.types)) {
    const within = ctx.textual ? textCovers : covers;
    const widened = within(nt.types, ot.types);
    const narrowed = within(ot.types, nt.types);
    ctx.push(
      `${dir}-type-${widened ? 'widened' : narrowed ? 'narrowed' : 'changed'}`,
      `${at}/type`,
      `type changed from ${typeText(ot.types)} to ${typeText(nt.types)}`,
    );
  }
  const nullKey = (s: Json) => (s.nullable !== undefined ? 'nullable' : 'type');
  if (!ot.nullable && nt.nullable) ctx.push(`${dir}-nullable-added`, `${at}/${nullKey(n)}`, 'the value may now be null');
  if (ot.nullable && !nt.nullable) ctx.push(`${dir}-nullable-removed`, `${at}/${nullKey(o)}`, 'the value may no longer be null');

  if (o.format !== n.format) {
    const verb =
      o.format === undefined
        ? 'added'
        : n.format === undefined
          ? 'removed'
          : WIDER_FORMAT[String(o.format)] === n.format
            ? 'widened'
            : 'changed';
    ctx.push(`${dir}-format-${verb}`, `${at}/format`, `format changed from ${o.format ?? 'none'} to ${n.format ?? 'none'}`);
  }
}

/** Every constraint keyword of two (flattened) schemas: bounds, sizes, values, the enum and the default. */
function compareConstraints(o: Json, n: Json, dir: Direction, at: string, ctx: Ctx): void {
  compareBounds(o, n, dir, at, ctx);
  compareSizes(o, n, dir, at, ctx);
  compareValueRules(o, n, dir, at, ctx);
  compareEnum(o, n, dir, at, ctx);
  compareDefault(o, n, dir, at, ctx);
}

/** minimum and maximum, in either form of exclusiveness. */
function compareBounds(o: Json, n: Json, dir: Direction, at: string, ctx: Ctx): void {
  for (const side of ['min', 'max'] as const) {
    const name = side === 'min' ? 'minimum' : 'maximum';
    const ob = boundOf(o, side);
    const nb = boundOf(n, side);
    if (!ob && !nb) continue;
    let verb: VerbOf<'minimum' | 'maximum'> | undefined;
    if (!ob) verb = 'added';
    else if (!nb) verb = 'removed';
    else if (ob.value !== nb.value) verb = nb.value > ob.value ? 'raised' : 'lowered';
    else if (ob.exclusive !== nb.exclusive) verb = nb.exclusive ? 'made-exclusive' : 'made-inclusive';
    const exclusiveKey = side === 'min' ? 'exclusiveMinimum' : 'exclusiveMaximum';
    const written = (s: Json) =>
      typeof s[exclusiveKey] === 'number' || (s[name] === undefined && s[exclusiveKey] !== undefined) ? exclusiveKey : name;
    if (verb)
      constraint(dir, name, verb, at, `${name} ${verb.replace('-', ' ')}: ${boundText(ob)} → ${boundText(nb)}`, ctx, written(nb ? n : o));
  }
}

/** The length, item, property and contains counts. */
function compareSizes(o: Json, n: Json, dir: Direction, at: string, ctx: Ctx): void {
  for (const name of [
    'minLength',
    'maxLength',
    'minItems',
    'maxItems',
    'minProperties',
    'maxProperties',
    'minContains',
    'maxContains',
  ] as const) {
    const ov = typeof o[name] === 'number' ? o[name] : undefined;
    const nv = typeof n[name] === 'number' ? n[name] : undefined;
    if (ov === nv) continue;
    const verb = ov === undefined ? 'added' : nv === undefined ? 'removed' : nv > ov ? 'raised' : 'lowered';
    constraint(dir, name, verb, at, `${name} ${verb}: ${ov ?? 'none'} → ${nv ?? 'none'}`, ctx);
  }
}

/** multipleOf, pattern, uniqueItems and const. */
function compareValueRules(o: Json, n: Json, dir: Direction, at: string, ctx: Ctx): void {
  const om = typeof o.multipleOf === 'number' ? o.multipleOf : undefined;
  const nm = typeof n.multipleOf === 'number' ? n.multipleOf : undefined;
  if (om !== nm) {
    const whole = (x: number) => Math.abs(x - Math.round(x)) < 1e-9;
    const verb =
      om === undefined ? 'added' : nm === undefined ? 'removed' : whole(nm / om) ? 'raised' : whole(om / nm) ? 'lowered' : 'changed';
    constraint(dir, 'multipleOf', verb, at, `multipleOf ${verb}: ${om ?? 'none'} → ${nm ?? 'none'}`, ctx);
  }

  if (o.pattern !== n.pattern) {
    const verb = o.pattern === undefined ? 'added' : n.pattern === undefined ? 'removed' : 'changed';
    constraint(dir, 'pattern', verb, at, `pattern changed from ${o.pattern ?? 'none'} to ${n.pattern ?? 'none'}`, ctx);
  }

  if ((o.uniqueItems === true) !== (n.uniqueItems === true))
    constraint(
      dir,
      'uniqueItems',
      n.uniqueItems === true ? 'added' : 'removed',
      at,
      `uniqueItems ${n.uniqueItems === true ? 'added' : 'removed'}`,
      ctx,
    );

  if (canonical(o.const) !== canonical(n.const)) {
    const verb = o.const === undefined ? 'added' : n.const === undefined ? 'removed' : 'changed';
    constraint(dir, 'const', verb, at, `const changed from ${fmt(o.const) ?? 'none'} to ${fmt(n.const) ?? 'none'}`, ctx);
  }
}

function compareEnum(o: Json, n: Json, dir: Direction, at: string, ctx: Ctx): void {
  const ov: unknown[] | undefined = Array.isArray(o.enum) ? o.enum : undefined;
  const nv: unknown[] | undefined = Array.isArray(n.enum) ? n.enum : undefined;
  if (canonical(ov) !== canonical(nv)) {
    if (ov && !nv) constraint(dir, 'enum', 'removed', at, `the enum ${fmt(ov)} no longer restricts the value`, ctx);
    else if (!ov && nv) constraint(dir, 'enum', 'added', at, `the value is now restricted to ${fmt(nv)}`, ctx);
    else if (ov && nv) {
      const has = (list: unknown[], v: unknown) => list.some((x) => canonical(x) === canonical(v));
      const removed = ov.filter((v) => !has(nv, v));
      const added = nv.filter((v) => !has(ov, v));
      if (removed.length)
        constraint(dir, 'enum', 'value-removed', at, `enum value(s) ${removed.map((v) => fmt(v)).join(', ')} removed`, ctx);
      if (added.length)
        constraint(
          dir,
          'enum',
          'value-added',
          at,
          `enum value(s) ${added.map((v) => fmt(v)).join(', ')} added${dir === 'response' ? ' to a response: clients that switch on this value may not handle them' : ''}`,
          ctx,
        );
    }
  }
}

function compareDefault(o: Json, n: Json, dir: Direction, at: string, ctx: Ctx): void {
  if (canonical(o.default) !== canonical(n.default)) {
    const verb = o.default === undefined ? 'added' : n.default === undefined ? 'removed' : 'changed';
    ctx.push(
      `${dir}-default-${verb}`,
      `${at}/default`,
      `default changed from ${fmt(o.default) ?? 'none'} to ${fmt(n.default) ?? 'none'}${dir === 'request' && verb !== 'added' ? ': requests that leave it out now mean something else' : ''}`,
    );
  }
}

/** A property a message in this direction may carry: readOnly ones are not sent, writeOnly ones not received. */
const visible = (p: Json, dir: Direction) => (dir === 'request' ? p.readOnly !== true : p.writeOnly !== true);

function compareProperties(o: Json, n: Json, dir: Direction, at: string, ctx: Ctx, stack: Pairs): void {
  const op: Json = o.properties ?? {};
  const np: Json = n.properties ?? {};
  const oreq = new Set<string>(o.required ?? []);
  const nreq = new Set<string>(n.required ?? []);
  const req = dir === 'request';
  for (const name of Object.keys(op)) {
    const pAt = `${at}/properties/${esc(name)}`;
    const oldP = flatten(op[name]);
    if (!(name in np)) {
      if (visible(oldP, dir)) removal(`${dir}-property`, `${dir}-property-removed`, oldP, pAt, `property '${name}'`, ctx);
      continue;
    }
    const newP = flatten(np[name]);
    if (req && oldP.readOnly !== true && newP.readOnly === true)
      ctx.push('request-property-made-read-only', pAt, `property '${name}' became readOnly: requests may no longer send it`);
    if (req && oldP.readOnly === true && newP.readOnly !== true)
      ctx.push('request-property-read-only-removed', pAt, `property '${name}' is no longer readOnly: requests may send it`);
    if (!req && oldP.writeOnly !== true && newP.writeOnly === true)
      ctx.push('response-property-made-write-only', pAt, `property '${name}' became writeOnly: responses no longer carry it`);
    if (!req && oldP.writeOnly === true && newP.writeOnly !== true)
      ctx.push('response-property-write-only-removed', pAt, `property '${name}' is no longer writeOnly: responses carry it`);
    if (!visible(oldP, dir)) {
      if (visible(newP, dir) && req && nreq.has(name))
        ctx.push('request-required-property-added', pAt, `required property '${name}' added`);
      continue;
    }
    if (!visible(newP, dir)) continue;
    if (oreq.has(name) && !nreq.has(name)) ctx.push(`${dir}-property-made-optional`, pAt, `property '${name}' is no longer required`);
    if (!oreq.has(name) && nreq.has(name)) ctx.push(`${dir}-property-made-required`, pAt, `property '${name}' is now required`);
    compareDeprecation(`${dir}-property`, oldP, newP, pAt, ctx);
    compareSchema(op[name], np[name], dir, pAt, ctx, stack);
  }
  for (const name of Object.keys(np)) {
    if (name in op) continue;
    const newP = flatten(np[name]);
    if (!visible(newP, dir)) continue;
    const pAt = `${at}/properties/${esc(name)}`;
    if (req && nreq.has(name)) ctx.push('request-required-property-added', pAt, `required property '${name}' added`);
    else ctx.push(`${dir}-property-added`, pAt, `${req ? 'optional ' : ''}property '${name}' added`);
  }
}

/** The value a branch gives its discriminator property, when it fixes one. */
function discriminatorValue(branch: Json, property: string | undefined): string | undefined {
  if (!property) return undefined;
  const p = flatten(flatten(branch).properties?.[property]);
  if (p.const !== undefined) return canonical(p.const);
  if (Array.isArray(p.enum) && p.enum.length === 1) return canonical(p.enum[0]);
  return undefined;
}

/** The values a schema fixes for its properties (const, or enum): property name → the values' canonical texts. */
function fixedValues(s: Json): Map<string, Set<string>> {
  const fixed = new Map<string, Set<string>>();
  for (const [name, p] of Object.entries<unknown>(s.properties ?? {})) {
    const f = flatten(p);
    if (f.const !== undefined) fixed.set(name, new Set([canonical(f.const)]));
    else if (Array.isArray(f.enum)) fixed.set(name, new Set(f.enum.map((v: unknown) => canonical(v))));
  }
  return fixed;
}

/**
 * Whether some value may match both schemas, as far as their types, fixed property values and
 * closed property lists tell; two schemas none of these keeps apart are taken to overlap.
 */
function mayOverlap(a: Json, b: Json): boolean {
  const ta = typesOf(a);
  const tb = typesOf(b);
  const someOf = (x: Set<string> | undefined, y: Set<string> | undefined) => [...(x ?? [])].some((t) => covers(y, new Set([t])));
  const shareType = ta.types === undefined || tb.types === undefined || someOf(ta.types, tb.types) || someOf(tb.types, ta.types);
  if (!shareType && !(ta.nullable && tb.nullable)) return false;
  if (a.const !== undefined && b.const !== undefined && canonical(a.const) !== canonical(b.const)) return false;
  const fa = fixedValues(a);
  const fb = fixedValues(b);
  const required = (s: Json) => new Set<string>(Array.isArray(s.required) ? s.required : []);
  for (const [name, values] of fa) {
    const other = fb.get(name);
    // A property both require, whose values the two fix apart, tells them apart.
    if (other && required(a).has(name) && required(b).has(name) && ![...values].some((v) => other.has(v))) return false;
  }
  const closedAgainst = (x: Json, y: Json) =>
    x.additionalProperties === false && [...required(y)].some((name) => !(name in (x.properties ?? {})));
  return !closedAgainst(a, b) && !closedAgainst(b, a);
}

/**
 * oneOf/anyOf branch by branch: equal branches pair up first, then branches with the same
 * title or discriminator value, then branches of the same type; paired branches are
 * compared, the rest are added or removed.
 */
function compareBranches(o: Json, n: Json, key: 'oneOf' | 'anyOf', dir: Direction, at: string, ctx: Ctx, stack: Pairs): void {
  const ob: unknown[] = Array.isArray(o[key]) ? o[key] : [];
  const nb: unknown[] = Array.isArray(n[key]) ? n[key] : [];
  if (ob.length === 0 && nb.length === 0) return;
  const pairs: [number, number][] = [];
  const freeOld = new Set(ob.keys());
  const freeNew = new Set(nb.keys());
  const prop: string | undefined = (n.discriminator ?? o.discriminator)?.propertyName;
  const matchers: ((a: Json, b: Json) => boolean)[] = [
    (a, b) => canonical(a) === canonical(b),
    (a, b) => typeof a.title === 'string' && a.title === b.title,
    (a, b) => discriminatorValue(a, prop) !== undefined && discriminatorValue(a, prop) === discriminatorValue(b, prop),
    (a, b) => typeText(typesOf(flatten(a)).types) === typeText(typesOf(flatten(b)).types),
  ];
  for (const match of matchers) {
    for (const i of [...freeOld]) {
      const j = [...freeNew].find((j2) => match(flatten(ob[i]), flatten(nb[j2])));
      if (j === undefined) continue;
      pairs.push([i, j]);
      freeOld.delete(i);
      freeNew.delete(j);
    }
  }
  for (const [i, j] of pairs) compareSchema(ob[i], nb[j], dir, `${at}/${key}/${j}`, ctx, stack);
  // oneOf passes a value that matches exactly one branch: an added branch that a kept one's values may also match fails them.
  if (key === 'oneOf' && dir === 'request')
    for (const j of freeNew) {
      const kept = pairs.find(([, k]) => mayOverlap(flatten(nb[j]), flatten(nb[k])));
      if (kept)
        ctx.push(
          'request-oneOf-branches-overlap',
          `${at}/oneOf/${j}`,
          `oneOf branch ${j} added overlaps branch ${kept[1]}: a request that matched it alone may now match both, and oneOf then refuses it`,
        );
    }
  const label = (s: unknown) => {
    const f = flatten(s);
    return typeof f.title === 'string' ? `'${f.title}'` : typeText(typesOf(f).types);
  };
  for (const i of freeOld) ctx.push(`${dir}-${key}-branch-removed`, `${at}/${key}/${i}`, `${key} branch ${label(ob[i])} removed`, 'old');
  for (const j of freeNew)
    ctx.push(
      `${dir}-${key}-branch-added`,
      `${at}/${key}/${j}`,
      `${key} branch ${label(nb[j])} added${dir === 'response' ? ': clients may receive a shape they do not handle' : ''}`,
    );
}

/** A schema's `xml` in a few words: `attribute "id"`, `element`, `none`. */
function xmlText(xml: unknown): string {
  if (typeof xml !== 'object' || xml === null) return 'none';
  const x = xml as Json;
  // 3.2's nodeType; 3.0/3.1's attribute: true is an attribute node
  const node = typeof x.nodeType === 'string' ? x.nodeType : x.attribute === true ? 'attribute' : 'element';
  const rest = Object.entries(x)
    .filter(([k]) => k !== 'nodeType' && k !== 'attribute')
    .map(([k, v]) => `${k} ${JSON.stringify(v)}`);
  return [node, ...rest].join(', ');
}

function compareDiscriminator(o: Json, n: Json, dir: Direction, at: string, ctx: Ctx): void {
  const od: Json | undefined = o.discriminator;
  const nd: Json | undefined = n.discriminator;
  if (!od && !nd) return;
  const where = `${at}/discriminator`;
  if (!od) return ctx.push(`${dir}-discriminator-added`, where, `discriminator ${nd?.propertyName} added`);
  if (!nd) return ctx.push(`${dir}-discriminator-removed`, where, `discriminator ${od.propertyName} removed`);
  if (od.propertyName !== nd.propertyName)
    ctx.push(
      `${dir}-discriminator-property-changed`,
      where,
      `discriminator property changed from ${od.propertyName} to ${nd.propertyName}`,
    );
  const om: Json = od.mapping ?? {};
  const nm: Json = nd.mapping ?? {};
  for (const value of Object.keys(om)) {
    if (!(value in nm)) ctx.push(`${dir}-discriminator-mapping-removed`, `${where}/mapping`, `discriminator value '${value}' removed`);
    else if (om[value] !== nm[value])
      ctx.push(
        `${dir}-discriminator-mapping-changed`,
        `${where}/mapping/${esc(value)}`,
        `discriminator value '${value}' now names ${nm[value]} (was ${om[value]})`,
      );
  }
  for (const value of Object.keys(nm))
    if (!(value in om))
      ctx.push(`${dir}-discriminator-mapping-added`, `${where}/mapping/${esc(value)}`, `discriminator value '${value}' added`);
  // 3.2: the schema a value without the property, or with a value the mapping lacks, is read as
  const od0 = od.defaultMapping === undefined ? undefined : JSON.stringify(od.defaultMapping);
  const nd0 = nd.defaultMapping === undefined ? undefined : JSON.stringify(nd.defaultMapping);
  if (od0 === nd0) return;
  const dm = `${where}/defaultMapping`;
  if (od0 === undefined) ctx.push(`${dir}-discriminator-default-mapping-added`, dm, `discriminator defaultMapping ${nd0} added`);
  else if (nd0 === undefined)
    ctx.push(`${dir}-discriminator-default-mapping-removed`, where, `discriminator defaultMapping ${od0} removed`);
  else ctx.push(`${dir}-discriminator-default-mapping-changed`, dm, `discriminator defaultMapping now names ${nd0} (was ${od0})`);
}
