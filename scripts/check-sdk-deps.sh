#!/usr/bin/env bash
# check-sdk-deps.sh: the dependency rules of the SDK, checked by `make vet`.
#
#  1. The SDK (sdk/, module github.com/zkhost/zkhost/sdk) uses no package of the
#     host's module: a backend author's build pulls in the SDK's dependencies only.
#  2. A backend built on the SDK links gnark-crypto, not gnark (gnark's frontend,
#     GKR for every curve, zerolog...): the gnark conversions live in sdk/keyconv,
#     which backends do not import.
# Each rule prints the offending packages and fails.
set -euo pipefail
cd "$(dirname "$0")/.."
GO="${GO:-go}"
fail=0

# go list fails loudly (set -e) rather than let an empty list pass.
sdkdeps=$(cd sdk && "$GO" list -deps -test ./...)
root=$(grep '^github\.com/zkhost/zkhost/' <<<"$sdkdeps" | grep -v '^github\.com/zkhost/zkhost/sdk\([/ .]\|$\)' || true)
if [[ -n "$root" ]]; then
	echo "check-sdk-deps: the SDK module uses packages of the root module github.com/zkhost/zkhost:" >&2
	echo "$root" | sed 's/^/  /' >&2
	fail=1
fi

# The backends and the example backend, also with the CUDA backend's build tag.
backends=(./cmd/zkhost-backend-cpu ./cmd/zkhost-backend-cuda ./examples/minimalbackend)
backenddeps=$("$GO" list -deps "${backends[@]}" && "$GO" list -deps -tags cuda "${backends[@]}")
gnark=$(grep '^github\.com/consensys/gnark/' <<<"$backenddeps" | sort -u || true)
if [[ -n "$gnark" ]]; then
	echo "check-sdk-deps: a backend links github.com/consensys/gnark (only gnark-crypto is allowed; gnark's conversions are in sdk/keyconv):" >&2
	echo "$gnark" | sed 's/^/  /' >&2
	fail=1
fi
exit "$fail"
