import type { OperationHandler } from '../contract/handlers';

// Liveness only: answering at all is the proof. The database is readiness's business.
export const getHealth: OperationHandler<'getHealth'> = () => Promise.resolve({ status: 200, body: { status: 'ok' } });
