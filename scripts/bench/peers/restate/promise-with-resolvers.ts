/**
 * @restatedev/restate-sdk 1.17 calls Promise.withResolvers (ES2024) for every invocation; Node 20, which this
 * project supports, does not have it, and the SDK then fails each attempt with "Promise.withResolvers is not a
 * function". Installs the standard behaviour, only when missing. Import before the SDK serves anything.
 */
interface WithResolvers {
  withResolvers?<T>(): {
    promise: Promise<T>;
    resolve: (value: T | PromiseLike<T>) => void;
    reject: (reason?: unknown) => void;
  };
}

const PromiseCtor = Promise as unknown as WithResolvers;
if (typeof PromiseCtor.withResolvers !== 'function') {
  PromiseCtor.withResolvers = function withResolvers<T>() {
    let resolve!: (value: T | PromiseLike<T>) => void;
    let reject!: (reason?: unknown) => void;
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

export {};
