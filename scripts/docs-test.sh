#!/usr/bin/env bash
# make docs-test: every shell block of README.md and docs/*.md, run as pasted, in
# order, in a fresh copy of the repository (the files git tracks or would add, no
# build outputs) with a fresh HOME, so nothing from this checkout or this user's
# state directory helps. A block is a ```sh or ```bash fence; the line before it
# may be `<!-- docs-test: skip: REASON -->` for one that cannot run here (a GPU, a
# cluster of machines, root): the reason is printed, so nothing is skipped silently.
# Each file's blocks run in one bash process (a `cd` or a variable carries over, as
# in one terminal), with errexit and pipefail; background jobs a file started are
# killed after it. The Go build and module caches are this machine's, so a run
# takes minutes; a cold one is timed in BENCHMARKS.md.
#
# DOCS="README.md docs/own-circuit.md" runs only those files; KEEP=1 keeps the copy.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
GO=${GO:-go}
DOCS=${DOCS:-README.md $(ls docs/*.md)}

# The caches, resolved before HOME changes (they default to paths under it).
export GOCACHE=$("$GO" env GOCACHE) GOMODCACHE=$("$GO" env GOMODCACHE) GOPATH=$("$GO" env GOPATH)
work=$(mktemp -d /tmp/zkhost-docs-test.XXXXXX)
if [ -z "${KEEP:-}" ]; then trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT; fi
mkdir -p "$work/repo" "$work/home"
git ls-files -z --cached --others --exclude-standard | (cd "$root" && tar --null -T - -cf -) | tar -C "$work/repo" -xf -
(cd "$work/repo" && git init -q && git add -A && git -c user.name=docs-test -c user.email=docs-test@localhost commit -qm copy)

# extract FILE: the file's shell blocks as one script, each announced and its
# failure located by the ERR trap.
extract() {
  awk -v file="$1" '
    /^<!-- docs-test: skip: .* -->$/ { skip = $0; sub(/^<!-- docs-test: skip: /, "", skip); sub(/ -->$/, "", skip); next }
    !inblock && /^```(sh|bash)[[:space:]]*$/ {
      inblock = 1; start = NR
      if (skip != "") { printf "echo \"docs-test: %s:%d skipped: %s\" >&2\n", file, NR, skip; skipping = 1 }
      else { printf "__block=\"%s:%d\"; echo \"== %s:%d\" >&2\n", file, NR, file, NR; skipping = 0 }
      skip = ""; next
    }
    inblock && /^```[[:space:]]*$/ { inblock = 0; next }
    inblock && !skipping { print; next }
    !/^[[:space:]]*$/ { skip = "" }
  ' "$1"
}

failed=0 ran=0

# Go blocks: each is an excerpt of a file that is compiled and tested (marked
# `<!-- docs-test: go FILE -->`), every line of it found in that file, or is marked
# skipped with its reason. A snippet edited apart from its file fails here.
for doc in $DOCS; do
  awk -v file="$doc" '
    /^<!-- docs-test: go .* -->$/ { src = $4; next }
    /^<!-- docs-test: skip: .* -->$/ { skip = 1; next }
    !inblock && /^```go[[:space:]]*$/ {
      inblock = 1; start = NR
      if (!skip && src == "") { printf "docs-test: %s:%d: a Go block with no <!-- docs-test: go FILE --> or skip marker\n", file, NR; bad = 1 }
      next
    }
    inblock && /^```[[:space:]]*$/ { inblock = 0; src = ""; skip = 0; next }
    inblock && src != "" { line = $0; sub(/^[[:space:]]+/, "", line); if (line != "") print src "\t" file ":" NR "\t" line; next }
    !inblock && !/^[[:space:]]*$/ { src = ""; skip = 0 }
    END { exit bad }
  ' "$doc" >"$work/go-lines" || failed=$((failed + 1))
  while IFS=$'\t' read -r src where line; do
    # grep reads to the end (no -q): with -q it may exit at the first match
    # and sed, still writing, die of SIGPIPE, which pipefail makes a miss.
    if ! sed 's/^[[:space:]]*//' "$src" | grep -xF -- "$line" >/dev/null; then
      echo "docs-test: $where: this line of the Go block is not in $src: $line" >&2
      failed=$((failed + 1))
    fi
  done <"$work/go-lines"
done
for doc in $DOCS; do
  script="$work/$(echo "$doc" | tr / _).sh"
  body=$(extract "$doc")
  if ! grep -q '^__block=' <<<"$body"; then
    if [ -n "$body" ]; then bash -c "$body"; fi # the skip notices
    continue
  fi
  {
    echo 'set -eE -o pipefail'
    echo 'trap '\''echo "docs-test: $__block: the block failed at: $BASH_COMMAND" >&2'\'' ERR'
    echo "$body"
  } >"$script"
  echo "docs-test: $doc"
  start=$(date +%s)
  # A fresh user: HOME is empty, no XDG or zkhost variables; setsid, so every process
  # the file left running is killed with its group.
  if (cd "$work/repo" && env -u XDG_STATE_HOME -u XDG_CACHE_HOME -u XDG_RUNTIME_DIR -u ZKHOST_CONFIG -u ZKHOST_API \
      HOME="$work/home" setsid bash "$script" </dev/null >"$script.log" 2>&1 & pid=$!; wait $pid; rc=$?; kill -- -$pid 2>/dev/null; exit $rc); then
    echo "docs-test: $doc passed in $(( $(date +%s) - start )) s"
  else
    failed=$((failed + 1))
    echo "docs-test: $doc FAILED after $(( $(date +%s) - start )) s; its output:" >&2
    tail -n 60 "$script.log" >&2
  fi
  ran=$((ran + 1))
  grep -h '^docs-test: .* skipped: ' "$script.log" || true
done
# What the blocks left behind in the copy, beside what git ignores: files a user would
# find untracked in their clone.
left=$(cd "$work/repo" && git status --porcelain --untracked-files=all | head -n 20)
if [ -n "$left" ]; then
  echo "docs-test: the documented commands left untracked files in the repository:" >&2
  echo "$left" >&2
  failed=$((failed + 1))
fi
echo "docs-test: $ran files with shell blocks run, $failed failed"
[ "$failed" -eq 0 ]
