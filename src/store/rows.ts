import type { OutboxItem } from './types.js';

/** A database row, snake_case columns. */
export type Row = Record<string, unknown>;

export const toSnake = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
const toCamel = (key: string) => key.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

/** A record from a row: camelCase keys, values as stored. */
export function fromRow<T>(row: Row): T {
  const out: Row = {};
  for (const [key, value] of Object.entries(row)) out[toCamel(key)] = value;
  return out as T;
}

export function outboxFromRow(row: Row): OutboxItem {
  const { kind: _kind, ...item } = fromRow<OutboxItem & { payload: string | object; kind: string }>(row);
  return {
    ...item,
    payload: typeof item.payload === 'string' ? JSON.parse(item.payload) : item.payload,
  } as OutboxItem;
}

/** The defined entries of a patch, as [snake_case column, value] pairs. */
export function patchColumns(patch: Record<string, unknown>): [string, unknown][] {
  return Object.entries(patch)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => [toSnake(key), value]);
}
