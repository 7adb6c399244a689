/**
 * OpenAPI 3.1 webhooks: operations the API calls on its clients. Their directions are
 * reversed. What the API sends (a webhook's parameters and request body: the payload) is
 * read by the receiver as a client reads a response, so it is graded like one; what the
 * receiver answers (the webhook's responses: the reply) is read by the API as it reads a
 * request, so it is graded like one. Their findings are `webhook-payload-…` and
 * `webhook-reply-…`; a schema rule keeps the level of the direction it is graded in.
 */
import { esc, type Json } from './load';
import { compareContent, compareIdentity, headersByName, type Operation, schemaOf, serialisation } from './operationParts';
import { type Direction, twinId, WEBHOOK_ROLE } from './rules';
import { requirementsOf, requirementText } from './security';
import type { Ctx } from './context';
import { compareDeprecation, removal } from './deprecation';
import { compareSchema } from './schema';

/** Findings of one side of a webhook: `request-x` / `response-x` (the direction it is graded in) becomes its twin (rules.ts). */
function role(ctx: Ctx, dir: Direction): Ctx {
  return {
    ...ctx,
    push: (rule, pointer, message, side) =>
      ctx.push(rule.startsWith(`${dir}-`) ? twinId(dir, rule) : rule, pointer, `${WEBHOOK_ROLE[dir]}: ${message}`, side),
  };
}

/**
 * The credentials the API presents: a receiver verifies each way it may come. Only the webhook's
 * own `security` says so; the document's describes how clients call the API, not how it calls them.
 */
function compareWebhookSecurity(oldDoc: Json, newDoc: Json, o: Json, n: Json, at: string, ctx: Ctx): void {
  const own = (d: Json, op: Json) => requirementsOf(d, { security: op.security ?? [] });
  const before = requirementText(own(oldDoc, o), true);
  const after = requirementText(own(newDoc, n), true);
  if (before.join('|') === after.join('|')) return;
  const plain = (d: Json, op: Json) => requirementText(own(d, op)).join(' or ') || 'none';
  const added = after.some((r) => !before.includes(r));
  ctx.push(
    added ? 'webhook-security-changed' : 'webhook-security-narrowed',
    `${at}/security`,
    `the API's credentials changed from ${plain(oldDoc, o)} to ${plain(newDoc, n)}${added ? ': receivers must verify a new way' : ''}`,
  );
}

/** The parameters the API sends (headers, mostly): each one a receiver may read. */
function comparePayloadParameters(o: Operation, n: Operation, ctx: Ctx): void {
  const payload = role(ctx, 'response');
  for (const [key, { param: p, pointer: oldAt }] of o.params) {
    const found = n.params.get(key);
    const name = `${p.in} parameter '${p.name}'`;
    if (!found) {
      const plain = p.required === true ? 'webhook-payload-required-parameter-removed' : 'webhook-payload-optional-parameter-removed';
      removal('webhook-payload-parameter', plain, p, oldAt, `payload: ${name}`, ctx);
      continue;
    }
    const { param: np, pointer: at } = found;
    if (p.required === true && np.required !== true)
      ctx.push('webhook-payload-parameter-made-optional', at, `payload: ${name} is no longer always sent`);
    if (p.required !== true && np.required === true)
      ctx.push('webhook-payload-parameter-made-required', at, `payload: ${name} is now always sent`);
    if ((p.description ?? '') !== (np.description ?? '')) ctx.push('description-changed', at, `payload: description of ${name} changed`);
    compareDeprecation('webhook-payload-parameter', p, np, at, ctx);
    const os = serialisation(p);
    const ns = serialisation(np);
    if (os.content !== ns.content || (!ns.content && (os.style !== ns.style || os.explode !== ns.explode)))
      ctx.push(
        'webhook-payload-parameter-serialisation-changed',
        at,
        `payload: ${name} is now written another way (style, explode or content)`,
      );
    else {
      const nSchema = schemaOf(np);
      compareSchema(
        schemaOf(p).schema,
        nSchema.schema,
        'response',
        `${at}${nSchema.at}`,
        ns.content ? payload : { ...payload, textual: true },
      );
    }
  }
  for (const [key, { param: np, pointer: at }] of n.params)
    if (!o.params.has(key)) ctx.push('webhook-payload-parameter-added', at, `payload: ${np.in} parameter '${np.name}' added`);
}

