/** The help of `retrysafe approvals`: the list of its commands, and each command's own. */
import { DEFAULT_OPERATORS_FILE } from '../ops/operator-auth';

/** Where `retrysafe approvals serve` listens unless told otherwise: beside the ports people leave free. */
export const DEFAULT_APPROVAL_PORT = 4180;

const SETTINGS = `Settings: RETRYSAFE_OPERATORS_FILE (default: the running \`retrysafe dev\`'s, else ${DEFAULT_OPERATORS_FILE}),
RETRYSAFE_APPROVAL_SIGNING_KEY with RETRYSAFE_APPROVAL_KEY_ID (default: the local key \`retrysafe dev\` keeps in
.retrysafe/). Workers trust the public key through RETRYSAFE_APPROVAL_PUBLIC_KEYS='{"<keyId>":"<publicKey>"}'.`;

export const APPROVALS_COMMANDS = ['keygen', 'new-operator', 'sign', 'serve'] as const;
export type ApprovalsCommand = (typeof APPROVALS_COMMANDS)[number];

export function isApprovalsCommand(name: string | undefined): name is ApprovalsCommand {
  return (APPROVALS_COMMANDS as readonly (string | undefined)[]).includes(name);
}

export const APPROVALS_USAGE: Record<'general' | ApprovalsCommand, string> = {
  general: `Usage: retrysafe approvals <command> [options]

The approval service: the only holder of the signing key. Operators sign in with their token and get decisions
signed for one action (key and request hash) within their tenants and roles.

Commands:
  keygen        a new signing key pair and its key id
  new-operator  a new operator token and its operators-file entry
  sign          sign one decision as an operator (approve or reject)
  serve         the approval service (POST /decisions) and the approval page for people

Run \`retrysafe approvals <command> --help\` for a command's options.`,
  keygen: `Usage: retrysafe approvals keygen

Prints a new Ed25519 key pair and its key id as JSON. Give the private key to the approval service only
(RETRYSAFE_APPROVAL_SIGNING_KEY, with RETRYSAFE_APPROVAL_KEY_ID); workers trust { keyId: publicKey }.`,
  'new-operator': `Usage: retrysafe approvals new-operator --name NAME

Prints a new operator token and the entry for the operators file (the entry holds only the token's SHA-256).
Hand the token to the operator; narrow the entry's tenants and roles in the file.

  --name NAME    the name recorded on every decision this operator makes
  -h, --help     this text`,
  sign: `Usage: retrysafe approvals sign --key KEY --hash HASH --decision approve|reject [--operator-token T]
                               [--ttl-seconds N]

Signs one decision for the action KEY whose request hash is HASH (\`retrysafe ops show KEY\` prints both) and
prints it as JSON.

  --key KEY            the action key
  --hash HASH          the action's request hash
  --decision D         approve or reject
  --operator-token T   the operator's token (default RETRYSAFE_OPERATOR_TOKEN, which keeps it out of the
                       process list)
  --ttl-seconds N      how long the decision stays valid
  -h, --help           this text

${SETTINGS}`,
  serve: `Usage: retrysafe approvals serve [--port ${DEFAULT_APPROVAL_PORT}] [--host 127.0.0.1] [--web-ui-url URL] [--secure-cookies]
                                [--api-only]

Serves POST /decisions (Authorization: Bearer <operator token>) and, unless --api-only, the approval page for
people at /sign-in, which needs Temporal (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, …, or the running
\`retrysafe dev\`). With payload keys configured it also decodes payloads at /codec for signed-in operators.

  --port PORT        the port to listen on (default ${DEFAULT_APPROVAL_PORT}; 0: any free port)
  --host HOST        the address to listen on (default 127.0.0.1)
  --web-ui-url URL   the Temporal Web UI the page links each action to (and the codec endpoint admits)
  --secure-cookies   mark the page's cookies Secure (behind HTTPS)
  --api-only         serve the JSON API only, without the page (needs no Temporal)
  -h, --help         this text

${SETTINGS}`,
};
