/**
 * `retrysafe/worker`: what a worker process imports. {@link createWorker} builds a Temporal worker with the engine's
 * activities, its workflow preloads and its tuning over the application's tools; {@link workerMain} is a whole worker
 * process configured from the environment. The durable ledger, the payload codec, the logger, planners and the
 * webhook router are here too. Workflow code imports `retrysafe/workflow` instead.
 *
 * @packageDocumentation
 */
export { createWorker, STICKY_QUEUE_SCHEDULE_TO_START_TIMEOUT } from '../workers/create-worker';
export { retrysafePlugin } from '../workers/plugin';
export type { RetrysafeMetricsOptions, RetrysafePluginOptions } from '../workers/plugin';
export { isSettingsError, retrysafeSettingsFromEnv } from '../workers/settings-from-env';
export type { PluginChoices, RetrysafeEnvSettings } from '../workers/settings-from-env';
export type { CreateWorkerOptions, WorkerTuning } from '../workers/create-worker';
export { runWorkerProcess, SetupError, workerMain } from '../workers/run-worker';
export type { WorkerSetup } from '../workers/run-worker';
export { ConfigError, parseWorkerConfig, WorkerEnv } from '../workers/config';
export type { WorkerConfig } from '../workers/config';
export { connectWorker } from '../workers/connection';
export { WORKFLOW_PRELOAD_MODULES, withEnginePreloads } from '../workers/workflow-preload';
export { createLogger, installRuntimeLogger, REDACT_PATHS, runtimeLogger } from '../workers/logger';
export { installWorkerRuntime, MetricsAddressError, prometheusMetricsExporter } from '../workers/runtime';
export { listIncompleteActions } from '../workers/recovery-report';
export type { IncompleteSummary } from '../workers/recovery-report';
export { loadTenantPolicyFile } from '../workers/tenant-policy-file';
export { operatorScopesReader, OperatorsFileError } from '../workers/operators-file';

// The durable action ledger.
export {
  LedgerConfigError,
  LedgerError,
  LedgerSchemaError,
  LEDGER_ENV_VAR,
  LEDGER_SCHEMA_VERSION,
  DEFAULT_HISTORY_LIMIT,
  MAX_HISTORY_LIMIT,
  ledgerChoiceFromEnv,
  ledgerConfigFromEnv,
  openLedger,
  PostgresLedger,
  SqliteLedger,
} from '../ledger';
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
export type {
  ClaimRecord,
  LedgerErrorCode,
  RowClaim,
  RowClaimRecord,
  StatusRecord,
  StatusWrite,
} from '../ledger/action-ledger';
export type { LedgerMigration, MigrationResult } from '../ledger/migrations';
export type { PostgresLedgerOptions } from '../ledger/postgres-ledger';
export type { SqliteLedgerOptions } from '../ledger/sqlite-ledger';

// Metrics: what a worker counts, and the open-action gauges it reads from the ledger.
export { createRetrysafeMetrics, noRetrysafeMetrics, RETRYSAFE_HISTOGRAM_BUCKETS } from '../metrics/instruments';
export type { ProviderRequestOutcome, RetrysafeMetrics } from '../metrics/instruments';
export {
  DEFAULT_ESCALATION_WINDOW_SECONDS,
  DEFAULT_LEDGER_POLL_MS,
  ledgerGaugeSetter,
  parseEscalationWindows,
  pollLedgerGauges,
} from '../metrics/ledger-gauges';
export type { EscalationWindows, LedgerGaugeOptions } from '../metrics/ledger-gauges';

// Payload encryption at rest.
export {
  dataConverterFromEnv,
  generatePayloadKeysFile,
  PAYLOAD_KEYS_ENV,
  PAYLOAD_KEYS_FILE_ENV,
  PayloadKeysError,
  payloadKeysFileEnv,
  payloadCodecFromEnv,
} from '../codec/codec-config';
export { AesGcmPayloadCodec, PayloadCodecError } from '../codec/aes-gcm-codec';
export type { PayloadKeys } from '../codec/aes-gcm-codec';

// Planners: the model (or a script) that agent runs plan with.
export {
  createPlanActivity,
  OpenAiCompatiblePlanner,
  parseOpenAiPlannerEnv,
  PlannerConfigError,
  SCRIPT_EXHAUSTED,
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
export { parseWebhookSecrets, signatureHeader, SIGNATURE_HEADER, verifySignature } from '../workers/webhook-signature';
export type { VerifyFailure, VerifyResult, WebhookSecrets } from '../workers/webhook-signature';
