import { readFileSync } from 'node:fs';
import path from 'node:path';
import { clientSizes } from '../../scripts/client/esm';
import { projectRoot } from '../../src/paths';

// The client as a package's consumers get it: its entry point, and what it adds to a bundle.
const pkg = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8'));

describe('the client package', () => {
  test('when the package is imported by name, then its entry points are the client and the receiver’s verifyWebhook as npm run build writes them, with their types', () => {
    expect(pkg.exports).toEqual({
      '.': { types: './dist/src/client/index.d.ts', default: './dist/src/client/index.js' },
      './webhooks': { types: './dist/src/client/webhooks.d.ts', default: './dist/src/client/webhooks.js' },
      './package.json': './package.json',
    });
    expect([pkg.main, pkg.types]).toEqual(['dist/src/client/index.js', 'dist/src/client/index.d.ts']);
    // npm run build compiles src/ and generated/ to dist/ (src/tsconfig.build.json), both shipped.
    const build = JSON.parse(readFileSync(path.join(projectRoot, 'src', 'tsconfig.build.json'), 'utf8'));
    expect(build.compilerOptions).toMatchObject({ rootDir: '..', outDir: '../dist', declaration: true });
    expect(pkg.files).toEqual(expect.arrayContaining(['dist/src', 'dist/generated']));
    // The one module the client imports at run time is a dependency of the package.
    expect(pkg.dependencies['openapi-fetch']).toBeDefined();
  });

  test('when the client is minified and gzipped, then it stays within 3 KB, about openapi-fetch’s own size, and a receiver’s verifyWebhook within 1 KB', () => {
    const [own, openapiFetch, together, receiver] = clientSizes();
    process.stdout.write(`client size (minified + gzip): ${JSON.stringify({ own, openapiFetch, together, receiver })}\n`);
    expect(own!.gzipped).toBeLessThanOrEqual(3 * 1024);
    expect(openapiFetch!.gzipped).toBeGreaterThan(1024);
    expect(receiver!.gzipped).toBeLessThanOrEqual(1024);
  });
});
