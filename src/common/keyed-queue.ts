/**
 * Runs work one at a time per key, in the order it was queued; different keys run at once. A
 * work's failure does not stop the ones queued after it. A key is forgotten once its queue is
 * empty, so the map holds only keys with work pending.
 */
export class KeyedQueue<K> {
  private readonly tails = new Map<K, Promise<void>>();

  run<T>(key: K, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(work);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with work running or queued. */
  get size(): number {
    return this.tails.size;
  }
}
