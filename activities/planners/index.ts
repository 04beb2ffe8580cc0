export type { PlanOptions, Planner, PlannerOutput, PlannerUsage } from './planner';
export { SCRIPT_EXHAUSTED, ScriptedPlanner } from './scripted-planner';
export type { Script, ScriptStep } from './scripted-planner';
export {
  OpenAiCompatiblePlanner,
  OpenAiPlannerEnv,
  PlannerConfigError,
  parseOpenAiPlannerEnv,
} from './openai-compatible-planner';
export type { OpenAiPlannerConfig } from './openai-compatible-planner';
export { createPlanActivity } from './plan-activity';
export type { PlanActivityDeps } from './plan-activity';
