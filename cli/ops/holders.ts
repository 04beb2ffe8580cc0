/**
 * Ledger holders as an operator reads them. A run's act holds a row as `run:<run ID>/<act token>#<attempt>`
 * (activities/act-on-record.ts), and a run ID begins with `run:` too, so a reason that names the holder reads
 * `run:run:acme:…/5f0c…#2`: the prefix doubled, and a token nobody can use. Shown as `run:acme:…, attempt 2`.
 */
const RUN_ACT_HOLDER = /\brun:(run:[^\s/()]+)\/[\w-]+#(\d+)/g;

/** The text with every run's-act holder in it written as its run and attempt. */
export function withReadableHolders(text: string): string {
  return text.replace(RUN_ACT_HOLDER, (_holder, run: string, attempt: string) => `${run}, attempt ${attempt}`);
}
