/**
 * Charts drawn by the server as inline SVG: no script, no library, readable without JavaScript. Each chart is an image
 * (role="img") named by a one-line summary; its exact numbers are in a table beside it (the page puts it there), which
 * is what a screen reader reads. Scales with its box: a phone's 390 px shows the same chart, smaller.
 * Colours are fills (presentation attributes, allowed by the admin's CSP, unlike style attributes).
 */
import { html, type Html } from '../markup/html.js';

/** Fills for series, in order: dark enough against white to see (3:1 at least), apart enough to tell. */
export const SERIES_COLOURS = ['#13233f', '#0b6e4f', '#b3541e', '#6a3d9a', '#1f78b4', '#8a1c1c', '#4a4f57', '#7a6a00'] as const;

export const seriesColour = (index: number): string => SERIES_COLOURS[index % SERIES_COLOURS.length]!;

export interface StackedSeries {
  key: string;
  label: string;
}

export interface StackedBarChart {
  /** The id of the chart's title (unique on its page). */
  id: string;
  /** The chart's name, read by assistive technology (a summary of what it shows). */
  title: string;
  /** The bars' names, left to right (days: YYYY-MM-DD). */
  categories: readonly string[];
  /** Short axis labels per category ('' leaves a bar unlabelled). */
  categoryLabels: readonly string[];
  series: readonly StackedSeries[];
  /** values[category][series]. */
  values: readonly (readonly number[])[];
}

const WIDTH = 480;
const FONT = 12;

/** A round upper bound for an axis: 1, 2, 5 × 10^n at or above the largest value (at least 1). */
export function axisMaximum(largest: number): number {
  if (largest <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(largest));
  for (const step of [1, 2, 5, 10]) if (step * power >= largest) return step * power;
  return 10 * power;
}

const round = (value: number) => Math.round(value * 10) / 10;

/** Bars standing side by side, each a stack of its series (orders per day by who prepared them). */
export function stackedBarChart(chart: StackedBarChart): Html {
  const height = 200;
  const left = 28;
  const bottom = 22;
  const top = 10;
  const plotHeight = height - top - bottom;
  const plotWidth = WIDTH - left - 4;
  const totals = chart.values.map((row) => row.reduce((sum, value) => sum + value, 0));
  const maximum = axisMaximum(Math.max(0, ...totals));
  const slot = plotWidth / Math.max(1, chart.categories.length);
  const barWidth = Math.max(1, slot * 0.7);
  const y = (value: number) => top + plotHeight - (value / maximum) * plotHeight;
  const bars = chart.values.map((row, index) => {
    let base = 0;
    const x = round(left + index * slot + (slot - barWidth) / 2);
    return row.map((value, series) => {
      if (value <= 0) return '';
      const from = y(base);
      base += value;
      const to = y(base);
      return html`<rect x="${x}" y="${round(to)}" width="${round(barWidth)}" height="${round(from - to)}" fill="${seriesColour(series)}"/>`;
    });
  });
  // Centred under its bar; the last one ends at the chart's edge (else a phone's narrow chart cuts it).
  const last = chart.categoryLabels.length - 1;
  const labels = chart.categoryLabels.map((label, index) =>
    label
      ? index === last
        ? html`<text x="${WIDTH - 4}" y="${height - 6}" text-anchor="end">${label}</text>`
        : html`<text x="${round(left + index * slot + slot / 2)}" y="${height - 6}" text-anchor="middle">${label}</text>`
      : '',
  );
  return html`<svg class="chart" role="img" aria-labelledby="${chart.id}" viewBox="0 0 ${WIDTH} ${height}" font-size="${FONT}" font-family="system-ui, sans-serif" fill="#1a1a1a" xmlns="http://www.w3.org/2000/svg">
<title id="${chart.id}">${chart.title}</title>
<line x1="${left}" y1="${top}" x2="${WIDTH - 4}" y2="${top}" stroke="#d0d4da"/>
<line x1="${left}" y1="${round(y(maximum / 2))}" x2="${WIDTH - 4}" y2="${round(y(maximum / 2))}" stroke="#d0d4da"/>
<text x="${left - 4}" y="${top + 4}" text-anchor="end">${maximum}</text>
<text x="${left - 4}" y="${round(y(maximum / 2)) + 4}" text-anchor="end">${maximum / 2}</text>
<text x="${left - 4}" y="${top + plotHeight + 4}" text-anchor="end">0</text>
${bars}
<line x1="${left}" y1="${top + plotHeight}" x2="${WIDTH - 4}" y2="${top + plotHeight}" stroke="#4a4f57"/>
${labels}
</svg>`;
}

export interface HorizontalBar {
  label: string;
  value: number;
  /** The value as shown at the bar's end ("12 units"). */
  shown: string;
}

/** One bar per row, its label above it and its value at its end (units sold per product). */
export function horizontalBarChart(id: string, title: string, bars: readonly HorizontalBar[]): Html {
  const row = 36;
  const height = Math.max(row, bars.length * row) + 4;
  const maximum = Math.max(1, ...bars.map((bar) => bar.value));
  const room = WIDTH - 90;
  const drawn = bars.map((bar, index) => {
    const top = index * row;
    const width = round(Math.max(1, (bar.value / maximum) * room));
    return html`<text x="0" y="${top + FONT + 1}">${clip(bar.label, 60)}</text>
<rect x="0" y="${top + FONT + 5}" width="${width}" height="14" fill="${seriesColour(0)}"/>
<text x="${round(width + 6)}" y="${top + FONT + 16}">${bar.shown}</text>`;
  });
  return html`<svg class="chart" role="img" aria-labelledby="${id}" viewBox="0 0 ${WIDTH} ${height}" font-size="${FONT}" font-family="system-ui, sans-serif" fill="#1a1a1a" xmlns="http://www.w3.org/2000/svg">
<title id="${id}">${title}</title>
${drawn}
</svg>`;
}

/** A legend of the series: a swatch (an SVG square, no style attribute) and its name, as a list. */
export function legend(series: readonly StackedSeries[]): Html {
  return html`<ul class="legend">${series.map(
    (entry, index) =>
      html`<li><svg width="12" height="12" viewBox="0 0 12 12" aria-hidden="true" focusable="false"><rect width="12" height="12" fill="${seriesColour(index)}"/></svg> ${entry.label}</li>`,
  )}</ul>`;
}

function clip(text: string, length: number): string {
  return text.length > length ? `${text.slice(0, length - 1)}…` : text;
}
