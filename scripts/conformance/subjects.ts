import { SANDBOX_SUBJECTS } from './subjects-sandbox';
import { mailpitMailSubject, postgresOrdersSubject, stripeChargeSubject } from './subjects-real';
import type { ConformanceSubject } from './types';

/** Every example tool the check knows, by tool name: the sandbox ones, then those on real servers. */
export const SUBJECTS: readonly ConformanceSubject[] = [
  ...SANDBOX_SUBJECTS,
  postgresOrdersSubject,
  mailpitMailSubject,
  stripeChargeSubject,
];

export function subjectByTool(name: string): ConformanceSubject | undefined {
  return SUBJECTS.find((s) => s.tool === name);
}
