/**
 * Comparing operations: identity, security, parameters and their serialisation, request
 * bodies, responses and their headers, deprecation, callbacks. What they read of an operation
 * is `operationParts.ts`.
 */
import { esc, isObject, type Json } from './load';
import type { Ctx } from './context';
import { compareDeprecation, removal } from './deprecation';
import { compareRest } from './fields';
import { compareSecurity } from './security';
import { compareCallbacks } from './callbacks';
import { compareSchema } from './schema';
import { type Operation, compareContent, compareIdentity, headersByName, schemaOf, serialisation } from './operationParts';

const isSuccess = (status: string) => /^[23]/.test(status) || /^[23]XX$/i.test(status);

function compareParameter(p: Json, np: Json, at: string, ctx: Ctx): void {
  const name = `parameter '${np.name}' (${np.in})`;
  if (p.in === 'path' && p.name !== np.name)
    ctx.push(
      'request-path-parameter-renamed',
      at,
      `path parameter '${p.name}' renamed to '${np.name}': no URL changes, but typed clients pass it by name`,
    );
  if (!p.required && np.required) ctx.push('request-parameter-made-required', at, `${name} is now required`);
  if (p.required && !np.required) ctx.push('request-parameter-made-optional', at, `${name} is now optional`);
  if ((p.description ?? '') !== (np.description ?? '')) ctx.push('description-changed', at, `description of ${name} changed`);
  compareDeprecation('request-parameter', p, np, at, ctx);

  const os = serialisation(p);
  const ns = serialisation(np);
  if (os.content !== ns.content) {
    ctx.push(
      'request-parameter-serialisation-changed',
      at,
      `${name} is now sent ${ns.content ? `as ${ns.content} (content)` : `with style ${ns.style} (schema)`}, was ${os.content ? `as ${os.content} (content)` : `with style ${os.style} (schema)`}`,
    );
    return;
  }
  if (!ns.content) {
    if (os.style !== ns.style) ctx.push('request-parameter-style-changed', at, `${name}: style changed from ${os.style} to ${ns.style}`);
    // explode changes nothing on the wire for a single value (a string, a number)
    const t: unknown = (np.schema as Json | undefined)?.type;
    const composite =
      t === undefined || t === 'array' || t === 'object' || (Array.isArray(t) && t.some((x) => x === 'array' || x === 'object'));
    if (os.explode !== ns.explode && composite)
      ctx.push('request-parameter-explode-changed', at, `${name}: explode changed from ${os.explode} to ${ns.explode}`);
  }
  if (os.allowReserved && !ns.allowReserved)
    ctx.push('request-parameter-allow-reserved-removed', at, `${name}: reserved characters must now be percent-encoded`);
  if (!os.allowReserved && ns.allowReserved)
    ctx.push('request-parameter-allow-reserved-added', at, `${name}: reserved characters may now be sent as they are`);
  const o = schemaOf(p);
  const n = schemaOf(np);
  // A default applies only when the parameter is left out: the old contract's clients of a required one never leave it out.
  const forOldClients = (schema: unknown) => (p.required === true && isObject(schema) ? { ...schema, default: undefined } : schema);
  compareSchema(forOldClients(o.schema), forOldClients(n.schema), 'request', `${at}${n.at}`, ns.content ? ctx : { ...ctx, textual: true });
  compareRest(p, np, 'parameter', at, name, ctx);
}

function compareHeaders(oh: Json, nh: Json, status: string, at: string, oldAt: string, ctx: Ctx): void {
  const om = headersByName(oh);
  const nm = headersByName(nh);
  for (const [lower, { name, header }] of om) {
    const found = nm.get(lower);
    if (!found) {
      ctx.push(
        header.required === true ? 'response-required-header-removed' : 'response-optional-header-removed',
        `${oldAt}/headers/${esc(name)}`,
        `response ${status} no longer carries the ${header.required === true ? 'required' : 'optional'} ${name} header`,
        'old',
      );
      continue;
    }
    const hAt = `${at}/headers/${esc(found.name)}`;
    if (header.required === true && found.header.required !== true)
      ctx.push('response-header-made-optional', hAt, `the ${name} header of response ${status} is no longer required`);
    if (header.required !== true && found.header.required === true)
      ctx.push('response-header-made-required', hAt, `the ${name} header of response ${status} is now always sent`);
    const o = schemaOf(header);
    const n = schemaOf(found.header);
    // A header's value is text on the wire, unless `content` gives it a media type.
    compareSchema(o.schema, n.schema, 'response', `${hAt}${n.at}`, found.header.content ? ctx : { ...ctx, textual: true });
    compareRest(header, found.header, 'header', hAt, `the ${name} header of response ${status}`, ctx);
  }
  for (const [lower, { name }] of nm)
    if (!om.has(lower))
      ctx.push('response-header-added', `${at}/headers/${esc(name)}`, `response ${status} now carries the ${name} header`);
}

export function compareOperation(oldDoc: Json, newDoc: Json, o: Operation, n: Operation, ctx: Ctx): void {
  compareIdentity('operation', o, n, ctx);
  compareSecurity(oldDoc, newDoc, o.op, n.op, n.pointer, ctx);
  compareParameters(o, n, ctx);
  compareRequestBody(o, n, ctx);
  compareResponses(o, n, ctx);
  compareCallbacks(oldDoc, newDoc, o, n, ctx);
}

