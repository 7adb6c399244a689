/**
 * The rule table itself: its list in the docs, and a file of pairs for each of its families.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { RULES } from '../../../../scripts/spec-diff';
import { FAMILIES } from '../../../../scripts/spec-diff/rules';
import { RULES_PAGE, withRuleList } from '../../../../scripts/spec-diff/rules-doc';
import { projectRoot } from '../../../../src/paths';
import { FAMILY_FILES } from '../../../support/specDiffPairs';

describe('the spec diff rule table', () => {
  test("when docs/spec-diff.md's rule list is compared with the rule table, then they are the same (npm run docs:rules rewrites it)", () => {
    const page = readFileSync(path.join(projectRoot, RULES_PAGE), 'utf8');
    expect(page).toBe(withRuleList(page));
    for (const id of RULES.keys()) expect(page).toContain(`\`${id}\``);
  });

  test('when the families are listed, then each has a file of pairs in this folder, which checks them', () => {
    const files = FAMILIES.map((family) => path.join(__dirname, `${FAMILY_FILES[family]}.test.ts`));
    expect(files.filter((file) => !existsSync(file))).toEqual([]);
    for (const file of new Set(files))
      expect(readFileSync(file, 'utf8')).toContain(`checkPairs('${path.basename(file, '.test.ts')}', cases)`);
  });
});
