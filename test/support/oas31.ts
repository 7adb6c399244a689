import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { projectRoot } from '../../src/paths';

/**
 * The errors of `doc` against the OpenAPI Initiative's schema of 3.1 documents, as Spectral's
 * oas3-schema rule ships it (openapi-schema-validator has no 3.1 schema: asked for 3.1, it checks
 * against 3.0's, which refuses `webhooks`). The Schema Objects inside are held to be objects or
 * booleans only: the lint (`npm run contract`) checks them in depth.
 */
export function oas31Errors(doc: unknown): unknown[] {
  const dir = path.join(projectRoot, 'node_modules/@stoplight/spectral-rulesets/dist/oas/schemas/oas/v3.1');
  const schema = JSON.parse(readFileSync(path.join(dir, 'index.json'), 'utf8'));
  const ajv = addFormats(new Ajv2020({ allErrors: true, strict: false }));
  ajv.addSchema({ $id: 'https://spec.openapis.org/oas/3.1/dialect/base', type: ['object', 'boolean'] });
  return ajv.validate(schema, doc) ? [] : (ajv.errors ?? []);
}
