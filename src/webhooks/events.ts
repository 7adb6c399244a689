import type { components } from '../../generated/openapi';
import type { ClaimedDelivery } from '../store/webhooks/deliveries';

type PetCreatedEvent = components['schemas']['PetCreatedEvent'];
type Pet = components['schemas']['Pet'];

/** How an event's body is written: the contract's serialiser (`compileEventSerialiser`). */
export type EventWriter = (event: PetCreatedEvent) => string;

/**
 * The event a delivery sends, as the contract has it (PetCreatedEvent): its id, its type, when it
 * committed and the animal as stored with it. Only `pet.created` is defined.
 */
export function eventOf({
  eventId,
  type,
  createdAt,
  data,
}: Pick<ClaimedDelivery, 'eventId' | 'type' | 'createdAt' | 'data'>): PetCreatedEvent {
  if (type !== 'pet.created') throw new Error(`eventOf: no body is defined for events of type ${type}`);
  return { id: eventId, type, createdAt, data: data as Pet };
}
