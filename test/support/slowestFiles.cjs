// A jest reporter (jest.config.ts): after every run, the slowest test files and each tier's
// total, so that a file that makes a quick tier slow is seen in the run that brings it. With
// TEST_FAILURES_FILE set, each failing test is also appended to that file as a JSON line (its file,
// its name, the first lines of its error): .ci/run's summary of every pass's failures.
// Plain CommonJS: jest loads a reporter without transforming it.
const { appendFileSync } = require('node:fs');
const process = require('node:process');

/** How many of the slowest files are printed. */
const SHOWN = 10;

/** The tier of a test file: its folder under test/. */
const tierOf = (file) => /(^|[\\/])test[\\/](unit|component|system)[\\/]/.exec(file)?.[2] ?? 'other';

/**
 * The lines printed for a run's files (`{ file, seconds }`, `file` relative to the project):
 * each tier's file count and summed seconds, then the slowest files, slowest first.
 */
function slowestFilesReport(files, shown = SHOWN) {
  const tiers = new Map();
  for (const { file, seconds } of files) {
    const tier = tiers.get(tierOf(file)) ?? { count: 0, seconds: 0 };
    tiers.set(tierOf(file), { count: tier.count + 1, seconds: tier.seconds + seconds });
  }
  const totals = [...tiers].map(([tier, { count, seconds }]) => `${tier} ${count} files ${seconds.toFixed(0)} s`);
  const slowest = [...files].sort((a, b) => b.seconds - a.seconds).slice(0, shown);
  return [
    `Test files' time, summed over workers: ${totals.join(', ')}. The slowest:`,
    ...slowest.map(({ file, seconds }) => `${seconds.toFixed(1).padStart(7)} s  ${file}`),
  ];
}

class SlowestFilesReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
  }

  onRunComplete(_contexts, results) {
    const files = results.testResults
      .filter((r) => r.perfStats && r.perfStats.end > 0)
      .map((r) => ({
        file: r.testFilePath.startsWith(this.rootDir) ? r.testFilePath.slice(this.rootDir.length + 1) : r.testFilePath,
        seconds: (r.perfStats.end - r.perfStats.start) / 1000,
      }));
    if (files.length > 1) process.stderr.write(`\n${slowestFilesReport(files).join('\n')}\n`);
    if (process.env.TEST_FAILURES_FILE) this.recordFailures(results, process.env.TEST_FAILURES_FILE);
  }

  /** Each failing test (or file that failed to run) as a JSON line: `{ file, test, error }`, the error's first lines. */
  recordFailures(results, target) {
    const relative = (file) => (file.startsWith(this.rootDir) ? file.slice(this.rootDir.length + 1) : file);
    const firstLines = (text) =>
      String(text ?? '')
        // Colours (ESC [ … m) as jest writes them.
        .replace(new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g'), '')
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean)
        .slice(0, 4)
        .join(' | ');
    const lines = results.testResults.flatMap((file) => [
      ...(file.testExecError
        ? [{ file: relative(file.testFilePath), test: '(the file failed to run)', error: firstLines(file.testExecError.message) }]
        : []),
      ...file.testResults
        .filter((t) => t.status === 'failed')
        .map((t) => ({ file: relative(file.testFilePath), test: t.fullName, error: firstLines(t.failureMessages[0]) })),
    ]);
    for (const line of lines) appendFileSync(target, `${JSON.stringify(line)}\n`);
  }
}

module.exports = SlowestFilesReporter;
module.exports.slowestFilesReport = slowestFilesReport;
