import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { describeArgvError } from '../../src/config/argv-errors.ts';
import { formatHelp, helpWidth } from '../../src/cli/help-format.ts';
import { wrapText } from '../../src/cli/text-wrap.ts';

describe('wrapText', () => {
  it('breaks between words, keeps explicit line breaks, and cuts only words wider than a line', () => {
    expect(wrapText('one two three four', 9)).toEqual(['one two', 'three', 'four']);
    expect(wrapText('first\nsecond line', 20)).toEqual(['first', 'second line']);
    const url = `https://example.com/${'x'.repeat(30)}`;
    expect(wrapText(`see ${url} now`, 20)).toEqual(['see', 'https://example.com/', 'x'.repeat(20), `${'x'.repeat(10)} now`]);
  });
});

describe('formatHelp', () => {
  const help = {
    usage: ['tool [options] '.repeat(10).trim()],
    about: 'About '.repeat(40).trim(),
    sections: [
      {
        title: 'Options',
        entries: [
          { term: '--short', description: 'A description long enough to need a second line. '.repeat(3).trim() },
          { term: '--a-flag-with-a-name-far-too-long-for-the-column', description: 'Below it.' },
        ],
      },
    ],
  };

  it('wraps usage, text and descriptions to the width, descriptions in a column of their own', () => {
    const text = formatHelp(help, 60);
    const lines = text.split('\n');
    expect(lines.filter((line) => line.length > 60)).toEqual([]);
    expect(lines[1]).toMatch(/^ {9}\S/);
    const short = lines.findIndex((line) => line.startsWith('  --short'));
    const column = lines[short]!.indexOf('A description');
    expect(lines[short + 1]!.slice(0, column).trim()).toBe('');
    expect(lines[short + 1]![column]).not.toBe(' ');
    const long = lines.indexOf('  --a-flag-with-a-name-far-too-long-for-the-column');
    expect(lines[long + 1]).toBe(`${' '.repeat(column)}Below it.`);
  });

  it('fits a narrower terminal, never more than 100 columns', () => {
    expect(helpWidth({ isTTY: true, columns: 72 })).toBe(72);
    expect(helpWidth({ isTTY: true, columns: 200 })).toBe(100);
    expect(helpWidth({ isTTY: false, columns: 72 })).toBe(100);
  });
});

describe('describeArgvError', () => {
  const options = { 'http-port': { type: 'string' }, demo: { type: 'boolean' } } as const;
  const errorOf = (args: string[]): unknown => {
    try {
      parseArgs({ args, options, strict: true });
    } catch (error) {
      return error;
    }
    throw new Error(`parseArgs accepted ${args.join(' ')}`);
  };
  const known = Object.keys(options);

  it('names the option and what is wrong with it', () => {
    expect(describeArgvError(errorOf(['--http_port', '1']), known)).toBe('unknown option --http_port (did you mean --http-port?)');
    expect(describeArgvError(errorOf(['--verbose']), known)).toBe('unknown option --verbose');
    expect(describeArgvError(errorOf(['-x']), known)).toBe('unknown option -x');
    expect(describeArgvError(errorOf(['--http-port']), known)).toBe('--http-port needs a value');
    expect(describeArgvError(errorOf(['--http-port', '-1']), known)).toMatch(/^--http-port needs a value \(a value starting with "-" is written --http-port=-/);
    expect(describeArgvError(errorOf(['--demo=yes']), known)).toBe('--demo takes no value');
    expect(describeArgvError(errorOf(['8080']), known)).toBe('unexpected argument "8080" (options start with --)');
  });
});
