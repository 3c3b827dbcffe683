// Help as plain text for people at a terminal: usage, what the command does, then titled sections
// of terms (flags, commands, exit codes) with their descriptions in a second column. Everything is
// wrapped to the terminal, at most 100 columns, so that no line breaks where the terminal chooses.
import { wrapText } from './text-wrap.ts';

export const HELP_WIDTH = 100;
const INDENT = '  ';
/** Terms longer than this put their description on the next line instead of widening the column. */
const MAX_TERM = 30;

export interface HelpEntry {
  readonly term: string;
  /** Plain text; `\n` starts a new line. */
  readonly description: string;
}

export interface HelpSection {
  readonly title: string;
  readonly text?: string;
  readonly entries?: readonly HelpEntry[];
}

export interface Help {
  /** One line per form of the command, without "Usage:". */
  readonly usage: readonly string[];
  readonly about: string;
  readonly sections: readonly HelpSection[];
}

/** The width to format for: a narrower terminal's, else 100 columns (also when not a terminal). */
export function helpWidth(stream: { readonly isTTY?: boolean; readonly columns?: number }): number {
  return stream.isTTY === true && stream.columns !== undefined && stream.columns >= 40 ? Math.min(HELP_WIDTH, stream.columns) : HELP_WIDTH;
}

export function formatHelp(help: Help, width = HELP_WIDTH): string {
  const lines: string[] = [];
  help.usage.forEach((usage, index) => {
    const label = index === 0 ? 'Usage: ' : '       ';
    lines.push(...hanging(label, usage, width, label.length + 2));
  });
  lines.push('', ...wrapText(help.about, width));
  const termWidth = Math.min(MAX_TERM, Math.max(0, ...help.sections.flatMap((section) => section.entries ?? []).map((entry) => entry.term.length)));
  const column = INDENT.length + termWidth + 2;
  for (const section of help.sections) {
    lines.push('', section.title);
    if (section.text !== undefined) lines.push(...wrapText(section.text, width - INDENT.length).map((line) => INDENT + line));
    for (const entry of section.entries ?? []) {
      const description = wrapText(entry.description, width - column);
      const fits = entry.term.length <= termWidth;
      if (!fits) lines.push(INDENT + entry.term);
      description.forEach((line, index) => {
        const lead = index === 0 && fits ? (INDENT + entry.term).padEnd(column) : ' '.repeat(column);
        lines.push(lead + line);
      });
    }
  }
  return `${lines.map((line) => line.trimEnd()).join('\n')}\n`;
}

/** `label` then `text`, its continuation lines indented by `indent`. */
function hanging(label: string, text: string, width: number, indent: number): string[] {
  const [first = '', ...rest] = wrapText(text, width - label.length);
  const continued = wrapText(rest.join(' '), width - indent);
  return [label + first, ...(rest.length === 0 ? [] : continued.map((line) => ' '.repeat(indent) + line))];
}
