// A jest reporter (jest.config.ts): after every run, the slowest test files and each tier's
// total, so that a file that makes a quick tier slow is seen in the run that brings it.
// Plain CommonJS: jest loads a reporter without transforming it.
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
  }
}

module.exports = SlowestFilesReporter;
module.exports.slowestFilesReport = slowestFilesReport;
