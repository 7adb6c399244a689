/**
 * OpenTelemetry's standard variables for traces (OTEL_*), read as its specification says, with
 * this service's defaults; part of the configuration (`loadConfig`), in a file of its own.
 */
import {
  DEFAULT_SERVICE_NAME,
  SAMPLERS,
  type SamplerName,
  TRACES_EXPORTERS,
  type TracesExporter,
  type TracingConfig,
} from '../ops/tracing';
import { integerVar } from './values';

const DEFAULT_OTLP_ENDPOINT = 'http://localhost:4318/';

/**
 * `key=value,key2=value2` (the W3C Baggage octets the specification uses for
 * OTEL_RESOURCE_ATTRIBUTES and OTEL_EXPORTER_OTLP_HEADERS), values percent-decoded.
 */
function keyValues(name: string, text: string | undefined, problems: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  if (text === undefined || text.trim() === '') return out;
  text.split(',').forEach((entry, i) => {
    const at = entry.indexOf('=');
    const key = entry.slice(0, at).trim();
    let value: string | undefined;
    try {
      value = decodeURIComponent(entry.slice(at + 1).trim());
    } catch {
      value = undefined;
    }
    if (at <= 0 || key === '' || value === undefined)
      problems.push(`${name} entry ${i + 1} must be key=value with the value percent-encoded, got ${JSON.stringify(entry.trim())}`);
    else out[key] = value;
  });
  return out;
}

/** An http(s) URL, or a problem named. */
function endpointOf(name: string, text: string, problems: string[]): string {
  try {
    const url = new URL(text);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.toString();
  } catch {
    // named below
  }
  problems.push(`${name} must be an http:// or https:// URL, got ${JSON.stringify(text)}`);
  return text;
}

/** The traces endpoint: the signal's own variable as given, else the base endpoint with v1/traces (OTLP/HTTP §"Endpoint URLs"). */
function otlpEndpointOf(env: NodeJS.ProcessEnv, problems: string[]): string {
  const own = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (own !== undefined && own !== '') return endpointOf('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', own, problems);
  const base = endpointOf('OTEL_EXPORTER_OTLP_ENDPOINT', env.OTEL_EXPORTER_OTLP_ENDPOINT || DEFAULT_OTLP_ENDPOINT, problems);
  return base.endsWith('/') ? `${base}v1/traces` : `${base}/v1/traces`;
}

function exportersOf(env: NodeJS.ProcessEnv, problems: string[]): TracesExporter[] {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return [];
  const names = (env.OTEL_TRACES_EXPORTER || 'none').split(',').map((n) => n.trim().toLowerCase());
  const unknown = names.filter((n) => n !== 'none' && !(TRACES_EXPORTERS as readonly string[]).includes(n));
  if (unknown.length)
    problems.push(`OTEL_TRACES_EXPORTER must be none, ${TRACES_EXPORTERS.join(' or ')} (comma-separated), got ${unknown.join(', ')}`);
  return [...new Set(names.filter((n): n is TracesExporter => (TRACES_EXPORTERS as readonly string[]).includes(n)))];
}

function parseSampler(env: NodeJS.ProcessEnv, problems: string[]): { sampler: SamplerName; samplerRatio: number } {
  const sampler = (env.OTEL_TRACES_SAMPLER || 'parentbased_always_on').trim().toLowerCase() as SamplerName;
  if (!SAMPLERS.includes(sampler))
    problems.push(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}, got ${JSON.stringify(sampler)}`);
  const arg = env.OTEL_TRACES_SAMPLER_ARG;
  let samplerRatio = 1;
  if (sampler.endsWith('traceidratio') && arg !== undefined && arg.trim() !== '') {
    samplerRatio = Number(arg);
    if (!/^\s*[0-9.eE+-]+\s*$/.test(arg) || !(samplerRatio >= 0 && samplerRatio <= 1)) {
      problems.push(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1 for ${sampler}, got ${JSON.stringify(arg)}`);
      samplerRatio = 1;
    }
  }
  return { sampler, samplerRatio };
}

function protocolProblems(env: NodeJS.ProcessEnv): string[] {
  const given = {
    OTEL_EXPORTER_OTLP_PROTOCOL: env.OTEL_EXPORTER_OTLP_PROTOCOL,
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL,
  };
  return Object.entries(given)
    .filter(([, value]) => value !== undefined && value !== '' && value !== 'http/protobuf')
    .map(([name, value]) => `${name} must be http/protobuf (the OTLP/HTTP exporter this service ships), got ${JSON.stringify(value)}`);
}

/** OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, else OTEL_EXPORTER_OTLP_TIMEOUT (empty is unset, as the specification says), in ms. */
function timeoutOf(env: NodeJS.ProcessEnv, problems: string[]): number {
  if (env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT) return integerVar(env, 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT', 10_000, 1, 9_999_999, problems);
  if (env.OTEL_EXPORTER_OTLP_TIMEOUT) return integerVar(env, 'OTEL_EXPORTER_OTLP_TIMEOUT', 10_000, 1, 9_999_999, problems);
  return 10_000;
}

/** OpenTelemetry's standard variables for traces that this service supports; anything else is a problem named. */
export function parseTracing(env: NodeJS.ProcessEnv, problems: string[]): TracingConfig {
  const exporters = exportersOf(env, problems);
  const resourceAttributes = keyValues('OTEL_RESOURCE_ATTRIBUTES', env.OTEL_RESOURCE_ATTRIBUTES, problems);
  problems.push(...protocolProblems(env));
  return {
    exporters,
    otlpEndpoint: otlpEndpointOf(env, problems),
    otlpHeaders: {
      ...keyValues('OTEL_EXPORTER_OTLP_HEADERS', env.OTEL_EXPORTER_OTLP_HEADERS, problems),
      ...keyValues('OTEL_EXPORTER_OTLP_TRACES_HEADERS', env.OTEL_EXPORTER_OTLP_TRACES_HEADERS, problems),
    },
    otlpTimeoutMs: timeoutOf(env, problems),
    serviceName: env.OTEL_SERVICE_NAME || resourceAttributes['service.name'] || DEFAULT_SERVICE_NAME,
    resourceAttributes,
    ...parseSampler(env, problems),
  };
}
