#!/bin/sh
# Registers the namespace and the product's search attributes (SPEC.md, "Names fixed") with
# `temporal operator`. Safe to run on every start: what exists is left as it is. Prints "new" on its last
# line when it added a search attribute (the server's services see a new one within 60 s).
# Used by docker-compose.yml (the temporal-register service) and `npm run stack:cluster`; the list is
# checked against loop/search-attributes.ts by test/unit/cluster-config.test.ts.
# Reads: DEFAULT_NAMESPACE, DEFAULT_NAMESPACE_RETENTION (deploy/temporal/cluster.env), TEMPORAL_ADDRESS.
set -eu
: "${DEFAULT_NAMESPACE:?set DEFAULT_NAMESPACE (deploy/temporal/cluster.env)}" "${TEMPORAL_ADDRESS:?set TEMPORAL_ADDRESS}"
TEMPORAL="${TEMPORAL_CLI:-temporal}"
# The server may still be starting (compose starts this beside it): wait until its frontend serves.
waited=0
until "$TEMPORAL" operator cluster health >/dev/null 2>&1; do
  waited=$((waited + 2))
  if [ "$waited" -gt "${READY_TIMEOUT_SECONDS:-180}" ]; then echo "the Temporal server at $TEMPORAL_ADDRESS did not serve within ${READY_TIMEOUT_SECONDS:-180} s" >&2; exit 1; fi
  sleep 2
done

SEARCH_ATTRIBUTES="TargetSite=Keyword HealthScore=Int HealthBand=Keyword ParserHealth=Int AwaitingHuman=Bool LoopProblem=Keyword"

if "$TEMPORAL" operator namespace describe --namespace "$DEFAULT_NAMESPACE" >/dev/null 2>&1; then
  echo "namespace $DEFAULT_NAMESPACE exists"
else
  "$TEMPORAL" operator namespace create --namespace "$DEFAULT_NAMESPACE" --retention "${DEFAULT_NAMESPACE_RETENTION:-72h}"
  echo "created namespace $DEFAULT_NAMESPACE"
fi

# A namespace created a moment ago reaches every frontend within seconds (the namespace cache).
waited=0
until known=$("$TEMPORAL" operator search-attribute list --namespace "$DEFAULT_NAMESPACE" 2>&1); do
  waited=$((waited + 2))
  if [ "$waited" -gt "${READY_TIMEOUT_SECONDS:-180}" ]; then echo "$known" >&2; exit 1; fi
  sleep 2
done
added=""
for sa in $SEARCH_ATTRIBUTES; do
  name="${sa%%=*}"
  if printf '%s\n' "$known" | grep -qw "$name"; then continue; fi
  "$TEMPORAL" operator search-attribute create --namespace "$DEFAULT_NAMESPACE" --name "$name" --type "${sa##*=}" >/dev/null
  echo "created search attribute $name"
  added="new"
done
echo "search attributes ${added:-present}"
