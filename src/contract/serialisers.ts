import fastJson from 'fast-json-stringify';
import type OpenAPIBackend from 'openapi-backend';
import type { components } from '../../generated/openapi';
import type { Spec } from './spec';
import { documentedResponse } from './replyCheck';

/** A reply body as JSON text. */
export type Serialise = (body: unknown) => string;

/**
 * A body serialiser per operation and documented status, compiled from the spec's response
 * schemas at start-up by fast-json-stringify: it writes only the properties the schema declares
 * (a field the contract does not name never reaches the wire), in the schema's order, with
 * code made for that shape instead of JSON.stringify's walk of whatever it is given. A required
 * property missing, or a value that cannot be written as its declared type, throws: the
 * request core answers 500 instead.
 */
export interface ReplySerialisers {
  /** The serialiser of `operationId`'s response for `status` (as documentedResponse picks it); JSON.stringify where the spec documents no JSON body. */
  forReply(operationId: string | undefined, status: number): Serialise;
}

type Responses = Record<string, { content?: Record<string, { schema?: object }> }>;

export function compileSerialisers(spec: Spec, backend: OpenAPIBackend): ReplySerialisers {
  const byOperation = new Map<string, Map<string, Serialise>>();
  const compiled = new Map<object, Serialise>();
  const compile = (schema: object) =>
    compiled.get(schema) ?? compiled.set(schema, fastJson(withoutDefaults(schema) as object)).get(schema)!;
  for (const { operationId } of spec.operations.values()) {
    const responses = (backend.getOperation(operationId)?.responses ?? {}) as Responses;
    const serialisers = new Map<string, Serialise>();
    for (const [key, response] of Object.entries(responses)) {
      const schema = response.content?.['application/json']?.schema;
      if (schema) serialisers.set(key, compile(schema));
    }
    byOperation.set(operationId, serialisers);
  }
  // A refusal before any operation is matched (401, 404, 405 under the API root) is the Error body.
  const errorSchema = backend.definition.components?.schemas?.Error;
  const error = errorSchema ? compile(errorSchema) : JSON.stringify;
  // Each operation's statuses resolved once, on their first reply.
  const resolved = new Map<string, Map<number, Serialise>>();
  return {
    forReply(operationId, status) {
      const serialisers = operationId === undefined ? undefined : byOperation.get(operationId);
      if (operationId === undefined || !serialisers) return status >= 400 ? error : JSON.stringify;
      let statuses = resolved.get(operationId);
      if (!statuses) resolved.set(operationId, (statuses = new Map<number, Serialise>()));
      let serialise = statuses.get(status);
      if (!serialise) {
        const keys = Object.fromEntries([...serialisers.keys()].map((k) => [k, k]));
        const key = documentedResponse(keys, status);
        serialise = (key && serialisers.get(key)) || JSON.stringify;
        statuses.set(status, serialise);
      }
      return serialise;
    },
  };
}

/** An event as the contract's webhooks send it. */
export type PetCreatedEvent = components['schemas']['PetCreatedEvent'];

/**
 * The body of a `pet.created` event, compiled from the contract's `PetCreatedEvent` as a reply's
 * body is from its response schema: only the properties it declares, in its order, `data` written
 * as getPet's reply writes the animal. The same text on every attempt and replay of one event.
 */
export function compileEventSerialiser(spec: Spec): (event: PetCreatedEvent) => string {
  const schemas = (spec.document.components?.schemas ?? {}) as Record<string, object>;
  const event = schemas.PetCreatedEvent;
  if (!event) throw new Error('The spec defines no PetCreatedEvent schema: the webhooks have no body to send');
  // Its references (`#/components/schemas/Pet`) resolve in the schema itself: the spec's schemas go beside it.
  return fastJson(withoutDefaults({ ...event, components: { schemas } }) as object);
}

/** Keywords whose values are data, not schemas: copied as they are. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'example', 'examples']);
/** Keywords whose values map names to schemas: the names are kept, whatever they are. */
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);

/**
 * A copy of a schema without its `default`s: they are for requests (validation fills them in),
 * and fast-json-stringify would write one for a property the reply lacks, hiding its absence.
 */
function withoutDefaults(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(withoutDefaults);
  if (typeof schema !== 'object' || schema === null) return schema;
  const copy: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === 'default') continue;
    if (DATA_KEYWORDS.has(keyword)) copy[keyword] = value;
    else if (SCHEMA_MAPS.has(keyword) && typeof value === 'object' && value !== null)
      copy[keyword] = Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([name, sub]) => [name, withoutDefaults(sub)]),
      );
    else copy[keyword] = withoutDefaults(value);
  }
  return copy;
}
