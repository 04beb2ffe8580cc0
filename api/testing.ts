/**
 * `retrysafe/testing`: crash injection, for proving that a tool is safe to retry. A worker started with
 * RETRYSAFE_CRASH_AT=`after-commit:<tool>` SIGKILLs itself right after the provider answered, before the outcome is
 * recorded; a test then counts the effects at the provider. {@link killAt} gives an application's own activities
 * (a baseline, say) the same points.
 *
 * And signed provider events, for a test (or a fake provider) that posts to the webhook router:
 * {@link webhookHeaders} signs a delivery on Standard Webhooks exactly as the router verifies it.
 *
 * @packageDocumentation
 */
export { CRASH_POINTS, killAt, noCrashes, parseCrashSpecs } from '../activities/crash-points';
export type { CrashHook, CrashPoint, CrashSpec } from '../activities/crash-points';
export { webhookHeaders } from '../workers/webhook-signature';
