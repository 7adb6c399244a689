/** True when some `$ref` in the value points outside its own document (`./schemas/Pet.yaml#/…`). Imports nothing: the spec diff shares it. */
export function hasExternalRef(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasExternalRef);
  if (typeof value !== 'object' || value === null) return false;
  for (const [key, v] of Object.entries(value)) {
    if (key === '$ref' && typeof v === 'string' && !v.startsWith('#')) return true;
    if (hasExternalRef(v)) return true;
  }
  return false;
}
