/**
 * The target of a `Link` header's link with relation type `rel` (RFC 8288 §3: `<target>; rel="…"`,
 * one of several comma-separated links, `rel` holding one or more relation types), resolved
 * against the URL of the response that carried it; undefined when there is none.
 */
export function linkTarget(header: string | null, rel: string, responseUrl: string): URL | undefined {
  if (!header) return undefined;
  for (const [, target = '', params = ''] of header.matchAll(/<([^>]*)>((?:\s*;\s*[^;,]+)*)/g)) {
    const found = /;\s*rel\s*=\s*(?:"([^"]*)"|([^\s;,"]+))/i.exec(params);
    const types = (found?.[1] ?? found?.[2] ?? '').toLowerCase().split(/\s+/);
    if (types.includes(rel)) return new URL(target, responseUrl);
  }
  return undefined;
}

/** The next page's link (`rel="next"`). */
export const nextLink = (header: string | null, responseUrl: string): URL | undefined => linkTarget(header, 'next', responseUrl);

/** What a deprecated operation's answer says about its end. */
export interface DeprecationNotice {
  /** The operation, as its method and the spec's path: `GET /pets/{petId}`. */
  operation: string;
  /** `Deprecation` (RFC 9745: `@` and a Unix time): since when the operation is deprecated. */
  deprecation?: Date;
  /** `Sunset` (RFC 8594, an HTTP date): when it stops being served. */
  sunset?: Date;
  /** The `Link` with `rel="successor-version"`: what to call instead. */
  successor?: string;
  /** The `Link` with `rel="deprecation"`: where the deprecation is explained. */
  documentation?: string;
}

/** The notice of an answer carrying `Deprecation` or `Sunset`; undefined for any other. */
export function deprecationOf(operation: string, response: Response, url: string): DeprecationNotice | undefined {
  const deprecation = response.headers.get('deprecation');
  const sunset = response.headers.get('sunset');
  if (deprecation === null && sunset === null) return undefined;
  const at = /^@(-?\d+)$/.exec(deprecation?.trim() ?? '');
  const link = response.headers.get('link');
  return {
    operation,
    deprecation: at ? new Date(Number(at[1]) * 1000) : undefined,
    sunset: sunset === null ? undefined : new Date(sunset),
    successor: linkTarget(link, 'successor-version', url)?.href,
    documentation: linkTarget(link, 'deprecation', url)?.href,
  };
}

const warned = new Set<string>();
/** The default `onDeprecation`: one warning per operation per process (or page). */
export function warnOnce(notice: DeprecationNotice): void {
  if (warned.has(notice.operation)) return;
  warned.add(notice.operation);
  const until = notice.sunset ? `; it stops being served on ${notice.sunset.toISOString().slice(0, 10)}` : '';
  const instead = notice.successor ? `; use ${notice.successor} instead` : '';
  console.warn(`Animal Store API: ${notice.operation} is deprecated${until}${instead}`);
}
