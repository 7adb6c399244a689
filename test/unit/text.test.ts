import { PROSE_WIDTH, wrapMarkdown } from '../../scripts/lib/text';

// The bench writes docs/bench-results.md through wrapMarkdown: every line it writes, whichever
// section writes it, keeps the page's prose readable whole (test/unit/docsPages.test.ts refuses
// prose lines over 200 characters), and the Markdown renders as it would on one line.

const words = (n: number, word = 'animal') => Array.from({ length: n }, (_, i) => `${word}${i}`).join(' ');

describe('wrapMarkdown', () => {
  test('when a paragraph is longer than the width, then it is broken at spaces into lines within it, its words in order', () => {
    const paragraph = words(60);
    const lines = wrapMarkdown(paragraph);
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(PROSE_WIDTH);
    expect(lines.join(' ')).toBe(paragraph);
  });

  test('when a list item is longer than the width, then its continuation lines are indented under its text', () => {
    const [first, ...rest] = wrapMarkdown(`- ${words(60)}`);
    expect(first).toMatch(/^- animal0 /);
    expect(rest.length).toBeGreaterThan(0);
    for (const line of rest) expect(line).toMatch(/^ {2}animal\d+/);
    const [numbered, next] = wrapMarkdown(`12. ${words(60)}`);
    expect(numbered).toMatch(/^12\. animal0 /);
    expect(next).toMatch(/^ {4}animal\d+/);
  });

  test('when a table row, a heading or an indented line is longer than the width, then it stays one line', () => {
    for (const line of [`| ${words(40, 'cell | ')} |`, `## ${words(40)}`, `    ${words(40)}`]) expect(wrapMarkdown(line)).toEqual([line]);
  });

  test('when the text holds several lines, then each is wrapped on its own, blank lines kept', () => {
    const text = `## Heading\n\n${words(60)}\n| a | b |\n`;
    const lines = wrapMarkdown(text);
    expect(lines[0]).toBe('## Heading');
    expect(lines[1]).toBe('');
    expect(lines.slice(-2)).toEqual(['| a | b |', '']);
    expect(lines.slice(2, -2).join(' ')).toBe(words(60));
  });
});
