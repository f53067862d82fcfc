#!/bin/sh
# One-shot, in temporalio/admin-tools, after the server answers: the namespace the workers
# use, and the search attributes the agent workflow sets (contracts/ids.py; the dev server
# gets the same from core/devserver.py's SEARCH_ATTRIBUTES). Idempotent.
set -eu
: "${TEMPORAL_ADDRESS:?set TEMPORAL_ADDRESS}"
NAMESPACE=${TEMPORAL_NAMESPACE:-default}
RETENTION=${TEMPORAL_RETENTION:-7d}

until temporal operator cluster health --address "$TEMPORAL_ADDRESS"; do
  echo "waiting for the Temporal frontend at $TEMPORAL_ADDRESS"
  sleep 2
done

temporal operator namespace describe --address "$TEMPORAL_ADDRESS" -n "$NAMESPACE" >/dev/null 2>&1 \
  || temporal operator namespace create --address "$TEMPORAL_ADDRESS" -n "$NAMESPACE" --retention "$RETENTION"

for attribute in AgentRunStatus=Keyword AgentProfile=Keyword; do
  name=${attribute%%=*}
  kind=${attribute#*=}
  temporal operator search-attribute list --address "$TEMPORAL_ADDRESS" -n "$NAMESPACE" | grep -qw "$name" \
    || temporal operator search-attribute create --address "$TEMPORAL_ADDRESS" -n "$NAMESPACE" --name "$name" --type "$kind"
done
echo "namespace $NAMESPACE ready"
