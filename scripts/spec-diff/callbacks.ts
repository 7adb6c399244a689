/**
 * Callbacks: the requests an operation's `callbacks` say the API sends back to a URL the client
 * gave. They are compared as webhooks are (webhooks.ts): the callback's request is what the API
 * sends, graded as a response (its receivers read it), and its responses are what the API reads
 * back, graded as a request. Each finding is on the operation that declares the callback, its
 * message naming the callback (`callback onEvent POST {$request.body#/url}: …`), under the
 * webhook rules; a callback added or removed is `callback-added` or `callback-removed`.
 */
import type { Ctx } from './context';
import { removal } from './deprecation';
import { isObject, type Json, ptr } from './load';
import { type Operation, operationsOfItems } from './operationParts';
import { compareWebhook } from './webhooks';

/** The operations of one callback of an operation, keyed `METHOD callback:name:expression`. */
function callbackOperations(op: Operation, name: string): Map<string, Operation> {
  const callbacks: unknown = op.op.callbacks;
  const items: unknown = isObject(callbacks) ? callbacks[name] : undefined;
  return operationsOfItems(
    isObject(items) ? items : {},
    (expression) => `callback:${name}:${expression}`,
    (expression) => `${op.pointer}${ptr('callbacks', name, expression)}`,
    false,
  );
}

/** Findings on the declaring operation, each message naming the callback (`cb.name` is its runtime expression). */
const about = (ctx: Ctx, name: string, cb: Operation): Ctx => {
  const label = `callback ${name} ${cb.method} ${cb.name}`;
  return { ...ctx, push: (rule, pointer, message, side) => ctx.push(rule, pointer, `${label}: ${message}`, side) };
};

export function compareCallbacks(oldDoc: Json, newDoc: Json, o: Operation, n: Operation, ctx: Ctx): void {
  const names = (op: Operation) => (isObject(op.op.callbacks) ? Object.keys(op.op.callbacks) : []);
  for (const name of new Set([...names(o), ...names(n)])) {
    const before = callbackOperations(o, name);
    const after = callbackOperations(n, name);
    for (const [key, cb] of before) {
      const now = after.get(key);
      if (now) compareWebhook(oldDoc, newDoc, cb, now, about(ctx, name, now));
      else removal('webhook', 'callback-removed', cb.op, cb.pointer, 'the callback', about(ctx, name, cb));
    }
    for (const [key, cb] of after) if (!before.has(key)) about(ctx, name, cb).push('callback-added', cb.pointer, 'callback added');
  }
}
