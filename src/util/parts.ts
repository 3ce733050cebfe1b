/**
 * A named part of the running app: what starting it and stopping it take. Either may be absent
 * (a part opened when built, or one whose stop another part's covers).
 */
export interface Part {
  name: string;
  start?: () => Promise<void> | void;
  stop?: () => Promise<void> | void;
}

/**
 * Starts the parts in order, each once the one before it has started. When one fails to start,
 * the parts before it are stopped (backward, as {@link stopParts} does: the store is closed
 * too) before the failure is passed on; the failing part undoes its own half-start.
 */
export async function startParts(parts: readonly Part[]): Promise<void> {
  for (const [index, part] of parts.entries()) {
    try {
      await part.start?.();
    } catch (error) {
      await stopParts(parts.slice(0, index));
      throw error;
    }
  }
}

/** Stops the parts in the reverse of their start order: what started last stops first. */
export async function stopParts(parts: readonly Part[]): Promise<void> {
  for (const part of [...parts].reverse()) await part.stop?.();
}
