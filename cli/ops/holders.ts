/**
 * Ledger holders as an operator reads them. A run's act holds a row as `run:<run ID>/<act token>#<generation>.<attempt>`
 * (activities/act-on-record.ts: the generation is the run's history length when its workflow task ran the act), and a
 * run ID begins with `run:` too, so a reason that names the holder reads `run:run:acme:…/5f0c…#12.1`: the prefix
 * doubled, and a token nobody can use. Shown as `run:acme:…, attempt 1 (task at event 12)`. Holders written before
 * the generation (`…#2`) read `run:acme:…, attempt 2`.
 */
const RUN_ACT_HOLDER = /\brun:(run:[^\s/()]+)\/[\w-]+#(?:(\d+)\.)?(\d+)/g;

/** The text with every run's-act holder in it written as its run and attempt. */
export function withReadableHolders(text: string): string {
  return text.replace(RUN_ACT_HOLDER, (_holder, run: string, generation: string | undefined, attempt: string) =>
    generation === undefined
      ? `${run}, attempt ${attempt}`
      : `${run}, attempt ${attempt} (task at event ${generation})`,
  );
}
