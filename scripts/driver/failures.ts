/**
 * A failed run of postgres.js's suite as the failing tests CI's summary lists (`{ file, test, error }`, the lines
 * jest's reporter writes to TEST_FAILURES_FILE): each test upstream's runner reported on exit (`⛔️ <name> at line <n>
 * failed`, then its error), or the run itself when it named none (it did not end, or failed before its tests).
 */
export interface Failure {
  file: string;
  test: string;
  error: string;
}

/** The first four lines of `text` that say something (upstream's closing `⚠️` verdict left out), joined. */
const firstLines = (text: string) =>
  text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('⚠️'))
    .slice(0, 4)
    .join(' | ');

/** `report`: what the run printed, its ✅ marks removed; `testsDir`: where its index.js is; `timedOutMs`: when it was stopped. */
export function failuresOf(testsDir: string, report: string, timedOutMs: number | undefined): Failure[] {
  const file = `postgres.js suite (${testsDir}/index.js)`;
  const failures = report
    .split('⛔️')
    .slice(1)
    .map((part) => {
      const [head = '', ...rest] = part.trim().split('\n');
      return { file, test: head.trim(), error: firstLines(rest.join('\n')) || head.trim() };
    });
  if (failures.length > 0) return failures;
  const test = timedOutMs === undefined ? '(the suite failed)' : `(the suite did not end within ${timedOutMs / 1000} s)`;
  return [{ file, test, error: firstLines(report.split('\n').slice(-8).join('\n')) }];
}
