#!/bin/sh
# Run by docker-compose.yml's approvals service, in /app (the shared install): puts the operator of .env
# (RETRYSAFE_OPERATOR_NAME and RETRYSAFE_OPERATOR_TOKEN_SHA256, from `sh deploy/approval-keys.sh >> .env`) in the
# operators file on the `operators` volume, with every role for every tenant, then serves the approval page and
# its API. Operators added since (`docker compose exec approvals npm run ops -- operators add NAME …`) are kept;
# the worker reads the same file, read-only, for what each operator may decide.
set -eu
: "${RETRYSAFE_APPROVAL_SIGNING_KEY:?is empty: run sh deploy/approval-keys.sh >> .env, then docker compose up -d}"
: "${RETRYSAFE_OPERATOR_NAME:?is empty: run sh deploy/approval-keys.sh >> .env}"
: "${RETRYSAFE_OPERATOR_TOKEN_SHA256:?is empty: run sh deploy/approval-keys.sh >> .env}"
: "${RETRYSAFE_OPERATORS_FILE:?}" "${RETRYSAFE_APPROVAL_PORT:?}" "${RETRYSAFE_WEB_UI_URL:?}"

mkdir -p "$(dirname "$RETRYSAFE_OPERATORS_FILE")"
# Replaces the entry of that name (or that token), keeps the others; written beside the file and renamed over it,
# so the approval service and the worker, which re-read the file when it changes, never see half of it.
node - "$RETRYSAFE_OPERATORS_FILE" "$RETRYSAFE_OPERATOR_NAME" "$RETRYSAFE_OPERATOR_TOKEN_SHA256" <<'EOF'
const fs = require('node:fs');
const [file, name, tokenSha256] = process.argv.slice(2);
let operators = [];
try {
  operators = JSON.parse(fs.readFileSync(file, 'utf8')).operators;
} catch (err) {
  if (err.code !== 'ENOENT') throw err;
}
operators = operators.filter((o) => o.name !== name && o.tokenSha256 !== tokenSha256.toLowerCase());
const roles = ['approver', 'resolver', 'admin'];
const entry = { name, tokenSha256, tenants: ['*'], roles, addedAt: new Date().toISOString() };
fs.writeFileSync(`${file}.tmp`, `${JSON.stringify({ operators: [entry, ...operators] }, null, 2)}\n`, { mode: 0o644 });
fs.renameSync(`${file}.tmp`, file);
EOF
echo "operators file $RETRYSAFE_OPERATORS_FILE lists $RETRYSAFE_OPERATOR_NAME"

exec npm run approvals -- serve --host 0.0.0.0 --port "$RETRYSAFE_APPROVAL_PORT" --web-ui-url "$RETRYSAFE_WEB_UI_URL"
