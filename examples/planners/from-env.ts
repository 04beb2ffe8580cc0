import { z } from 'zod';
import { renewalPlanner, upsellRenewalPlanner } from './renewal-script';
import { RetrysafeError } from 'retrysafe';
import { OpenAiCompatiblePlanner, parseOpenAiPlannerEnv, type Planner } from 'retrysafe/worker';
import { AiSdkPlanner } from 'retrysafe/ai-sdk';

export const PlannerKindEnv = z.object({
  RETRYSAFE_PLANNER: z
    .enum(['scripted', 'scripted-upsell', 'openai', 'ai-sdk'], {
      error:
        'RETRYSAFE_PLANNER must be "scripted" (the renewal script), "scripted-upsell" (a planner that now answers differently), "openai" or "ai-sdk"',
    })
    .default('scripted'),
});

/**
 * The planner a worker uses, chosen by RETRYSAFE_PLANNER: the deterministic renewal script by default, so
 * the demo needs no model; `openai` for any OpenAI-compatible endpoint (see parseOpenAiPlannerEnv), `ai-sdk` for
 * the same endpoint through the Vercel AI SDK.
 * Call at entry points only.
 */
export function plannerFromEnv(env: Record<string, string | undefined>): Planner {
  const parsed = PlannerKindEnv.safeParse(env);
  if (!parsed.success) throw new RetrysafeError('InvalidConfig', parsed.error.issues.map((i) => i.message).join('\n'));
  if (parsed.data.RETRYSAFE_PLANNER === 'openai') return new OpenAiCompatiblePlanner(parseOpenAiPlannerEnv(env));
  // The same endpoint settings, through the Vercel AI SDK.
  if (parsed.data.RETRYSAFE_PLANNER === 'ai-sdk') return new AiSdkPlanner(parseOpenAiPlannerEnv(env));
  if (parsed.data.RETRYSAFE_PLANNER === 'scripted-upsell') return upsellRenewalPlanner();
  return renewalPlanner();
}
