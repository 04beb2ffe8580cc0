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
