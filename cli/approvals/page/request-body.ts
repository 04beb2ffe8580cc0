import type http from 'node:http';

/** The body as UTF-8, or undefined as soon as it exceeds `limit` bytes (the rest is then discarded). */
export function readBody(req: http.IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      req.resume();
      return resolve(undefined);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      // Stop buffering but keep draining, so the 413 can still be written on this connection.
      req.off('data', onData);
      req.resume();
      resolve(undefined);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.once('error', reject);
  });
}

export type FormFields = Record<string, string>;

/**
 * An `application/x-www-form-urlencoded` body as fields, refusing (with the field's name) a field sent twice or a
 * field the form does not have, so nothing a form lacks (an operator, a tenant) can ride along.
 */
export function parseForm(body: string, allowed: readonly string[]): { fields: FormFields } | { problem: string } {
  const fields: FormFields = {};
  for (const [name, value] of new URLSearchParams(body)) {
    if (!allowed.includes(name)) return { problem: `the form has no field ${JSON.stringify(name.slice(0, 40))}` };
    if (name in fields) return { problem: `the field ${name} was sent twice` };
    fields[name] = value;
  }
  return { fields };
}
