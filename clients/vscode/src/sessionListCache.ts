// The daemon's session list as `@` offers it: the webview asks for offers on every
// keystroke, and each asking agent/listSessions again read the whole index per character.
// One answer is reused for a few seconds (a menu's typing); pure, so it is unit-tested.

/** One fetch shared by every caller within `ttlMs` of it; a failed fetch is not kept. */
export class SessionListCache<T> {
  private pending: Promise<T> | undefined;
  private fetchedAt = 0;

  constructor(
    private readonly fetch: () => Promise<T>,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The list fetched within `ttlMs`, or a new fetch (callers that come during it share it). */
  get(): Promise<T> {
    if (this.pending && this.now() - this.fetchedAt < this.ttlMs) return this.pending;
    this.fetchedAt = this.now();
    const pending = this.fetch();
    this.pending = pending;
    // A failure is for this asking only: the next keystroke asks again.
    pending.catch(() => {
      if (this.pending === pending) this.pending = undefined;
    });
    return pending;
  }

  /** The list changed (a session deleted): the next caller fetches it again. */
  forget(): void {
    this.pending = undefined;
  }
}
