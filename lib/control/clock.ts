/** Celery's Lamport clock (`app.clock`): forwarded on every event and control message. */
export class LamportClock {
  private value = 0;
  forward(): number {
    return ++this.value;
  }
  adjust(other: unknown): number {
    if (typeof other === 'number' && Number.isFinite(other)) this.value = Math.max(this.value, Math.trunc(other));
    return ++this.value;
  }
  get current(): number {
    return this.value;
  }
}
