/** A typed event with any number of listeners: how features hear about each other without knowing each other. */
export class Signal<T> {
  private readonly listeners = new Set<(value: T) => void>();

  /** Listen; returns the way to stop. */
  on(listener: (value: T) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  emit(value: T): void {
    for (const listener of [...this.listeners]) listener(value);
  }
}
