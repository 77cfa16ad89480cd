/**
 * How values read on the page: times in the reader's time zone with
 * milliseconds (events of one task are often milliseconds apart), hashes
 * shortened where a table has no room (the full value is always one step
 * away), and values of any JSON type as one line.
 *
 * @module
 */

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit', fractionalSecondDigits: 3, hour12: false });
const dateFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });

export function formatTime(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : timeFormat.format(date);
}

export function formatDate(iso: string | undefined): string {
  if (!iso) return '';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : dateFormat.format(date);
}

export function formatDateTime(iso: string | undefined): string {
  if (!iso) return '';
  return `${formatDate(iso)} ${formatTime(iso)}`;
}

export function shortHash(hash: string | undefined): string {
  return hash ? `${hash.slice(0, 12)}…` : '';
}

export function shortId(id: string): string {
  return id.length > 13 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id;
}

export function oneLine(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/**
 * The time a UUIDv7 was minted (its first 48 bits are Unix milliseconds), for
 * a checkpoint whose content cannot be read; undefined for other ids.
 */
export function uuidv7Time(id: string): string | undefined {
  const match = /^([0-9a-f]{8})-([0-9a-f]{4})-7/i.exec(id);
  if (!match) return undefined;
  return new Date(Number.parseInt(match[1]! + match[2]!, 16)).toISOString();
}
