#!/bin/sh
# Prints one random webhook signing secret per sandbox provider, in the form docker compose reads from .env:
#   sh deploy/webhook-secrets.sh >> .env
# Each provider signs its webhooks with its secret; the webhook router (RETRYSAFE_WEBHOOK_SECRETS in
# docker-compose.yml) holds the same ones. Hex only, so the values are safe inside that JSON.
set -eu
for kind in PAYMENTS EMAIL TICKETS INVENTORY SHIPPING; do
  printf 'RETRYSAFE_%s_WEBHOOK_SECRET=whsec_%s\n' "$kind" "$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')"
done
