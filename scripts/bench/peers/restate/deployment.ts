/**
 * Registers the service endpoint with restate-server through the admin API (there is no restate CLI here).
 * Restate discovers the endpoint's workflows by calling it, so the service must already listen.
 *
 * `force` stays false, the default since admin API v3 (Restate 1.6): then a breaking change at a registered URI is
 * refused instead of overwriting what in-flight invocations were pinned to. Registering the same URI again with
 * the same services needs no force: restate-server 1.7.12 answers 200 with the same deployment ID.
 */
export async function registerDeployment(adminUrl: string, uri: string): Promise<{ id: string; services: string[] }> {
  const response = await fetch(`${adminUrl}/deployments`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ uri }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`registering ${uri} at ${adminUrl} answered ${response.status}: ${text}`);
  const body = JSON.parse(text) as { id: string; services: Array<{ name: string }> };
  return { id: body.id, services: body.services.map((s) => s.name) };
}
