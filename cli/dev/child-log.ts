import { createWriteStream } from 'node:fs';

/**
 * A child process's output appended to a log file, safe against the two ways such a file can crash its parent:
 *
 * - a write after the end: Node may emit a child's 'exit' before its pipes have delivered their last chunk, and a
 *   chunk written to a stream already ended makes the stream emit 'error';
 * - a stream error with nobody listening (the folder removed, the disk full), which Node throws as an uncaught
 *   exception: in a test file, after its tests passed, that turns the file into a failure.
 *
 * A log is a record, not a result: a chunk that arrives after `end()` is dropped, and the first error is kept for
 * whoever asks (`error`) instead of being thrown.
 */
export interface ChildLog {
  write(chunk: Buffer | string): void;
  /** Flushes and closes the file; resolves once it is closed (or failed). Later writes are dropped. */
  end(): Promise<void>;
  /** The first error the file met, if any. */
  readonly error: Error | undefined;
  /** Chunks dropped because they came after `end()`. */
  readonly dropped: number;
}

export function childLog(file: string): ChildLog {
  const stream = createWriteStream(file, { flags: 'a' });
  let error: Error | undefined;
  let dropped = 0;
  let ended: Promise<void> | undefined;
  stream.on('error', (err) => {
    error ??= err;
  });
  return {
    write(chunk) {
      if (ended || error) {
        dropped++;
        return;
      }
      stream.write(chunk);
    },
    end() {
      ended ??= new Promise<void>((resolve) => {
        if (stream.destroyed) return resolve();
        stream.once('close', () => resolve());
        stream.end();
      });
      return ended;
    },
    get error() {
      return error;
    },
    get dropped() {
      return dropped;
    },
  };
}
