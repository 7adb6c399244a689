/**
 * npm run spec:diff -- OLD NEW [--format text|json|markdown]
 * Prints every change from OLD to NEW with its class. Exit 0: nothing breaking;
 * 1: something breaking; 2: the documents could not be compared.
 */
import { DocumentError, diffDocuments, formatChanges, loadDocument } from './contract/diff';

async function main(argv: string[]): Promise<number> {
  const files: string[] = [];
  let format: 'text' | 'json' | 'markdown' = 'text';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '--format' || arg.startsWith('--format=')) {
      const value = arg.includes('=') ? arg.split('=')[1] : argv[++i];
      if (value !== 'text' && value !== 'json' && value !== 'markdown') {
        process.stderr.write(`--format must be text, json or markdown, got ${JSON.stringify(value)}\n`);
        return 2;
      }
      format = value;
    } else {
      files.push(arg);
    }
  }
  const [oldFile, newFile] = files;
  if (files.length !== 2 || oldFile === undefined || newFile === undefined) {
    process.stderr.write('usage: npm run spec:diff -- OLD NEW [--format text|json|markdown]\n');
    return 2;
  }
  try {
    const [oldDoc, newDoc] = await Promise.all([loadDocument(oldFile), loadDocument(newFile)]);
    const changes = diffDocuments(oldDoc, newDoc);
    process.stdout.write(`${formatChanges(changes, format, `${oldFile} → ${newFile}`)}\n`);
    return changes.some((c) => c.class === 'breaking') ? 1 : 0;
  } catch (err) {
    if (!(err instanceof DocumentError)) throw err;
    process.stderr.write(`cannot compare: ${err.message}\n`);
    return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`cannot compare: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);
