/**
 * `retrysafe/worker`: what a worker process imports. {@link retrysafePlugin} adds the engine's activities, its
 * workflow preloads and its tuning to the team's own Temporal `Worker.create` (the one way to build a worker);
 * {@link workerMain} is the one convenience, a whole worker process configured from the environment. The durable
 * ledger, the payload codec, the logger, planners and the webhook router are here too. Workflow code imports
 * `retrysafe/workflow` instead.
 *
 * @packageDocumentation
 */
export type { WorkerTuning } from '../workers/create-worker';
export { retrysafePlugin } from '../workers/plugin';
export type { RetrysafeMetricsOptions, RetrysafePluginOptions } from '../workers/plugin';
export { isSettingsError, retrysafeSettingsFromEnv } from '../workers/settings-from-env';
export type { PluginChoices, RetrysafeEnvSettings } from '../workers/settings-from-env';
export { workerMain } from '../workers/run-worker';
export type { WorkerSetup } from '../workers/run-worker';
export { createLogger } from '../workers/logger';
// A Runtime the team installs: Runtime.install({ telemetryOptions: { metrics: prometheusMetricsExporter(…) } }).
export { prometheusMetricsExporter } from '../workers/runtime';

// The durable action ledger.
export { ledgerChoiceFromEnv, ledgerConfigFromEnv, openLedger, PostgresLedger, SqliteLedger } from '../ledger';
export type {
  ActionLedger,
  HistoryFilter,
  LedgerAlarm,
  LedgerAlarmKind,
  LedgerAuditEntry,
  LedgerConfig,
  LedgerRow,
  OpenActionGroup,
  OpenActionStats,
  OpenLedgerOptions,
} from '../ledger';
export type { PostgresLedgerOptions } from '../ledger/postgres-ledger';
export type { SqliteLedgerOptions } from '../ledger/sqlite-ledger';

// Payload encryption at rest.
export { dataConverterFromEnv, generatePayloadKeysFile } from '../codec/codec-config';
export { AesGcmPayloadCodec } from '../codec/aes-gcm-codec';
export type { PayloadKeys } from '../codec/aes-gcm-codec';

// Planners: the model (or a script) that agent runs plan with.
export {
  createPlanActivity,
  OpenAiCompatiblePlanner,
  parseOpenAiPlannerEnv,
  ScriptedPlanner,
} from '../activities/planners';
export type {
  OpenAiPlannerConfig,
  PlanOptions,
  Planner,
  PlannerOutput,
  PlannerUsage,
  Script,
  ScriptStep,
} from '../activities/planners';
export type { PlannerFacts, PlannerHistoryEntry, PlannerPrompt, ToolSchema } from '../policies/planner-contract';
export type { PlanActivityDeps } from '../activities/planners/plan-activity';

// Provider events: the signed webhook router.
export { createWebhookRouter, startWebhookServer } from '../workers/webhook-router';
export type { DeliveryAnswer, WebhookDelivery, WebhookLog, WebhookRouterDeps } from '../workers/webhook-router';
export type { VerifyFailure, VerifyResult, WebhookSecrets } from '../workers/webhook-signature';
