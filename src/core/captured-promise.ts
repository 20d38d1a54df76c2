/**
 * A promise made with a static executor, so no closure is made per promise (a send's, an
 * output's): `capturedPromise()` makes it, and `lastCaptured` holds its resolving functions until
 * the next call, to be read at once into the caller's own fields or variables.
 */
export const lastCaptured: { resolve: (value: unknown) => void; reject: (error: unknown) => void } = {
  resolve: () => undefined,
  reject: () => undefined,
}

function capture(resolve: (value: unknown) => void, reject: (error: unknown) => void): void {
  lastCaptured.resolve = resolve
  lastCaptured.reject = reject
}

/** A new promise, settled through `lastCaptured`'s functions as they are right after this call. */
export function capturedPromise<T>(): Promise<T> {
  return new Promise<unknown>(capture) as Promise<T>
}