/** The statuses, bodies and headers the API accepts from a receiver. */
function compareReplies(o: Json, n: Json, at: string, oldAt: string, ctx: Ctx): void {
  const reply = role(ctx, 'request');
  for (const status of Object.keys(o)) {
    const rAt = `${at}/responses/${esc(status)}`;
    if (!(status in n)) {
      ctx.push('webhook-reply-status-removed', `${oldAt}/responses/${esc(status)}`, `reply ${status} is no longer understood`, 'old');
      continue;
    }
    const or: Json = o[status] ?? {};
    const nr: Json = n[status] ?? {};
    compareContent(or.content ?? {}, nr.content ?? {}, 'request', rAt, reply, `status ${status}`);
    if ((or.description ?? '') !== (nr.description ?? ''))
      ctx.push('description-changed', `${rAt}/description`, `description of reply ${status} changed`);
    const oh = headersByName(or.headers ?? {});
    const nh = headersByName(nr.headers ?? {});
    for (const [lower, { name, header }] of oh) {
      const found = nh.get(lower);
      if (!found) {
        ctx.push(
          'webhook-reply-header-removed',
          `${oldAt}/responses/${esc(status)}/headers/${esc(name)}`,
          `reply ${status}: the ${name} header is no longer read`,
          'old',
        );
        continue;
      }
      const hAt = `${rAt}/headers/${esc(found.name)}`;
      if (header.required !== true && found.header.required === true)
        ctx.push('webhook-reply-header-made-required', hAt, `reply ${status}: the ${name} header must now be sent`);
      if (header.required === true && found.header.required !== true)
        ctx.push('webhook-reply-header-made-optional', hAt, `reply ${status}: the ${name} header may now be left out`);
      const ns = schemaOf(found.header);
      compareSchema(
        schemaOf(header).schema,
        ns.schema,
        'request',
        `${hAt}${ns.at}`,
        found.header.content ? reply : { ...reply, textual: true },
      );
    }
    for (const [lower, { name, header }] of nh)
      if (!oh.has(lower))
        ctx.push(
          header.required === true ? 'webhook-reply-required-header-added' : 'webhook-reply-optional-header-added',
          `${rAt}/headers/${esc(name)}`,
          `reply ${status}: the ${header.required === true ? 'required' : 'optional'} ${name} header added`,
        );
  }
  for (const status of Object.keys(n))
    if (!(status in o)) ctx.push('webhook-reply-status-added', `${at}/responses/${esc(status)}`, `reply ${status} is now understood`);
}

/** One webhook in both documents: the payload graded as a response, the reply as a request. */
export function compareWebhook(oldDoc: Json, newDoc: Json, o: Operation, n: Operation, ctx: Ctx): void {
  const at = n.pointer;
  compareIdentity('webhook', o, n, ctx);
  compareWebhookSecurity(oldDoc, newDoc, o.op, n.op, at, ctx);
  comparePayloadParameters(o, n, ctx);

  const ob: Json | undefined = o.op.requestBody;
  const nb: Json | undefined = n.op.requestBody;
  if (ob && !nb) ctx.push('webhook-payload-body-removed', `${o.pointer}/requestBody`, 'payload: the body is no longer sent', 'old');
  else if (!ob && nb) ctx.push('webhook-payload-body-added', `${at}/requestBody`, 'payload: a body is now sent');
  else if (ob && nb) {
    if (ob.required === true && nb.required !== true)
      ctx.push('webhook-payload-body-made-optional', `${at}/requestBody`, 'payload: the body may now be left out');
    if (ob.required !== true && nb.required === true)
      ctx.push('webhook-payload-body-made-required', `${at}/requestBody/required`, 'payload: the body is now always sent');
    compareContent(ob.content ?? {}, nb.content ?? {}, 'response', `${at}/requestBody`, role(ctx, 'response'), 'the body');
  }
  compareReplies(o.op.responses ?? {}, n.op.responses ?? {}, at, o.pointer, ctx);
}
