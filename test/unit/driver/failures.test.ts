import { failuresOf } from '../../../scripts/driver/failures';

// What upstream's runner (patches/postgres/upstream/tests/test.js, exit()) prints for a failed and a never-finished
// test, then its verdict.
const REPORT = [
  '⛔️ Connect using uri at line 48 failed ',
  "Error: 1 != 'x'",
  '    at /tmp/suite/postgres/cjs/tests/test.js:47:15',
  '⛔️ listen reconnect at line 1012 never finished ',
  '⚠️ Not good',
].join('\n');

describe('the failing tests of a postgres.js suite run, for CI', () => {
  test('when upstream reported failed tests, then each is a failure with its name, line and error, and the verdict is left out', () => {
    expect(failuresOf('cjs/tests', REPORT, undefined)).toEqual([
      {
        file: 'postgres.js suite (cjs/tests/index.js)',
        test: 'Connect using uri at line 48 failed',
        error: "Error: 1 != 'x' | at /tmp/suite/postgres/cjs/tests/test.js:47:15",
      },
      {
        file: 'postgres.js suite (cjs/tests/index.js)',
        test: 'listen reconnect at line 1012 never finished',
        error: 'listen reconnect at line 1012 never finished',
      },
    ]);
  });

  test('when the run was stopped before it named a test, then the failure is the run, with the last of its output', () => {
    expect(failuresOf('tests', 'bootstrap done\nError: connect ECONNREFUSED', 300_000)).toEqual([
      {
        file: 'postgres.js suite (tests/index.js)',
        test: '(the suite did not end within 300 s)',
        error: 'bootstrap done | Error: connect ECONNREFUSED',
      },
    ]);
  });

  test('when it failed without naming a test and was not stopped, then the failure says the suite failed', () => {
    expect(failuresOf('tests', 'SyntaxError: Unexpected token', undefined)[0]?.test).toBe('(the suite failed)');
  });
});
