import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { checkGenerated, checkRelease, lintSpec, spectralLint } from '../../../scripts/contract/checks';
import { scratchProject } from '../../support/scratch';
import { projectRoot } from '../../../src/paths';

describe('npm run contract', () => {
  const spec = readFileSync(path.join(projectRoot, 'spec', 'openapi.yaml'), 'utf8');
  const dir = mkdtempSync(path.join(tmpdir(), 'contract-'));
  const specWith = (name: string, edit: (text: string) => string) => {
    const file = path.join(dir, `${name}.yaml`);
    const edited = edit(spec);
    if (edited === spec) throw new Error(`edit ${name} changed nothing`);
    writeFileSync(file, edited);
    return file;
  };

  test('when the repository is checked out, then the released 1.0.0 is in it', () => {
    expect(readFileSync(path.join(projectRoot, 'spec', 'released', '1.0.0.yaml'), 'utf8')).toContain('version: 1.0.0');
  });

  test('when run on the spec as it is, then every check passes', () => {
    const r = spawnSync('npm', ['run', '-s', 'contract'], { cwd: projectRoot, encoding: 'utf8' });
    expect(r.stdout).toContain('✓ owasp: spec/openapi.yaml passes spectral:oas and the OWASP API Security ruleset (spec/.spectral.yaml)\n');
    expect(r.stdout).toContain('contract: all checks passed');
    expect(r.status).toBe(0);
  }, 60_000);

  test('when an operation has no handler, then it fails, saying what to do', () => {
    const file = specWith('unhandled', (s) =>
      s.replace(
        '  /pets/{petId}:\n',
        "  /pets/{petId}/photos:\n    get:\n      operationId: listPhotos\n      summary: Photos\n      description: Photos.\n      tags: [animals]\n      parameters:\n        - { name: petId, in: path, required: true, schema: { type: integer } }\n      responses:\n        '200': { description: Photos }\n        '401': { $ref: '#/components/responses/Unauthorized' }\n  /pets/{petId}:\n",
      ),
    );
    const r = spawnSync(
      path.join(projectRoot, 'node_modules', '.bin', 'ts-node'),
      ['--transpile-only', 'scripts/contract/cli.ts', '--spec', file],
      { cwd: projectRoot, encoding: 'utf8' },
    );
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(
      '✗ handlers: no handler for: src/handlers/listPhotos.ts\n    → run `npm run generate` to write a stub for each, then fill it in',
    );
    expect(r.stdout).toContain(
      '✗ generated: stale for the spec: generated/openapi.ts, generated/handlers.ts, generated/security.ts, generated/mcp-tools.ts\n    → run `npm run generate`',
    );
  }, 60_000);

  test('when the generated and handler checks run in-process, then both pass', async () => {
    expect(await checkGenerated(path.join(projectRoot, 'spec', 'openapi.yaml'))).toEqual([
      { name: 'generated', ok: true, detail: expect.any(String) },
      {
        name: 'handlers',
        ok: true,
        detail:
          'every operation has a handler: getHealth, getReadiness, listPets, createPet, getPet, listWebhookEndpoints, createWebhookEndpoint, getWebhookEndpoint, deleteWebhookEndpoint, rotateWebhookEndpointSecret',
      },
    ]);
  });

  test('when the spec breaks our conventions, then the linter says so', () => {
    const r = lintSpec(specWith('snake', (s) => s.replace('operationId: listPets', 'operationId: list_pets')));
    expect(r.ok).toBe(false);
    expect(r.detail).toContain('operationId must be camelCase');
  });

  test('when the contract loses a bound or gains a numeric id on a new path, then the OWASP check fails, naming the rule; the exceptions stay on their own paths', () => {
    const project = scratchProject();
    try {
      project.write(
        'spec/openapi.yaml',
        spec
          .replace('      maxItems: 100\n', '')
          .replace(
            '  /pets/{petId}:\n',
            "  /pets/{petId}/photos/{photoId}:\n    get:\n      operationId: getPhoto\n      summary: Photo\n      description: Photo.\n      tags: [animals]\n      parameters:\n        - { name: petId, in: path, required: true, schema: { type: integer, format: int64, minimum: 1, maximum: 9007199254740991 } }\n        - { name: photoId, in: path, required: true, schema: { type: integer, format: int64, minimum: 1, maximum: 9007199254740991 } }\n      responses:\n        '401': { $ref: '#/components/responses/Unauthorized' }\n  /pets/{petId}:\n",
          ),
      );
      const r = spectralLint(project.file('spec/openapi.yaml'));
      expect(r.ok).toBe(false);
      expect(r.detail).toMatch(/error +owasp:api4:2023-array-limit/);
      expect(r.detail).toMatch(/error +owasp:api1:2023-no-numeric-ids/);
      expect(r.detail).toMatch(/an exception goes in \S*spec\/\.spectral\.yaml, for that path only, with its reason/);
    } finally {
      project.remove();
    }
  }, 60_000);

  test('when an operation has an x-stability-level other than draft, alpha, experimental, beta or stable, then the linter refuses it', () => {
    const marked = (level: string) =>
      specWith(`stability-${level}`, (s) => s.replace('operationId: listPets', `operationId: listPets\n      x-stability-level: ${level}`));
    expect(lintSpec(marked('beta')).ok).toBe(true);
    expect(lintSpec(marked('alpha')).ok).toBe(true);
    const r = lintSpec(marked('alfa'));
    expect(r.ok).toBe(false);
    expect(r.detail).toContain('x-stability-level must be draft, alpha, experimental, beta or stable');
  });

  test('when an x-sunset is not a YYYY-MM-DD date, then the linter refuses it, naming the rule', () => {
    const sunset = (value: string) => specWith(`sunset-${value}`, (s) => s.replace("x-sunset: '2030-12-05'", `x-sunset: '${value}'`));
    expect(lintSpec(sunset('2030-12-06')).ok).toBe(true);
    const r = lintSpec(sunset('2030-12-5'));
    expect(r.ok).toBe(false);
    expect(r.detail).toContain('rule/sunset-date-operation');
  });

  test('when a breaking change is listed in spec/accepted-changes.yaml, then contract:release ships it, appends the changelog and consumes the entry; an expired entry fails npm run contract', () => {
    const project = scratchProject();
    try {
      project.write('spec/openapi.yaml', spec.replace(/^ {2}version: .+$/m, '  version: 1.1.0').replace('maximum: 100\n', 'maximum: 50\n'));
      // What the next release adds, in words, written as it landed: the release takes it up.
      const words = 'Pages are at most 50 animals.';
      project.write(
        'spec/CHANGELOG.md',
        project.read('spec/CHANGELOG.md').replace(/\n## Unreleased\n[\s\S]*$/, '') + `\n## Unreleased\n\n${words}\n`,
      );
      const entry = (expires: string) =>
        `accepted:\n  - rule: request-maximum-lowered\n    operation: GET /pets\n    reason: No client asks for more than 50.\n    expires: ${expires}\n`;
      project.write('spec/accepted-changes.yaml', `# kept comment\n${entry('2020-01-01')}`);
      const expired = project.run(['ts-node', '--transpile-only', 'scripts/contract/cli.ts']);
      expect(expired.stdout).toContain('expired on 2020-01-01: fix the change, or renew the entry');
      expect(expired.status).toBe(1);
      project.write('spec/accepted-changes.yaml', `# kept comment\n${entry('2099-01-01')}`);
      const released = project.run(['ts-node', '--transpile-only', 'scripts/contract/release.ts']);
      expect(released.stderr).toBe('');
      expect(released.stdout).toContain('released 1.1.0 as spec/released/1.1.0.yaml (after 1.0.0)');
      expect(project.read('spec/accepted-changes.yaml')).toBe('# kept comment\naccepted: []\n');
      const changelog = project.read('spec/CHANGELOG.md');
      expect(changelog).toContain('## 1.0.0 (2026-11-22)');
      expect(changelog).toMatch(
        /## 1\.1\.0 \(\d{4}-\d{2}-\d{2}\), after 1\.0\.0\n\nPages are at most 50 animals\.\n\n### Breaking changes shipped on purpose \(accepted\)\n\n- `GET \/pets`: maximum lowered: 100 → 50 \[accepted until 2099-01-01: No client asks for more than 50\.\] \(`request-maximum-lowered`\)\n/,
      );
      expect(changelog).not.toContain('## Unreleased');
      expect(project.read('spec/released/1.1.0.yaml')).toContain('maximum: 50');
      // Its bill of materials beside it: what shipped, production dependencies only.
      expect(released.stdout).toMatch(
        /its bill of materials: spec\/released\/1\.1\.0\.sbom\.cdx\.json: CycloneDX 1\.\d+, animal-store-api@1\.0\.0 and its \d+ production dependencies/,
      );
      const bom = JSON.parse(project.read('spec/released/1.1.0.sbom.cdx.json')) as { bomFormat: string; components: { name: string }[] };
      expect(bom.bomFormat).toBe('CycloneDX');
      const names = bom.components.map((c) => c.name);
      expect(names).toEqual(expect.arrayContaining(['express', 'openapi-backend', 'postgres', 'ajv']));
      expect(names).not.toContain('jest');
      expect(names).not.toContain('typescript');
    } finally {
      project.remove();
    }
  }, 120_000);

  describe('against the released 1.0.0', () => {
    test.each([
      ['limit maximum lowered', (s: string) => s.replace('maximum: 100\n', 'maximum: 50\n')],
      ['a status value removed', (s: string) => s.replace('enum: [available, pending, sold]', 'enum: [available, sold]')],
      [
        'categoryId no longer an integer',
        (s: string) => s.replace('categoryId:\n          type: integer', 'categoryId:\n          type: string'),
      ],
      [
        'getPet removed before its sunset',
        (s: string) =>
          s.replace('  /pets/{petId}:\n    get:\n      operationId: getPet', '  /pets/{petId}:\n    get:\n      operationId: getPetById'),
      ],
      ['the sunset moved earlier', (s: string) => s.replace("x-sunset: '2030-12-05'", "x-sunset: '2029-12-05'")],
      [
        'security dropped',
        (s: string) =>
          s
            .replace(/- bearerAuth: /g, '- apiKeyHeader: ')
            .replace('  securitySchemes:\n', '  securitySchemes:\n    apiKeyHeader: { type: apiKey, in: header, name: X-API-Key }\n'),
      ],
    ])('when %s, then the release check fails, naming the change and what to do', async (name, edit) => {
      const r = await checkRelease(specWith(name.replace(/\W+/g, '-'), edit), undefined, new Date('2026-11-22'));
      expect(r.ok).toBe(false);
      expect(r.detail).toContain('breaking change(s) against the released 1.0.0');
      expect(r.detail).toContain(
        '→ restore what the released contract promised (spec/released/1.0.0.yaml), make a new major version (info.version 2.0.0 and every server URL ending in /v2), or list the change in ',
      );
    });

    test('when 501 not_implemented is compared with the released 1.0.0, then it is additive: a documented response and a code clients may not know yet', async () => {
      const r = await checkRelease(path.join(projectRoot, 'spec', 'openapi.yaml'), undefined, new Date('2026-11-22'));
      expect(r.ok).toBe(true);
      expect(r.changes.filter((c) => c.level === 'error')).toEqual([]);
      expect(r.changes).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ level: 'info', rule: 'response-added', operation: 'GET /pets', message: 'response 501 added' }),
          expect.objectContaining({
            level: 'warning',
            rule: 'response-enum-value-added',
            message: expect.stringContaining('not_implemented'),
          }),
        ]),
      );
    });

    test('when the same breaking change comes with a new major version and base path, then it passes', async () => {
      const r = await checkRelease(
        specWith('v2', (s) =>
          s
            .replace('maximum: 100\n', 'maximum: 50\n')
            .replace(/^ {2}version: .+$/m, '  version: 2.0.0')
            .replace(/\/v1$/gm, '/v2'),
        ),
        undefined,
        new Date('2026-11-22'),
      );
      expect(r).toMatchObject({ ok: true, detail: expect.stringContaining('a new major version (2.0.0) over 1.0.0') });
    });

    test('when a new major version keeps the old base path, then it fails', async () => {
      const r = await checkRelease(specWith('v2-path', (s) => s.replace(/^ {2}version: .+$/m, '  version: 2.0.0')));
      expect(r.ok).toBe(false);
      expect(r.detail).toContain('info.version is 2.0.0, so every server URL must end in /v2');
    });

    test.each([
      [
        'an optional query parameter added',
        (s: string) =>
          s.replace(
            '        - name: status\n          in: query',
            '        - name: sort\n          in: query\n          required: false\n          description: Sort order.\n          schema: { type: string, enum: [id] }\n        - name: status\n          in: query',
          ),
      ],
      [
        'a response property added',
        (s: string) =>
          s.replace(
            '            id:\n              type: integer',
            '            createdAt:\n              type: string\n              format: date-time\n            id:\n              type: integer',
          ),
      ],
      ['the limit maximum raised', (s: string) => s.replace('maximum: 100\n', 'maximum: 200\n')],
      ['a description changed', (s: string) => s.replace('summary: List animals', 'summary: List the animals')],
      ['a minor version', (s: string) => s.replace(/^ {2}version: .+$/m, '  version: 1.2.0')],
    ])('when %s, then the release check passes', async (name, edit) => {
      const r = await checkRelease(specWith(`ok-${name.replace(/\W+/g, '-')}`, edit), undefined, new Date('2026-11-22'));
      expect(r).toMatchObject({ ok: true });
      expect(r.changes.filter((c) => c.level === 'error')).toEqual([]);
    });
  });
});
