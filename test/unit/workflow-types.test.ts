import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ACTION_WORKFLOW_TYPE } from '../../messages/action';
import { AGENT_RUN_WORKFLOW_TYPE } from '../../messages/run';
import * as engineWorkflows from '../../workflows';

describe("the engine's workflow type names", () => {
  it('are the names its workflow functions are exported under, so a claim starts what a worker registers', () => {
    assert.deepEqual(Object.keys(engineWorkflows).sort(), [ACTION_WORKFLOW_TYPE, AGENT_RUN_WORKFLOW_TYPE].sort());
    assert.equal(engineWorkflows.actionWorkflowV3.name, ACTION_WORKFLOW_TYPE);
    assert.equal(engineWorkflows.agentRunWorkflowV3.name, AGENT_RUN_WORKFLOW_TYPE);
  });

  it("carry the major version, so 0.2's actionWorkflow and agentRunWorkflow histories are never replayed here", () => {
    assert.match(ACTION_WORKFLOW_TYPE, /V3$/);
    assert.match(AGENT_RUN_WORKFLOW_TYPE, /V3$/);
  });
});
