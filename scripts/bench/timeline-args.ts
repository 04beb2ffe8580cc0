import { count } from './args';

/** `npm run bench:timeline` options; see the header of scripts/bench-timeline.ts. */
export interface TimelineOptions {
  legs: string[];
  warmup: number;
  recovery: boolean;
}

export const DEFAULT_TIMELINE_LEGS = ['bare-activity', 'retrysafe-action'];
const FLAGS = ['--legs', '--warmup', '--recovery'];

/** A bad command line: said in one line, exit code 2, no stack. */
export class UsageError extends Error {}

/** Reads the command line against the legs that have a timeline (`known`); refuses anything else by name. */
export function parseTimelineOptions(argv: readonly string[], known: readonly string[]): TimelineOptions {
  const valueOf = (flag: string) => {
    const at = argv.indexOf(flag);
    return at >= 0 ? argv[at + 1] : undefined;
  };
  const unknownFlag = argv.find((a) => a.startsWith('--') && !FLAGS.includes(a));
  if (unknownFlag) throw new UsageError(`unknown option ${unknownFlag}; the options are ${FLAGS.join(', ')}`);
  const warmup = count('a whole number of warm-up operations', 0, 100).default(5).safeParse(valueOf('--warmup'));
  if (!warmup.success) throw new UsageError(`--warmup: ${warmup.error.issues[0]?.message ?? 'invalid'}`);
  const given = valueOf('--legs');
  if (argv.includes('--legs') && (given === undefined || given.startsWith('--'))) {
    throw new UsageError(`--legs: give leg ids separated by commas; known: ${known.join(', ')}`);
  }
  const legs = (given ?? DEFAULT_TIMELINE_LEGS.join(',')).split(',').filter(Boolean);
  const unknownLeg = legs.find((id) => !known.includes(id));
  if (unknownLeg) throw new UsageError(`--legs: no leg ${unknownLeg} with a timeline; known: ${known.join(', ')}`);
  return { legs, warmup: warmup.data, recovery: argv.includes('--recovery') };
}
