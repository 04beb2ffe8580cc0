/**
 * A worker for the SMTP mail example tool: `send-notification` over the SMTP server RETRYSAFE_SMTP_URL names
 * (`smtp://host:port`), looked up through the mail server's API at RETRYSAFE_MAIL_API_URL (Mailpit's), with the
 * engine's workflows and the bare baseline the chaos harness sets against it (examples/activities/bare-tool.ts).
 */
import { createBareTool } from '../activities/bare-tool';
import { smtpMailSettingsFromEnv, smtpMailTools } from './tools';
import { RetrysafeError } from 'retrysafe';
import { workerMain } from 'retrysafe/worker';
import { killAt } from 'retrysafe/testing';

workerMain((env, config) => {
  let settings;
  try {
    settings = smtpMailSettingsFromEnv(env);
  } catch (err) {
    throw new RetrysafeError('InvalidConfig', (err as Error).message);
  }
  const tools = smtpMailTools(settings);
  return {
    tools,
    workflowsPath: require.resolve('../workflows'),
    activities: { bareTool: createBareTool(tools, killAt(config.crashAt)) },
  };
});
