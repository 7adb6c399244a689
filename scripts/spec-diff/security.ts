/**
 * Security: the requirements of an operation (every way a client could authenticate before must
 * still work), and the schemes themselves where 3.2 adds to them (deprecated, oauth2MetadataUrl,
 * a flow added).
 */
import type { Ctx } from './context';
import { esc, type Json } from './load';
import { canonical } from './schema';

/** One security requirement: each scheme it names, by what the scheme is (its scopes' catalogue apart) and the scopes it asks for. */
export type Requirement = Map<string, { identity: string; scopes: Set<string> }>;

/**
 * A scheme as a client meets it: its type, location, name, flows and URLs. The scopes an OAuth
 * flow lists and the descriptions are left out: a scope added to the catalogue changes no token.
 * So are what 3.2 adds beside them, graded on their own (compareSecuritySchemes): `deprecated`,
 * `oauth2MetadataUrl`, and the flows `onlyFlows` does not name: a flow added (such as
 * `deviceAuthorization`) changes nothing for the clients of the others.
 */
function schemeIdentity(scheme: unknown, onlyFlows?: ReadonlySet<string>): string {
  if (typeof scheme !== 'object' || scheme === null) return canonical(scheme ?? null);
  const { description: _d, deprecated: _dep, oauth2MetadataUrl: _m, flows, ...rest } = scheme as Json;
  const bare = Object.fromEntries(
    Object.entries<Json>(flows ?? {})
      .filter(([flow]) => !onlyFlows || onlyFlows.has(flow))
      .map(([flow, f]) => {
        const { scopes: _s, ...urls } = f ?? {};
        return [flow, urls];
      }),
  );
  return canonical(flows ? { ...rest, flows: bare } : rest);
}

/** The flows a document's scheme has, by the scheme's name. */
export const flowsOf = (doc: Json, name: string): Set<string> => {
  const flows: unknown = doc.components?.securitySchemes?.[name]?.flows;
  return new Set(typeof flows === 'object' && flows !== null ? Object.keys(flows) : []);
};

/**
 * An operation's requirements (its own, or the document's); none, or an empty one, lets a client
 * in without credentials. `flowsFrom`: the old document, whose flows alone a scheme's identity keeps.
 */
export function requirementsOf(doc: Json, op: Json, flowsFrom?: Json): Requirement[] {
  const reqs: Json[] = op.security ?? doc.security ?? [];
  return reqs.map(
    (r) =>
      new Map(
        Object.keys(r).map((name) => [
          name,
          {
            identity: schemeIdentity(doc.components?.securitySchemes?.[name], flowsFrom ? flowsOf(flowsFrom, name) : undefined),
            scopes: new Set<string>(r[name] ?? []),
          },
        ]),
      ),
  );
}

/** Each requirement's schemes and scopes as text, sorted; with `identity`, what each scheme is too (to tell any change). */
export const requirementText = (reqs: Requirement[], identity = false) =>
  reqs
    .map((r) =>
      [...r.keys()]
        .sort()
        .map((name) => `${name}${identity ? (r.get(name)?.identity ?? '') : ''}[${[...(r.get(name)?.scopes ?? [])].sort().join(',')}]`)
        .join(' + '),
    )
    .sort();

/** A client that met `old` meets `next`: each scheme `next` names is one `old` named, the same, asking no scope more. */
const meets = (old: Requirement, next: Requirement) =>
  [...next].every(([name, s]) => {
    const o = old.get(name);
    return o !== undefined && o.identity === s.identity && [...s.scopes].every((scope) => o.scopes.has(scope));
  });

const SCOPED_SCHEMES = new Set(['oauth2', 'openIdConnect']);
const isOpenApi30 = (doc: Json) => /^3\.0\./.test(String(doc.openapi));

/**
 * OpenAPI 3.0 lets only OAuth 2 and OpenID Connect schemes list scopes in a requirement (for any
 * other the list MUST be empty); 3.1 lets the others list role names. Against an old 3.0 version,
 * whose empty lists said nothing about roles, the roles a 3.1 version names on such schemes are
 * stated (info) and left out of the comparison; between 3.1 versions they are compared as scopes.
 */
