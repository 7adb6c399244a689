import { NotReadyError } from '../store/errors';
import type { OperationHandler } from '../contract/handlers';

export const getReadiness: OperationHandler<'getReadiness'> = async ({ deadline }, { health }) => {
  // An unreachable database throws here, as does one still being prepared: 503 with Retry-After.
  const { applied, known } = await health.migrations(deadline);
  if (applied < known) throw new NotReadyError(`Not ready: migrations_pending (the database is at ${applied}, this build needs ${known})`);
  return { status: 200, body: { status: 'ready', migration: applied } };
};
