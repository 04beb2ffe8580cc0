/**
 * A worker for the SMTP mail example tool: `send-notification` over the SMTP server RETRYSAFE_SMTP_URL names
 * (`smtp://host:port`), looked up through the mail server's API at RETRYSAFE_MAIL_API_URL (Mailpit's), with the
 * engine's own workflows.
 */
import { SetupError, workerMain } from '../../workers/run-worker';
import { smtpMailSettingsFromEnv, smtpMailTools } from './tools';

workerMain((env) => {
  let settings;
  try {
    settings = smtpMailSettingsFromEnv(env);
  } catch (err) {
    throw new SetupError((err as Error).message);
  }
  return { tools: smtpMailTools(settings), workflowsPath: require.resolve('../../workflows') };
});
