/**
 * Keeps this process's calls out of a transaction open on its one connection: a transaction's function awaits,
 * and any statement run meanwhile on that connection would become part of it. While one is open, every guarded
 * call waits until it ends; while none is, a call goes straight through.
 */
export class TransactionGate {
  private open: Promise<void> | null = null;

  /** Runs `fn` with the gate shut until it settles; transactions take turns. */
  async hold<T>(fn: () => Promise<T>): Promise<T> {
    while (this.open) await this.open;
    let release!: () => void;
    this.open = new Promise((resolve) => (release = resolve));
    try {
      return await fn();
    } finally {
      this.open = null;
      release();
    }
  }

  private async after<T>(call: () => T): Promise<Awaited<T>> {
    while (this.open) await this.open;
    return await call();
  }

  /** `target` with every method waiting at the gate, except `passing` (synchronous ones that run no statement). */
  guard<T extends object>(target: T, passing: readonly (keyof T & string)[] = []): T {
    const guarded: Record<string, unknown> = {};
    for (let proto = Object.getPrototypeOf(target); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
      for (const name of Object.getOwnPropertyNames(proto)) {
        const method: unknown = (target as Record<string, unknown>)[name];
        if (name === 'constructor' || name in guarded || typeof method !== 'function') continue;
        const bound = (method as (...args: unknown[]) => unknown).bind(target);
        guarded[name] = (passing as readonly string[]).includes(name)
          ? bound
          : (...args: unknown[]) => (this.open === null ? bound(...args) : this.after(() => bound(...args)));
      }
    }
    return guarded as T;
  }
}
