/** How one variable's value is read and checked: every reader of the configuration uses these. */

/** An integer variable within [min, max]; unset: `fallback`; anything else is a problem named (and `fallback`). */
export function integerVar(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, problems: string[]): number {
  const text = env[name];
  if (text === undefined) return fallback;
  if (!/^[0-9]{1,10}$/.test(text) || Number(text) < min || Number(text) > max) {
    problems.push(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(text)}`);
    return fallback;
  }
  return Number(text);
}
