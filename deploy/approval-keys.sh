#!/bin/sh
# Prints a new approval signing key pair and a first operator, in the form docker compose reads from .env:
#   sh deploy/approval-keys.sh >> .env          (or: sh deploy/approval-keys.sh NAME >> .env; the default is admin)
# The approvals service holds the private key (RETRYSAFE_APPROVAL_SIGNING_KEY) and signs people's decisions with
# it; the worker trusts only the public key, under its id (RETRYSAFE_APPROVAL_KEY_ID, RETRYSAFE_APPROVAL_PUBLIC_KEY).
# The operator's token is printed on stderr, for the person who signs in at http://127.0.0.1:4180/sign-in; .env
# keeps only its SHA-256, which deploy/approval-service.sh puts in the operators file. The key id is the one
# `npm run approvals -- keygen` gives: ed25519- and the first 16 hex digits of the SHA-256 of the public key's hex.
# Needs OpenSSL 1.1.1 or later (Ed25519). The private key never touches the disk before .env.
set -eu
name=${1:-admin}
case $name in
  '' | [!A-Za-z0-9]* | *[!A-Za-z0-9._@-]*)
    echo "operator name $name: use letters, digits, '.', '_', '@' or '-', starting with a letter or digit" >&2
    exit 2
    ;;
esac

hex() { od -An -v -tx1 | tr -d ' \n'; }
sha256_hex() { openssl dgst -sha256 -r | cut -d ' ' -f 1; }

pem=$(openssl genpkey -algorithm ed25519)
# The DER forms end with the raw 32-byte keys (PKCS#8 private key, SubjectPublicKeyInfo public key).
private_key=$(printf '%s\n' "$pem" | openssl pkey -outform DER | tail -c 32 | hex)
public_key=$(printf '%s\n' "$pem" | openssl pkey -pubout -outform DER | tail -c 32 | hex)
key_id=ed25519-$(printf '%s' "$public_key" | sha256_hex | cut -c 1-16)
token=$(od -An -N32 -tx1 /dev/urandom | tr -d ' \n')

printf 'RETRYSAFE_APPROVAL_SIGNING_KEY=%s\n' "$private_key"
printf 'RETRYSAFE_APPROVAL_KEY_ID=%s\n' "$key_id"
printf 'RETRYSAFE_APPROVAL_PUBLIC_KEY=%s\n' "$public_key"
printf 'RETRYSAFE_OPERATOR_NAME=%s\n' "$name"
printf 'RETRYSAFE_OPERATOR_TOKEN_SHA256=%s\n' "$(printf '%s' "$token" | sha256_hex)"
printf 'operator %s, token (shown once; .env keeps only its SHA-256): %s\n' "$name" "$token" >&2
