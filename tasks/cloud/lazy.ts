/**
 * A value made on first use. `get()` makes it once and shares the result; a make that fails is forgotten, so the
 * next call tries again (a kubeconfig or a credential may appear later). A `Lazy` is a plain object with one
 * method: it can be returned from an async function or resolved by a promise without being taken for a thenable.
 */
export class Lazy<T> {
  private made: Promise<T> | undefined;

  constructor(private readonly make: () => Promise<T>) {}

  get(): Promise<T> {
    return (this.made ??= this.make().catch((err: unknown) => {
      this.made = undefined;
      throw err;
    }));
  }
}
