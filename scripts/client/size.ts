import { runTool } from '../lib/tool';
import { clientSizes } from './esm';

// npm run client:size — what the client adds to a consumer's bundle, beside openapi-fetch's own.
runTool('client:size', () => {
  const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`;
  process.stdout.write('| code | source | minified | minified + gzip |\n|---|---:|---:|---:|\n');
  for (const s of clientSizes()) process.stdout.write(`| ${s.what} | ${kb(s.source)} | ${kb(s.minified)} | ${kb(s.gzipped)} |\n`);
  return Promise.resolve();
});
