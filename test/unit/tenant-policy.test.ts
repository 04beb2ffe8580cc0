import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_RUN_CEILINGS, resolveRunCeilings } from '../../policies/ceilings';
import { decide } from '../../policies/decision-table';
import type { TenantPolicy } from '../../policies/tenant-policy';
import { exampleRegistry } from '../../examples/tools';
import { parseTenantPolicyConfig, policyForTenant } from '../../policies/tenant-policy';
import { loadTenantPolicyFile } from '../../workers/tenant-policy-file';

const tools = exampleRegistry();
const charge = (amountCents: number) =>
  tools.parseIntent({
    operation: 'charge',
    amountCents,
    currency: 'usd',
    customerId: 'cus_1842',
    paymentMethod: 'pm_card_visa',
    merchantReference: 'A-1842',
  });

const CONFIG = {
  default: { autoApproveBelowCents: 2_500, confirmRiskClasses: ['routine-message'] },
  tenants: {
    acme: {
      autoApproveBelowCents: 10_000,
      confirmRiskClasses: [],
      ceilings: { maxSteps: 80, perAction: { byTool: { refund: 20_000 } } },
    },
    globex: { humanOnlyAboveCents: 50_000 },
  },
};

function throwsNaming(raw: unknown, field: string, message?: RegExp): void {
  assert.throws(
    () => parseTenantPolicyConfig(raw),
    (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.ok(err.message.includes(`${field}: `), `expected ${field} in: ${err.message}`);
      if (message) assert.match(err.message, message);
      return true;
    },
  );
}

describe('tenant policy config', () => {
  it('parses a valid file and merges a tenant over the default', () => {
    const config = parseTenantPolicyConfig(CONFIG);
    assert.deepEqual(policyForTenant(config, 'acme'), {
      autoApproveBelowCents: 10_000,
      confirmRiskClasses: [],
      ceilings: { maxSteps: 80, perAction: { byTool: { refund: 20_000 } } },
    });
    assert.deepEqual(policyForTenant(config, 'globex'), {
      autoApproveBelowCents: 2_500,
      humanOnlyAboveCents: 50_000,
      confirmRiskClasses: ['routine-message'],
    });
  });

  it('gives an unknown tenant the default, and inherited object keys are not tenants', () => {
    const config = parseTenantPolicyConfig(CONFIG);
    assert.deepEqual(policyForTenant(config, 'initech'), CONFIG.default);
    assert.deepEqual(policyForTenant(config, 'constructor'), CONFIG.default);
    assert.deepEqual(policyForTenant(parseTenantPolicyConfig({ tenants: {} }), 'acme'), {});
  });

  it('feeds the decision table and the run ceilings', () => {
    const config = parseTenantPolicyConfig(CONFIG);
    const decideCharge = (amountCents: number, tenantPolicy: TenantPolicy) => {
      const intent = charge(amountCents);
      return decide(tools.describe(intent), intent, { tenantPolicy });
    };
    assert.equal(decideCharge(7_000, policyForTenant(config, 'acme')).mode, 'automatic');
    assert.equal(decideCharge(3_000, policyForTenant(config, 'globex')).mode, 'confirm');
    const ceilings = resolveRunCeilings(policyForTenant(config, 'acme').ceilings);
    assert.equal(ceilings.maxSteps, 80);
    assert.equal(ceilings.perAction.byTool.refund, 20_000);
    assert.equal(ceilings.perAction.byTool.charge, undefined);
    assert.equal(ceilings.perAction.maxAmountCents, DEFAULT_RUN_CEILINGS.perAction.maxAmountCents);
    assert.equal(ceilings.maxTokens, DEFAULT_RUN_CEILINGS.maxTokens);
  });

  it('names the field of a bad threshold', () => {
    throwsNaming(
      { tenants: { acme: { autoApproveBelowCents: -5 } } },
      'tenants.acme.autoApproveBelowCents',
      /must be a non-negative integer/,
    );
    throwsNaming({ tenants: { acme: { autoApproveBelowCents: 12.5 } } }, 'tenants.acme.autoApproveBelowCents');
    throwsNaming({ tenants: { acme: { humanOnlyAboveCents: '100' } } }, 'tenants.acme.humanOnlyAboveCents');
    throwsNaming({ default: { autoApproveBelowCents: -1 }, tenants: {} }, 'default.autoApproveBelowCents');
  });

  it('names an unknown risk class, an unknown field and a bad ceiling', () => {
    throwsNaming(
      { tenants: { acme: { confirmRiskClasses: ['lunch'] } } },
      'tenants.acme.confirmRiskClasses.0',
      /must be one of read/,
    );
    throwsNaming({ tenants: { acme: { autoApprove: 1 } } }, 'tenants.acme.autoApprove', /unknown field/);
    throwsNaming(
      { tenants: { acme: { ceilings: { maxSteps: 0 } } } },
      'tenants.acme.ceilings.maxSteps',
      /positive integer/,
    );
    throwsNaming(
      { tenants: { acme: { ceilings: { perAction: { byTool: { refund: -1 } } } } } },
      'tenants.acme.ceilings.perAction.byTool.refund',
      /positive integer/,
    );
    throwsNaming(
      { tenants: { acme: { ceilings: { perAction: { maxAmountCents: 0 } } } } },
      'tenants.acme.ceilings.perAction.maxAmountCents',
    );
    throwsNaming(
      { tenants: { acme: { ceilings: { perAction: { maxRefundCents: 20_000 } } } } },
      'tenants.acme.ceilings.perAction.maxRefundCents',
      /unknown field/,
    );
    throwsNaming({ tenants: {}, extra: true }, 'extra', /unknown field/);
  });

  it('refuses a bad tenant name', () => {
    throwsNaming({ tenants: { 'acme corp': {} } }, 'tenants.acme corp', /tenant name/);
  });

  it('refuses a low-value limit above the human-only limit, after merging with the default', () => {
    throwsNaming(
      { tenants: { acme: { autoApproveBelowCents: 9_000, humanOnlyAboveCents: 8_000 } } },
      'tenants.acme.autoApproveBelowCents',
      /must not be above humanOnlyAboveCents \(8000\)/,
    );
    throwsNaming(
      { default: { autoApproveBelowCents: 60_000 }, tenants: { acme: { humanOnlyAboveCents: 50_000 } } },
      'tenants.acme.humanOnlyAboveCents',
    );
    throwsNaming(
      { tenants: { acme: { autoApproveBelowCents: 200_000 } } },
      'tenants.acme.autoApproveBelowCents',
      /\(100000\)/,
    );
  });

  it('refuses a non-object', () => {
    throwsNaming([], '(root)');
  });
});

describe('tenant policy file', () => {
  it('loads a file, and puts the path in every error', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'retrysafe-tenant-policy-'));
    const good = path.join(dir, 'good.json');
    await writeFile(good, JSON.stringify(CONFIG));
    assert.equal((await loadTenantPolicyFile(good)).tenants.acme.autoApproveBelowCents, 10_000);

    const bad = path.join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ tenants: { acme: { autoApproveBelowCents: -1 } } }));
    await assert.rejects(loadTenantPolicyFile(bad), (err: Error) => {
      assert.match(
        err.message,
        new RegExp(`^${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: tenants\\.acme\\.autoApproveBelowCents: `),
      );
      return true;
    });

    const notJson = path.join(dir, 'not.json');
    await writeFile(notJson, '{ tenants: ');
    await assert.rejects(loadTenantPolicyFile(notJson), /not\.json: not valid JSON/);
    await assert.rejects(loadTenantPolicyFile(path.join(dir, 'missing.json')), /missing\.json: cannot read/);
  });
});
