import type { components } from '../../generated/openapi';
import type { ClaimedDelivery } from '../store/deliveries';

type PetCreatedEvent = components['schemas']['PetCreatedEvent'];
type Pet = components['schemas']['Pet'];

/**
 * The body of an event as sent: the contract's PetCreatedEvent, its keys in the schema's order
 * and `data` the animal as getPet returns it. The same text on every attempt and replay.
 */
export function eventBody({ eventId, type, createdAt, data }: Pick<ClaimedDelivery, 'eventId' | 'type' | 'createdAt' | 'data'>): string {
  if (type !== 'pet.created') throw new Error(`eventBody: no body is defined for events of type ${type}`);
  const pet = data as Pet;
  const event: PetCreatedEvent = {
    id: eventId,
    type,
    createdAt,
    data: { id: pet.id, name: pet.name, categoryId: pet.categoryId, status: pet.status },
  };
  return JSON.stringify(event);
}
