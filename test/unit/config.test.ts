import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { ConfigError, isLoopbackHost, loadConfig } from '../../src/config';
import { embeddedDataDir, projectRoot } from '../../src/paths';

const KEY = 'a-valid-key-0123456789';

const problemsOf = (env: NodeJS.ProcessEnv): string[] => {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('expected a ConfigError');
};

describe('loadConfig', () => {
  test('when nothing is set, then the defaults apply and one random key is made', () => {
    const a = loadConfig({});
    const b = loadConfig({});
    expect(a).toEqual({
      host: '127.0.0.1',
      port: 3000,
      databaseUrl: undefined,
      databaseFollowsPrimary: false,
      databaseFailoverTimeoutMs: 30_000,
      pgliteDataDir: embeddedDataDir,
      databasePoolSize: 10,
      databasePoolMode: 'session',
      databaseReplicaUrl: undefined,
      databaseReplicaMaxLagMs: 1000,
      bootstrapKeys: [expect.stringMatching(/^[A-Za-z0-9_-]{32}$/)],
      bootstrapKeyGenerated: true,
      logLevel: 'info',
      webConcurrency: 1,
      metricsToken: undefined,
      rateLimit: { requests: 6000, windowSeconds: 60 },
      idempotencyTtlSeconds: 86_400,
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 65_000,
      onUnsafeDatabase: 'refuse',
      allowStubs: true,
      validateResponses: 'off',
      corsOrigins: undefined,
      mcpEnabled: false,
      webhookAllowPrivateTargets: false,
      tracing: {
        exporters: [],
        otlpEndpoint: 'http://localhost:4318/v1/traces',
        otlpHeaders: {},
        otlpTimeoutMs: 10_000,
        serviceName: 'animal-store-api',
        resourceAttributes: {},
        sampler: 'parentbased_always_on',
        samplerRatio: 1,
      },
    });
    expect(a.bootstrapKeys[0]).not.toBe(b.bootstrapKeys[0]);
  });

  test('when everything is set, then it is used', () => {
    const config = loadConfig({
      HOST: '0.0.0.0',
      PORT: '8080',
      DATABASE_URL: 'postgres://u@db:5432/app',
      DATABASE_POOL_SIZE: '25',
      DATABASE_POOL_MODE: 'transaction',
      DATABASE_REPLICA_URL: 'postgres://u@replica:5432/app',
      DATABASE_REPLICA_MAX_LAG_MS: '250',
      API_KEYS: ` ${KEY} , second-key-0123456789 `,
      PGLITE_DATA_DIR: 'tmp/pg',
      LOG_LEVEL: 'debug',
      WEB_CONCURRENCY: '2',
      METRICS_TOKEN: 'metrics-token-0123456789',
      RATE_LIMIT: '100/1s',
      IDEMPOTENCY_TTL_SECONDS: '3600',
      HEADERS_TIMEOUT_MS: '5000',
      REQUEST_TIMEOUT_MS: '20000',
      KEEP_ALIVE_TIMEOUT_MS: '75000',
      ON_UNSAFE_DATABASE: 'warn',
      ALLOW_STUBS: 'false',
      VALIDATE_RESPONSES: 'log',
      CORS_ORIGINS: 'https://app.example.com, http://localhost:5173',
      MCP_ENABLED: 'true',
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      OTEL_TRACES_EXPORTER: 'otlp,console',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=shop,authorization=Basic%20abc',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-tenant=pets',
      OTEL_EXPORTER_OTLP_TIMEOUT: '5000',
      OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '3000',
      OTEL_SERVICE_NAME: 'pets-eu',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=production,service.name=ignored,team=catalogue%20team',
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0.25',
    });
    expect(config).toEqual({
      host: '0.0.0.0',
      port: 8080,
      databaseUrl: 'postgres://u@db:5432/app',
      databaseFollowsPrimary: false,
      databaseFailoverTimeoutMs: 30_000,
      pgliteDataDir: path.resolve('tmp/pg'),
      databasePoolSize: 25,
      databasePoolMode: 'transaction',
      databaseReplicaUrl: 'postgres://u@replica:5432/app',
      databaseReplicaMaxLagMs: 250,
      bootstrapKeys: [KEY, 'second-key-0123456789'],
      bootstrapKeyGenerated: false,
      logLevel: 'debug',
      webConcurrency: 2,
      metricsToken: 'metrics-token-0123456789',
      rateLimit: { requests: 100, windowSeconds: 1 },
      idempotencyTtlSeconds: 3600,
      headersTimeoutMs: 5000,
      requestTimeoutMs: 20000,
      keepAliveTimeoutMs: 75000,
      onUnsafeDatabase: 'warn',
      allowStubs: false,
      validateResponses: 'log',
      corsOrigins: ['https://app.example.com', 'http://localhost:5173'],
      mcpEnabled: true,
      webhookAllowPrivateTargets: true,
      tracing: {
        exporters: ['otlp', 'console'],
        otlpEndpoint: 'http://collector:4318/v1/traces',
        otlpHeaders: { 'x-tenant': 'pets', authorization: 'Basic abc' },
        otlpTimeoutMs: 3000,
        serviceName: 'pets-eu',
        resourceAttributes: { 'deployment.environment.name': 'production', 'service.name': 'ignored', team: 'catalogue team' },
        sampler: 'parentbased_traceidratio',
        samplerRatio: 0.25,
      },
    });
  });

  describe('OpenTelemetry (OTEL_*)', () => {
    const tracingOf = (env: NodeJS.ProcessEnv) => loadConfig({ API_KEYS: KEY, ...env }).tracing;

    test('when OTEL_TRACES_EXPORTER is unset, none, or OTEL_SDK_DISABLED is true, then tracing is off', () => {
      expect(tracingOf({}).exporters).toEqual([]);
      expect(tracingOf({ OTEL_TRACES_EXPORTER: 'none' }).exporters).toEqual([]);
      expect(tracingOf({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'TRUE' }).exporters).toEqual([]);
      expect(tracingOf({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'false' }).exporters).toEqual(['otlp']);
    });

    test.each([
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }, 'http://collector:4318/v1/traces'],
      [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otel.example.com/ingest' }, 'https://otel.example.com/ingest/v1/traces'],
      [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom/path' }, 'http://collector:4318/custom/path'],
      [
        { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/v1/traces' },
        'http://b:4318/v1/traces',
      ],
    ])(
      'when the endpoint variables are %j, then spans go to %s (the traces variable as given, the base one with v1/traces)',
      (env, url) => {
        expect(tracingOf(env).otlpEndpoint).toBe(url);
      },
    );

    test('when OTEL_SERVICE_NAME is unset, then service.name of OTEL_RESOURCE_ATTRIBUTES names the service, else the package name', () => {
      expect(tracingOf({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=from-attributes' }).serviceName).toBe('from-attributes');
      expect(tracingOf({}).serviceName).toBe('animal-store-api');
    });

    test('when an OTEL_ variable has a value this service cannot use, then start-up stops naming each one', () => {
      expect(
        problemsOf({
          API_KEYS: KEY,
          OTEL_TRACES_EXPORTER: 'otlp,zipkin,jaeger',
          OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318',
          OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
          OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant,=x,ok=%E0%A4%A',
          OTEL_EXPORTER_OTLP_TIMEOUT: '10s',
          OTEL_RESOURCE_ATTRIBUTES: 'team',
          OTEL_TRACES_SAMPLER: 'jaeger_remote',
        }),
      ).toEqual([
        'OTEL_TRACES_EXPORTER must be none, otlp or console (comma-separated), got zipkin, jaeger',
        'OTEL_RESOURCE_ATTRIBUTES entry 1 must be key=value with the value percent-encoded, got "team"',
        'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be http/protobuf (the OTLP/HTTP exporter this service ships), got "grpc"',
        'OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL, got "collector:4318"',
        'OTEL_EXPORTER_OTLP_HEADERS entry 1 must be key=value with the value percent-encoded, got "x-tenant"',
        'OTEL_EXPORTER_OTLP_HEADERS entry 2 must be key=value with the value percent-encoded, got "=x"',
        'OTEL_EXPORTER_OTLP_HEADERS entry 3 must be key=value with the value percent-encoded, got "ok=%E0%A4%A"',
        'OTEL_EXPORTER_OTLP_TIMEOUT must be an integer from 1 to 9999999, got "10s"',
        'OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio, got "jaeger_remote"',
      ]);
    });

    test.each(['1.5', '-0.1', 'half', '0x1'])('when OTEL_TRACES_SAMPLER_ARG=%j for a ratio sampler, then it is refused', (arg) => {
      expect(problemsOf({ API_KEYS: KEY, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: arg })).toEqual([
        `OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 for traceidratio, got ${JSON.stringify(arg)}`,
      ]);
    });

    test('when OTEL_TRACES_SAMPLER_ARG is set for a sampler that takes none, then it is ignored, as the specification says', () => {
      expect(tracingOf({ OTEL_TRACES_SAMPLER: 'always_on', OTEL_TRACES_SAMPLER_ARG: 'anything' })).toMatchObject({
        sampler: 'always_on',
        samplerRatio: 1,
      });
    });
  });

  test('when the pool settings are wrong, or a replica is named without DATABASE_URL, then each problem is named', () => {
    expect(
      problemsOf({
        DATABASE_POOL_SIZE: '0',
        DATABASE_POOL_MODE: 'statement',
        DATABASE_REPLICA_URL: 'http://replica/x',
        DATABASE_REPLICA_MAX_LAG_MS: '-1',
        API_KEYS: KEY,
      }),
    ).toEqual([
      'DATABASE_POOL_SIZE must be an integer from 1 to 1000, got "0"',
      'DATABASE_POOL_MODE must be session or transaction, got "statement"',
      'DATABASE_REPLICA_URL needs DATABASE_URL: the embedded PostgreSQL has no replica',
      'DATABASE_REPLICA_URL must start with postgres:// or postgresql://, got http://',
      'DATABASE_REPLICA_MAX_LAG_MS must be an integer from 0 to 600000, got "-1"',
    ]);
  });

  test('when PORT is 0, then the OS picks a free port', () => {
    expect(loadConfig({ PORT: '0', API_KEYS: KEY }).port).toBe(0);
  });

  test('when several variables are wrong, then every problem is named at once', () => {
    expect(
      problemsOf({
        PORT: '70000',
        DATABASE_URL: 'mysql://x/y',
        API_KEYS: `${KEY},,short,bad key with spaces`,
        HOST: '',
        LOG_LEVEL: 'loud',
      }),
    ).toEqual([
      'HOST is set but empty',
      'PORT must be an integer from 0 to 65535, got "70000"',
      'DATABASE_URL must start with postgres:// or postgresql://, got mysql://',
      'API_KEYS entry 2 is empty',
      'API_KEYS entry 3 is shorter than 16 characters',
      'API_KEYS entry 4 has characters a bearer token cannot carry (allowed: A-Z a-z 0-9 - . _ ~ + / and trailing =)',
      'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"',
    ]);
  });

  test("when an API_KEYS entry or METRICS_TOKEN starts with the managed keys' prefix asa_, then it is refused (it would be read as a managed key)", () => {
    expect(problemsOf({ API_KEYS: `${KEY},asa_0123456789abcdefghij`, METRICS_TOKEN: 'asa_metrics-token-012345' })).toEqual([
      'API_KEYS entry 2 starts with asa_, the prefix of managed keys (npm run keys): an API_KEYS key must not',
      'METRICS_TOKEN starts with asa_, the prefix of managed API keys: choose another token',
    ]);
  });

  test.each(['', 'abc', '3000.5', '-1', ' 3000', '0x10'])('when PORT=%j, then it is refused', (port) => {
    expect(problemsOf({ PORT: port, API_KEYS: KEY })[0]).toMatch(/^PORT must be an integer/);
  });

  test.each([
    ['not a url'],
    ['localhost:5432/db'],
    ['postgres://u@h1:5432,,h2:5432/db'],
    ['postgres://u@h1:5432,h2:x/db?target_session_attrs=primary'],
  ])('when DATABASE_URL=%j, then it is refused', (url) => {
    expect(problemsOf({ DATABASE_URL: url, API_KEYS: KEY })).toEqual([expect.stringMatching(/^DATABASE_URL is not a URL/)]);
  });

  test.each([
    ['postgres://u@db1:5432,db2:5433/app?target_session_attrs=primary', true],
    ['postgresql://u:p@db1,db2/app?target_session_attrs=read-write&sslmode=require', true],
    ['postgres://u@db:5432/app?target_session_attrs=primary', true],
    ['postgres://u@db:5432/app', false],
    ['postgres:///app?host=/var/run/postgresql', false],
  ])('when DATABASE_URL=%j, then it is taken, following the primary: %s', (url, follows) => {
    const config = loadConfig({ DATABASE_URL: url, API_KEYS: KEY });
    expect(config).toMatchObject({ databaseUrl: url, databaseFollowsPrimary: follows });
  });

  test('when DATABASE_URL lists several hosts without target_session_attrs, or asks for a standby, then it is refused with the form to use', () => {
    expect(problemsOf({ DATABASE_URL: 'postgres://u@db1:5432,db2:5432/app', API_KEYS: KEY })).toEqual([
      'DATABASE_URL lists 2 hosts without target_session_attrs: add ?target_session_attrs=primary, so that the service connects to the one that takes writes',
    ]);
    expect(problemsOf({ DATABASE_URL: 'postgres://u@db1,db2/app?target_session_attrs=standby', API_KEYS: KEY })).toEqual([
      'DATABASE_URL: target_session_attrs must be one of primary, read-write, got "standby"',
    ]);
    const replica = { DATABASE_URL: 'postgres://u@db/app', API_KEYS: KEY };
    expect(problemsOf({ ...replica, DATABASE_REPLICA_URL: 'postgres://u@r1,r2/app?target_session_attrs=primary' })).toEqual([
      'DATABASE_REPLICA_URL: target_session_attrs must be one of any, standby, prefer-standby, read-only, got "primary"',
    ]);
    const replicas = 'postgres://u@r1:5432,r2:5432/app?target_session_attrs=prefer-standby';
    expect(loadConfig({ ...replica, DATABASE_REPLICA_URL: replicas }).databaseReplicaUrl).toBe(replicas);
  });

  test('when NODE_ENV=production and DATABASE_URL is unset, then it is refused: the embedded PostgreSQL is a development dependency', () => {
    expect(problemsOf({ NODE_ENV: 'production', API_KEYS: KEY })).toEqual([
      'DATABASE_URL must be set when NODE_ENV=production: the embedded PostgreSQL (PGlite) is for development and is not installed with --omit=dev',
    ]);
    expect(loadConfig({ NODE_ENV: 'production', API_KEYS: KEY, DATABASE_URL: 'postgres://u@db:5432/d' }).databaseUrl).toBe(
      'postgres://u@db:5432/d',
    );
    expect(loadConfig({ NODE_ENV: 'development', API_KEYS: KEY }).databaseUrl).toBeUndefined();
  });

  test('when WEB_CONCURRENCY is outside 1 to 64, or above 1 without DATABASE_URL, then it is refused', () => {
    expect(problemsOf({ WEB_CONCURRENCY: '0', API_KEYS: KEY })).toEqual(['WEB_CONCURRENCY must be an integer from 1 to 64, got "0"']);
    expect(problemsOf({ WEB_CONCURRENCY: '2', API_KEYS: KEY })).toEqual([
      'WEB_CONCURRENCY above 1 needs DATABASE_URL: the embedded PostgreSQL serves one process',
    ]);
  });

  test.each([
    ['6000/1m', { requests: 6000, windowSeconds: 60 }],
    ['100/s', { requests: 100, windowSeconds: 1 }],
    ['50000/1h', { requests: 50000, windowSeconds: 3600 }],
    ['10/30s', { requests: 10, windowSeconds: 30 }],
    ['off', undefined],
  ])('when RATE_LIMIT=%s, then it is read as %j', (text, expected) => {
    expect(loadConfig({ RATE_LIMIT: text, API_KEYS: KEY }).rateLimit).toEqual(expected);
  });

  test.each(['', '0/1m', '100', '100/1d', '-5/1m', '1e3/1m', 'OFF', '100/0m'])('when RATE_LIMIT=%j, then it is refused', (text) => {
    expect(problemsOf({ RATE_LIMIT: text, API_KEYS: KEY })[0]).toMatch(/^RATE_LIMIT must be <requests>\/<window>/);
  });

  test('when a timeout is out of range, or the request timeout is below the headers timeout, then it is refused', () => {
    expect(problemsOf({ HEADERS_TIMEOUT_MS: '50', KEEP_ALIVE_TIMEOUT_MS: 'x', IDEMPOTENCY_TTL_SECONDS: '10', API_KEYS: KEY })).toEqual([
      'IDEMPOTENCY_TTL_SECONDS must be an integer from 60 to 2592000, got "10"',
      'HEADERS_TIMEOUT_MS must be an integer from 100 to 600000, got "50"',
      'KEEP_ALIVE_TIMEOUT_MS must be an integer from 100 to 3600000, got "x"',
    ]);
    expect(problemsOf({ HEADERS_TIMEOUT_MS: '5000', REQUEST_TIMEOUT_MS: '1000', API_KEYS: KEY })).toEqual([
      'REQUEST_TIMEOUT_MS (1000) must not be below HEADERS_TIMEOUT_MS (5000)',
    ]);
  });

  test('when ALLOW_STUBS is not true or false, or VALIDATE_RESPONSES not off, log or enforce, then each is refused', () => {
    expect(problemsOf({ ALLOW_STUBS: 'no', VALIDATE_RESPONSES: 'strict', API_KEYS: KEY })).toEqual([
      'ALLOW_STUBS must be true or false, got "no"',
      'VALIDATE_RESPONSES must be one of off, log, enforce, got "strict"',
    ]);
  });

  test('when HOST names this machine (localhost, ::1, 127.x.x.x), then it is loopback; any other address is not', () => {
    const hosts = ['localhost', '::1', '127.0.0.1', '127.9.8.7', '0.0.0.0', '::', '10.0.0.1', '127.0.0.1.example', 'localhost.x'];
    expect(hosts.filter(isLoopbackHost)).toEqual(['localhost', '::1', '127.0.0.1', '127.9.8.7']);
  });

  test('when MCP_ENABLED is neither true nor false, then it is refused by name', () => {
    expect(problemsOf({ MCP_ENABLED: 'yes', API_KEYS: KEY })).toEqual(['MCP_ENABLED must be true or false, got "yes"']);
  });

  test('when CORS_ORIGINS holds something other than * or origins (scheme, host and port only), then each such entry is refused', () => {
    expect(loadConfig({ CORS_ORIGINS: '*', API_KEYS: KEY }).corsOrigins).toBe('*');
    expect(
      problemsOf({ CORS_ORIGINS: 'https://app.example.com/,app.example.com,ftp://x.example,https://ok.example:8443,*', API_KEYS: KEY }),
    ).toEqual([
      'CORS_ORIGINS entry 1 must be an origin such as https://app.example.com (scheme, host and port only, no path or trailing slash) or the whole value *, got "https://app.example.com/"',
      'CORS_ORIGINS entry 2 must be an origin such as https://app.example.com (scheme, host and port only, no path or trailing slash) or the whole value *, got "app.example.com"',
      'CORS_ORIGINS entry 3 must be an origin such as https://app.example.com (scheme, host and port only, no path or trailing slash) or the whole value *, got "ftp://x.example"',
      'CORS_ORIGINS entry 5 must be an origin such as https://app.example.com (scheme, host and port only, no path or trailing slash) or the whole value *, got "*"',
    ]);
  });

  test('when ON_UNSAFE_DATABASE is neither refuse nor warn, then it is refused', () => {
    expect(problemsOf({ ON_UNSAFE_DATABASE: 'ignore', API_KEYS: KEY })).toEqual([
      'ON_UNSAFE_DATABASE must be refuse or warn, got "ignore"',
    ]);
  });

  test('when API_KEYS is set but empty, then it is refused rather than running without keys', () => {
    expect(problemsOf({ API_KEYS: '' })).toEqual(['API_KEYS entry 1 is empty']);
  });
});

describe('the configuration is documented where a newcomer looks', () => {
  const read = (file: string) => readFileSync(path.join(projectRoot, file), 'utf8');
  // `env.NAME` or integerVar(env, 'NAME', …): every variable the files of src/config/ read.
  const configSource = readdirSync(path.join(projectRoot, 'src', 'config'))
    .filter((name) => name.endsWith('.ts'))
    .map((name) => read(`src/config/${name}`))
    .join('\n');
  const readByConfig = [
    ...new Set([...configSource.matchAll(/env\.([A-Z_]+)|integerVar\(env, '([A-Z_]+)'/g)].map((m) => m[1] ?? m[2])),
  ].sort();

  test('when src/config/ reads a variable, then the configuration table (docs/operations.md) lists it, and lists no other', () => {
    const table = [...read('docs/operations.md').matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]).sort();
    expect(table).toEqual(readByConfig);
  });

  test('when src/config/ reads a variable, then .env.example lists it', () => {
    const listed = [...new Set([...read('.env.example').matchAll(/^#? ?([A-Z_]+)=/gm)].map((m) => m[1]))].sort();
    expect(listed).toEqual(readByConfig);
  });
});
