#!/bin/sh
# One-shot run by docker-compose.yml beside the Temporal server: waits until it answers, gives the namespace the
# retention operators rely on and registers retrysafe's search attributes; whatever needs Temporal waits for this to
# complete. RETRYSAFE_SEARCH_ATTRIBUTES holds `Name=Type` words, kept equal to policies/search-attributes.ts by
# test/unit/compose.test.ts. Safe to re-run: an attribute that already exists with the same type is accepted, and
# the retention is set again.
set -eu
: "${TEMPORAL_ADDRESS:?}" "${TEMPORAL_NAMESPACE:?}" "${RETENTION:?}" "${RETRYSAFE_SEARCH_ATTRIBUTES:?}"

# Runs "$@" until it succeeds, 60 times 2 s apart: the container starts with the server's (which has no healthcheck),
# the frontend needs a while to serve, and a namespace just created takes a few seconds to reach every server cache.
retry() {
  attempt=1
  until "$@"; do
    if [ "$attempt" -ge 60 ]; then
      echo "gave up after 120 s: $*" >&2
      return 1
    fi
    attempt=$((attempt + 1))
    sleep 2
  done
}

retry temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null

# Retried too: a frontend that reports healthy can still refuse namespace calls while history starts.
ensure_namespace() {
  if temporal operator namespace describe --namespace "$TEMPORAL_NAMESPACE" >/dev/null 2>&1; then
    temporal operator namespace update --namespace "$TEMPORAL_NAMESPACE" --retention "$RETENTION"
  else
    temporal operator namespace create --namespace "$TEMPORAL_NAMESPACE" --retention "$RETENTION"
  fi
}
retry ensure_namespace

for entry in $RETRYSAFE_SEARCH_ATTRIBUTES; do
  name=${entry%%=*}
  type=${entry#*=}
  retry temporal operator search-attribute create --namespace "$TEMPORAL_NAMESPACE" --name "$name" --type "$type"
done

temporal operator namespace describe --namespace "$TEMPORAL_NAMESPACE" | grep -i retention
temporal operator search-attribute list --namespace "$TEMPORAL_NAMESPACE" | grep Retrysafe
