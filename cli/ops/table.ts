/**
 * Plain-text tables and ages for people reading a terminal. No colours or box drawing: the output is
 * pasted into tickets and chat as often as it is read in place.
 */

export interface Column<Row> {
  header: string;
  value: (row: Row) => string;
  /** Right-align (numbers, ages). */
  align?: 'left' | 'right';
  /** Longer cells are cut with an ellipsis so one long value cannot push the table off screen. */
  maxWidth?: number;
}

export function renderTable<Row>(columns: readonly Column<Row>[], rows: readonly Row[]): string {
  const cells = rows.map((row) => columns.map((c) => clip(oneLine(c.value(row)), c.maxWidth)));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((r) => r[i].length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => (columns[i].align === 'right' ? v.padStart(widths[i]) : v.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header.toUpperCase())), ...cells.map(line)].join('\n');
}

/** A compact age: `45s`, `12m`, `3h 05m`, `2d 04h`. Negative spans (clock skew) read as `0s`. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(h / 24)}d ${String(h % 24).padStart(2, '0')}h`;
}

/** Key/value lines with the values aligned, for `show`. Empty values are printed as `-`. */
export function renderFields(fields: ReadonlyArray<readonly [string, string | undefined]>): string {
  const width = Math.max(...fields.map(([k]) => k.length));
  return fields.map(([k, v]) => `${`${k}:`.padEnd(width + 1)}  ${v === undefined || v === '' ? '-' : v}`).join('\n');
}

function oneLine(text: string): string {
  // A reason or provider detail with a newline would break the columns.
  return text.replace(/\s*[\r\n]+\s*/g, ' ');
}

function clip(text: string, max?: number): string {
  return max !== undefined && text.length > max ? `${text.slice(0, Math.max(0, max - 1)).trimEnd()}…` : text;
}
