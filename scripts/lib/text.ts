/** The width prose lines of a generated page keep to: readable in an editor and a diff (docs/ allows 200). */
export const PROSE_WIDTH = 120;

/**
 * `text` broken at spaces into lines of at most `width` characters (a word longer than that
 * stands alone); every line after the first starts with `indent`, so that a Markdown list
 * item's continuation stays under it. A paragraph renders the same, on one line or on several.
 */
export function wrapProse(text: string, { indent = '', width = PROSE_WIDTH } = {}): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else line = line ? `${line} ${word}` : word;
  }
  return [...lines, line];
}

/**
 * The lines of a generated Markdown page as written: each prose line over `width` broken by
 * wrapProse, a list item's continuation indented under its text. Headings, table rows and
 * indented (preformatted) lines stay whole: each is one line in Markdown.
 */
export function wrapMarkdown(text: string, width = PROSE_WIDTH): string[] {
  return text.split('\n').flatMap((line) => {
    if (line.length <= width || /^[|#\s]/.test(line)) return [line];
    const item = /^(?:[-*]|\d+\.) /.exec(line);
    return wrapProse(line, { indent: ' '.repeat(item?.[0].length ?? 0), width });
  });
}
