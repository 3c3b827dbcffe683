// Word wrapping for help and other text meant for a terminal.

/**
 * `text` in lines of at most `width` characters, broken between words; each line of the text
 * (`\n`) starts a new line. A word longer than a whole line is cut, so that no line is ever wider.
 */
export function wrapText(text: string, width: number): string[] {
  return text.split('\n').flatMap((paragraph) => {
    const lines: string[] = [];
    let line = '';
    for (const word of paragraph.split(/\s+/).filter((part) => part !== '')) {
      if (line === '') line = word;
      else if (line.length + 1 + word.length <= width) line += ` ${word}`;
      else {
        lines.push(line);
        line = word;
      }
      while (line.length > width) {
        lines.push(line.slice(0, width));
        line = line.slice(width);
      }
    }
    return [...lines, line];
  });
}
