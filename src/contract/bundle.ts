import { readFileSync } from 'node:fs';
import path from 'node:path';
import type $RefParser from '@apidevtools/json-schema-ref-parser';
import type { OpenAPIV3 } from 'openapi-types';
import { type Document, parse, parseDocument, stringify } from 'yaml';
import { hasExternalRef } from './externalRefs';

export { hasExternalRef };

/** The contract as one document: what the server, the generator, the mock and the checks read. */
export interface BundledSpec {
  /** The one document as YAML: the file's own text when it refers to no other file. */
  yamlText: string;
  document: OpenAPIV3.Document;
  /** Every file the document was read from, the root first (absolute paths). */
  files: string[];
  /** `yamlText` parsed, comments and layout kept: the document is its value. */
  yaml: Document;
}

/** The YAML text parsed once, as a value and as a document that keeps its comments; fails as `parse` fails. */
function parseYaml(text: string): { yaml: Document; document: OpenAPIV3.Document } {
  const yaml = parseDocument(text);
  const [error] = yaml.errors;
  if (error) throw error;
  return { yaml, document: yaml.toJS() as OpenAPIV3.Document };
}

/**
 * Reads the spec, which may be split into several files joined by relative `$ref`s, and
 * bundles it into one document with json-schema-ref-parser: each external file is inlined
 * once and every other reference to it becomes an internal `$ref`. Only local files are read
 * (never the network), and every file is parsed by the same YAML parser as the root.
 */
export async function bundleSpec(file: string): Promise<BundledSpec> {
  const root = path.resolve(file);
  const text = readFileSync(root, 'utf8');
  const { yaml, document } = parseYaml(text);
  if (!hasExternalRef(document)) return { yamlText: text, document, files: [root], yaml };

  // Loaded for a split spec only: the spec diff's start does not pay for it on one file.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const parser = new (require('@apidevtools/json-schema-ref-parser') as { default: typeof $RefParser }).default();
  const bundled = (await parser.bundle(root, structuredClone(document), {
    resolve: { http: false },
    parse: {
      yaml: {
        order: 1,
        canParse: ['.yaml', '.yml', '.json'],
        parse: (f: { data: Buffer | string }): unknown => parse(Buffer.isBuffer(f.data) ? f.data.toString('utf8') : f.data),
      },
    },
  })) as OpenAPIV3.Document;
  const files = parser.$refs.paths('file').map((p) => path.resolve(p));
  const yamlText = stringify(bundled, { lineWidth: 0 });
  return { yamlText, document: bundled, files: [root, ...files.filter((f) => f !== root)], yaml: parseYaml(yamlText).yaml };
}
