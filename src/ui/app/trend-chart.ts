// A small per-day chart in inline SVG — a few dozen lines instead of a chart library. One mark per
// day (a bar, or a point on a line), each with its own tooltip; the chart as a whole is an image
// with a label, and the exact numbers sit in a table under <details>, because a screen reader
// cannot read bars and nobody can read a value off a 64-pixel-high chart.
import { h, svg } from './dom.ts';

export interface TrendPoint {
  day: string;
  /** null: nothing to measure that day (not the same as 0). */
  value: number | null;
  /** A part of the bar drawn in the success colour (the successful ones of the rollouts). */
  part?: number;
}

export interface TrendChart {
  key: string;
  title: string;
  /** The table's column for the values, and for the parts if any. */
  valueLabel: string;
  partLabel?: string;
  kind: 'bar' | 'line';
  tone: 'neutral' | 'accent' | 'failure';
  format: (value: number) => string;
  points: TrendPoint[];
}

const WIDTH = 300;
const HEIGHT = 64;
const TOP = 4;

export function trendChart(chart: TrendChart): HTMLElement {
  const scale = scaleOf(chart);
  const { highest } = scale;
  const first = chart.points[0]?.day ?? '';
  const last = chart.points.at(-1)?.day ?? '';
  const summary =
    `${chart.title}, ${first} to ${last}: ` +
    (highest === undefined || highest.value === 0 ? 'none' : `highest ${chart.format(highest.value)} on ${highest.day}`);
  const path = linePath(chart.points, scale);
  return h(
    'figure',
    { class: `trend ${chart.tone}`, 'data-chart': chart.key },
    h('figcaption', {}, chart.title),
    svg(
      'svg',
      { class: 'trend-chart', viewBox: `0 0 ${WIDTH} ${HEIGHT}`, width: WIDTH, height: HEIGHT, role: 'img', 'aria-label': summary },
      svg('title', {}, summary),
      svg('line', { class: 'baseline', x1: 0, y1: HEIGHT - 0.5, x2: WIDTH, y2: HEIGHT - 0.5 }),
      chart.kind === 'line' && path !== '' ? svg('path', { class: 'line', d: path.trim() }) : null,
      ...chart.points.map((point, index) => dayMark(chart, point, index, scale)),
    ),
    h('div', { class: 'axis' }, h('span', {}, first), h('span', {}, highest === undefined ? '' : `max ${chart.format(highest.value)}`), h('span', {}, last)),
    numbersByDay(chart),
  );
}

type MeasuredPoint = TrendPoint & { value: number };

/** Where a chart's marks go: a day's width, and the height of a value. */
interface Scale {
  readonly highest: MeasuredPoint | undefined;
  readonly step: number;
  readonly y: (value: number) => number;
}

function scaleOf(chart: TrendChart): Scale {
  const measured = chart.points.filter((point): point is MeasuredPoint => point.value !== null);
  const highest = measured.reduce<MeasuredPoint | undefined>((best, point) => (best === undefined || point.value > best.value ? point : best), undefined);
  // A flat series of zeros is drawn on the baseline, not scaled up to fill the chart.
  const max = highest === undefined || highest.value === 0 ? 1 : highest.value;
  return { highest, step: WIDTH / Math.max(1, chart.points.length), y: (value: number) => HEIGHT - (value / max) * (HEIGHT - TOP) };
}

/** One day's mark: its tooltip, the area that shows it, and its bar (with its part) or point. */
function dayMark(chart: TrendChart, point: TrendPoint, index: number, { step, y }: Scale): SVGElement {
  const x = index * step;
  const tooltip = `${point.day}: ${chart.valueLabel} ${point.value === null ? '—' : chart.format(point.value)}` + (chart.partLabel === undefined ? '' : `, ${chart.partLabel} ${point.part ?? 0}`);
  const shapes: SVGElement[] = [svg('rect', { class: 'hit', x, y: 0, width: step, height: HEIGHT })];
  if (point.value !== null && chart.kind === 'bar') {
    const width = Math.max(1, step * 0.8);
    shapes.push(svg('rect', { class: 'bar', x: x + (step - width) / 2, y: y(point.value), width, height: HEIGHT - y(point.value) }));
    if (point.part !== undefined) shapes.push(svg('rect', { class: 'part', x: x + (step - width) / 2, y: y(point.part), width, height: HEIGHT - y(point.part) }));
  }
  if (point.value !== null && chart.kind === 'line') shapes.push(svg('circle', { class: 'point', cx: x + step / 2, cy: y(point.value), r: 2.5 }));
  return svg('g', { class: 'mark', 'data-day': point.day, 'data-value': point.value ?? '' }, svg('title', {}, tooltip), ...shapes);
}

/** The line through the days' values, with a trailing space ('' when there is none). */
function linePath(points: readonly TrendPoint[], { step, y }: Scale): string {
  // The line breaks at days without a value rather than pretending to know them.
  let path = '';
  points.forEach((point, index) => {
    if (point.value === null) return;
    path += `${path === '' || points[index - 1]?.value === null ? 'M' : 'L'}${index * step + step / 2},${y(point.value)} `;
  });
  return path;
}

/** The exact numbers, for screen readers and for anyone who wants more than the bars show. */
function numbersByDay(chart: TrendChart): HTMLElement {
  return h(
    'details',
    { 'data-key': chart.key },
    h('summary', {}, 'Numbers by day'),
    h(
      'table',
      { class: 'trend-numbers' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Day (UTC)'), h('th', { scope: 'col' }, chart.valueLabel), chart.partLabel === undefined ? null : h('th', { scope: 'col' }, chart.partLabel))),
      h(
        'tbody',
        {},
        chart.points.map((point) =>
          h(
            'tr',
            { 'data-day': point.day },
            h('th', { scope: 'row' }, point.day),
            h('td', {}, point.value === null ? '—' : chart.format(point.value)),
            chart.partLabel === undefined ? null : h('td', {}, point.part ?? 0),
          ),
        ),
      ),
    ),
  );
}
