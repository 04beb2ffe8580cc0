/**
 * The standard Temporal environment configuration (see client/connect.ts), as worker-side modules import it. A
 * worker connects with `NativeConnection.connect(settings.connectionOptions)` from retrysafeSettingsFromEnv, or
 * through workerMain.
 */
export { connectClient, loadConnectConfig } from '../client/connect';