function rolesStated(oldDoc: Json, newDoc: Json, reqs: Requirement[], at: string, ctx: Ctx): Requirement[] {
  if (!isOpenApi30(oldDoc) || isOpenApi30(newDoc)) return reqs;
  const roleless = (name: string) => !SCOPED_SCHEMES.has(String(newDoc.components?.securitySchemes?.[name]?.type));
  const stated = [...new Set(reqs.flatMap((r) => [...r].filter(([name, s]) => roleless(name) && s.scopes.size > 0)))];
  if (stated.length === 0) return reqs;
  ctx.push(
    'security-roles-stated',
    `${at}/security`,
    `role names stated: ${stated.map(([name, s]) => `${name}[${[...s.scopes].sort().join(',')}]`).join(', ')} (the old version, OpenAPI 3.0, could not name roles for these schemes)`,
  );
  return reqs.map((r) => new Map([...r].map(([name, s]) => [name, roleless(name) ? { ...s, scopes: new Set<string>() } : s])));
}

/** Security: every way a client could authenticate before must still work. */
export function compareSecurity(oldDoc: Json, newDoc: Json, o: Json, n: Json, at: string, ctx: Ctx): void {
  const anonymous = (reqs: Requirement[]) => (reqs.length === 0 ? [new Map()] : reqs);
  const oReqs = anonymous(requirementsOf(oldDoc, o));
  const nReqs = rolesStated(oldDoc, newDoc, anonymous(requirementsOf(newDoc, n, oldDoc)), at, ctx);
  if (requirementText(oReqs, true).join('|') === requirementText(nReqs, true).join('|')) return;
  const lost = oReqs.some((old) => !nReqs.some((next) => meets(old, next)));
  const wasOpen = oReqs.some((r) => r.size === 0);
  const plain = (reqs: Requirement[]) => requirementText(reqs).join(' or ') || 'none';
  const schemeChanged = lost && plain(oReqs) === plain(nReqs);
  ctx.push(
    !lost ? 'security-requirement-loosened' : wasOpen ? 'security-requirement-added' : 'security-requirement-changed',
    `${at}/security`,
    `security changed from ${plain(oReqs)} to ${plain(nReqs)}${schemeChanged ? ' (a security scheme changed)' : ''}`,
  );
}

/** The schemes of both documents, by name: what 3.2 lets a scheme say beside how clients authenticate. */
export function compareSecuritySchemes(oldDoc: Json, newDoc: Json, ctx: Ctx): void {
  const schemes = (d: Json): Json => d.components?.securitySchemes ?? {};
  for (const [name, o] of Object.entries<Json>(schemes(oldDoc))) {
    const n: Json | undefined = schemes(newDoc)[name];
    if (typeof o !== 'object' || o === null || typeof n !== 'object' || n === null) continue;
    const at = `/components/securitySchemes/${esc(name)}`;
    if ((o.description ?? '') !== (n.description ?? ''))
      ctx.push('description-changed', `${at}/description`, `description of security scheme ${name} changed`);
    if (o.deprecated !== true && n.deprecated === true)
      ctx.push('security-scheme-deprecated', `${at}/deprecated`, `security scheme ${name} deprecated`);
    if (o.deprecated === true && n.deprecated !== true)
      ctx.push('security-scheme-undeprecated', `${at}/deprecated`, `security scheme ${name} no longer deprecated`);
    if (o.oauth2MetadataUrl === undefined && n.oauth2MetadataUrl !== undefined)
      ctx.push(
        'security-scheme-metadata-url-added',
        `${at}/oauth2MetadataUrl`,
        `security scheme ${name}: oauth2MetadataUrl ${String(n.oauth2MetadataUrl)} added`,
      );
    else if (o.oauth2MetadataUrl !== undefined && o.oauth2MetadataUrl !== n.oauth2MetadataUrl)
      ctx.push(
        'security-scheme-metadata-url-changed',
        n.oauth2MetadataUrl === undefined ? at : `${at}/oauth2MetadataUrl`,
        `security scheme ${name}: oauth2MetadataUrl ${n.oauth2MetadataUrl === undefined ? 'removed' : `now ${String(n.oauth2MetadataUrl)}`} (was ${String(o.oauth2MetadataUrl)})`,
      );
    const before = flowsOf(oldDoc, name);
    for (const flow of flowsOf(newDoc, name))
      if (!before.has(flow))
        ctx.push('security-scheme-flow-added', `${at}/flows/${esc(flow)}`, `security scheme ${name}: flow ${flow} added`);
  }
}
