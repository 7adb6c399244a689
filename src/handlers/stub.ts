import { NotImplementedError, type OperationHandler, type OperationId } from '../contract/handlers';

const stubs = new WeakSet<object>();

/**
 * The handler `npm run generate` writes for an operation that has none: it answers 501 until
 * the file is filled in. Replacing the call with a function is what makes it a real handler,
 * so start-up can tell which operations are still stubs (isStub) without reading any source.
 */
export function notImplemented<Op extends OperationId>(operationId: Op): OperationHandler<Op> {
  const stub: OperationHandler<Op> = () => Promise.reject(new NotImplementedError(operationId));
  stubs.add(stub);
  return stub;
}

/** True for a handler made by notImplemented. */
export const isStub = (handler: unknown): boolean => typeof handler === 'function' && stubs.has(handler);
