#!/bin/sh
# One-shot run by docker-compose.yml: copies the project (bind-mounted read-only at /src) into the shared `app`
# volume and runs `npm ci` there once, so the worker and the five sandbox providers share one install and nothing
# is written into the host's checkout (its node_modules may be built for another OS).
set -eu

find /app -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
cd /src
# .env holds the approval signing key and the webhook secrets: compose hands each service only its own, so the
# shared volume, which every Node service mounts, must not carry the file.
tar --exclude=./node_modules --exclude=./.git --exclude=./.data --exclude=./.tools --exclude=./.out \
  --exclude=./.env --exclude='./.env.*' -cf - . |
  tar -C /app -xf -
cd /app
npm ci --no-audit --no-fund
