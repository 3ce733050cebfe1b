/**
 * A named part of the running app: what starting it and stopping it take. Either may be absent
 * (a part opened when built, or one whose stop another part's covers).
 */
export interface Part {
  name: string;
  start?: () => Promise<void> | void;
  stop?: () => Promise<void> | void;
}

/** Starts the parts in order, each once the one before it has started. */
export async function startParts(parts: readonly Part[]): Promise<void> {
  for (const part of parts) await part.start?.();
}

/** Stops the parts in the reverse of their start order: what started last stops first. */
export async function stopParts(parts: readonly Part[]): Promise<void> {
  for (const part of [...parts].reverse()) await part.stop?.();
}
