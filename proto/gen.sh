#!/usr/bin/env bash
# gen.sh regenerates the Go code of every .proto file under proto/.
#
# proto/ holds only the sources: the Go code goes where each file's go_package
# says, relative to the repository root (the module prefix is stripped), so the
# backend and synthesizer contracts land in sdk/internal/proto (internal to the
# SDK, whose adapters translate at the edge) and the host's API in
# internal/proto.
#
# It installs pinned versions of protoc-gen-go and protoc-gen-go-grpc into
# build/protoc-bin (so the result does not depend on what is on PATH) and runs
# protoc once per directory. The generated files are committed; run this (or
# `make proto`) after editing a .proto file.
set -euo pipefail

PROTOC_GEN_GO_VERSION=v1.36.12
PROTOC_GEN_GO_GRPC_VERSION=v1.6.2

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$root/build/protoc-bin"
cd "$root"

protoc="${PROTOC:-protoc}"
# go_package paths are under the root module; the generated files go to the
# same path relative to the repository root.
module=github.com/zkhost/zkhost
if ! command -v "$protoc" >/dev/null 2>&1; then
	echo "gen.sh: protoc not found (install protobuf-compiler, or set PROTOC)" >&2
	exit 1
fi

mkdir -p "$bin"
# go install with an explicit version ignores the main module, so the pins here
# are all that decide which generator runs.
install_pinned() {
	local pkg="$1" version="$2" name="$3" stamp="$bin/.$3.version"
	if [[ -x "$bin/$name" && -f "$stamp" && "$(cat "$stamp")" == "$version" ]]; then
		return
	fi
	GOBIN="$bin" GOFLAGS= go install "$pkg@$version"
	echo "$version" >"$stamp"
}
install_pinned google.golang.org/protobuf/cmd/protoc-gen-go "$PROTOC_GEN_GO_VERSION" protoc-gen-go
install_pinned google.golang.org/grpc/cmd/protoc-gen-go-grpc "$PROTOC_GEN_GO_GRPC_VERSION" protoc-gen-go-grpc

# One protoc run per directory: files of one Go package are generated together.
mapfile -t dirs < <(find proto -name '*.proto' -printf '%h\n' | sort -u)
if [[ ${#dirs[@]} -eq 0 ]]; then
	echo "gen.sh: no .proto files under proto/" >&2
	exit 1
fi
for dir in "${dirs[@]}"; do
	mapfile -t files < <(find "$dir" -maxdepth 1 -name '*.proto' | sort)
	rel=()
	for f in "${files[@]}"; do rel+=("${f#proto/}"); done
	echo "gen.sh: $dir"
	"$protoc" \
		--plugin=protoc-gen-go="$bin/protoc-gen-go" \
		--plugin=protoc-gen-go-grpc="$bin/protoc-gen-go-grpc" \
		-I proto \
		--go_out=. --go_opt=module="$module" \
		--go-grpc_out=. --go-grpc_opt=module="$module" \
		"${rel[@]}"
done