/**
 * 3.2: the query string as query parameters in one version and as one `querystring` parameter (its
 * `content` the whole string) in the other. The same values are now written another way: one
 * serialisation change, not each parameter removed and one added. Returns the keys it covered.
 */
function compareQueryString(o: Operation, n: Operation, ctx: Ctx): Set<string> {
  const of = (op: Operation, where: string) => [...op.params].filter(([k]) => k.startsWith(`${where} `));
  const [oq, nq, oqs, nqs] = [of(o, 'query'), of(n, 'query'), of(o, 'querystring'), of(n, 'querystring')];
  const toOne = oqs.length === 0 && nqs.length > 0 && oq.length > 0;
  const toMany = oqs.length > 0 && nqs.length === 0 && nq.length > 0;
  if (!toOne && !toMany) return new Set();
  const names = (list: typeof oq) => list.map(([, { param }]) => `'${String(param.name)}'`).join(', ');
  const [gone, come] = toOne ? [oq.filter(([k]) => !n.params.has(k)), nqs] : [oqs, nq.filter(([k]) => !o.params.has(k))];
  ctx.push(
    'request-parameter-serialisation-changed',
    come[0]?.[1].pointer ?? n.pointer,
    toOne
      ? `the query parameters ${names(gone)} are now one querystring parameter ${names(come)} (the whole query string, as its content says)`
      : `the querystring parameter ${names(gone)} is now the query parameters ${names(come)}`,
  );
  return new Set([...gone, ...come].map(([k]) => k));
}

/** The parameters, paired by where they go and their name. */
function compareParameters(o: Operation, n: Operation, ctx: Ctx): void {
  const moved = compareQueryString(o, n, ctx);
  for (const [key, { param: p, pointer: oldAt }] of o.params) {
    if (moved.has(key)) continue;
    const found = n.params.get(key);
    if (found) compareParameter(p, found.param, found.pointer, ctx);
    else removal('request-parameter', 'request-parameter-removed', p, oldAt, `${p.in} parameter '${p.name}'`, ctx);
  }
  for (const [key, { param: np, pointer: pAt }] of n.params) {
    if (o.params.has(key) || moved.has(key)) continue;
    if (np.required) ctx.push('request-required-parameter-added', pAt, `required ${np.in} parameter '${np.name}' added`);
    else ctx.push('request-optional-parameter-added', pAt, `optional ${np.in} parameter '${np.name}' added`);
  }
}

function compareRequestBody(o: Operation, n: Operation, ctx: Ctx): void {
  const at = n.pointer;
  const ob: Json | undefined = o.op.requestBody;
  const nb: Json | undefined = n.op.requestBody;
  if (ob && !nb) ctx.push('request-body-removed', `${o.pointer}/requestBody`, 'request body removed', 'old');
  else if (!ob && nb)
    ctx.push(
      nb.required ? 'request-body-added-required' : 'request-body-added-optional',
      `${at}/requestBody`,
      `${nb.required ? 'required' : 'optional'} request body added`,
    );
  else if (ob && nb) {
    if (!ob.required && nb.required) ctx.push('request-body-made-required', `${at}/requestBody/required`, 'request body is now required');
    if (ob.required && !nb.required) ctx.push('request-body-made-optional', `${at}/requestBody/required`, 'request body is now optional');
    compareContent(ob.content ?? {}, nb.content ?? {}, 'request', `${at}/requestBody`, ctx, 'the request body');
    compareRest(ob, nb, 'requestBody', `${at}/requestBody`, 'the request body', ctx);
  }
}

/** The responses, by status: a success moved to another status is one change, not a removal and an addition. */
function compareResponses(o: Operation, n: Operation, ctx: Ctx): void {
  const at = n.pointer;
  const or: Json = o.op.responses ?? {};
  const nr: Json = n.op.responses ?? {};
  const addedSuccess = Object.keys(nr).filter((s) => !(s in or) && isSuccess(s));
  for (const status of Object.keys(or)) {
    const rAt = `${at}/responses/${esc(status)}`;
    const oldAt = `${o.pointer}/responses/${esc(status)}`;
    if (!(status in nr)) {
      if (isSuccess(status))
        ctx.push(
          addedSuccess.length ? 'success-response-status-changed' : 'success-response-removed',
          oldAt,
          `success response ${status} removed${addedSuccess.length ? ` (now ${addedSuccess.join(', ')})` : ''}`,
          'old',
        );
      else ctx.push('error-response-removed', oldAt, `response ${status} no longer documented`, 'old');
      continue;
    }
    const oResp: Json = or[status] ?? {};
    const nResp: Json = nr[status] ?? {};
    compareContent(oResp.content ?? {}, nResp.content ?? {}, 'response', rAt, ctx, `response ${status}`);
    compareHeaders(oResp.headers ?? {}, nResp.headers ?? {}, status, rAt, oldAt, ctx);
    if ((oResp.description ?? '') !== (nResp.description ?? ''))
      ctx.push('description-changed', `${rAt}/description`, `description of response ${status} changed`);
    compareRest(oResp, nResp, 'response', rAt, `response ${status}`, ctx);
  }
  const successReplaced = Object.keys(or).some((s) => isSuccess(s) && !(s in nr));
  for (const status of Object.keys(nr))
    if (!(status in or) && !(isSuccess(status) && successReplaced))
      ctx.push('response-added', `${at}/responses/${esc(status)}`, `response ${status} added`);
}
