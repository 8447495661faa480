#!/usr/bin/env bash
# Says whether a change to the CUDA sources changed the machine code: builds the kernels of REV
# (in a temporary worktree) and of the working tree for sm_90, and compares every object's
# functions by their SASS bodies (cuobjdump -sass), names aside: a refactor that renames types
# or templates, or reorders kernels, compares equal; one that changes an instruction does not.
# Needs nvcc, no GPU. Each build takes minutes (msm.cu is most of it). Exits 0 when every object
# has the same code; with ALLOW_ADDED=1 also when the working tree only adds functions (a new
# curve's kernels beside the old ones, which must stay the same).
#   scripts/sass-compare.sh HEAD       # the uncommitted change
#   scripts/sass-compare.sh main~3     # everything since main~3
#   ALLOW_ADDED=1 scripts/sass-compare.sh HEAD
set -euo pipefail
cd "$(dirname "$0")/.."
REV=${1:?usage: scripts/sass-compare.sh REV}
ARCH='-gencode arch=compute_90,code=[sm_90,compute_90]'
TMP=$(mktemp -d)
trap 'git worktree remove --force "$TMP/before" 2>/dev/null; rm -rf "$TMP"' EXIT
git worktree add --detach "$TMP/before" "$REV" >/dev/null
for side in before after; do
  src=$PWD; [ "$side" = before ] && src="$TMP/before"
  make -C "$src" cuda-lib CUDA_ARCH_FLAGS="$ARCH" CUDA_OUTDIR="$TMP/build-$side" >/dev/null
  mkdir -p "$TMP/sass-$side"
  for o in "$TMP/build-$side"/*.o; do cuobjdump -sass "$o" > "$TMP/sass-$side/$(basename "$o").sass"; done
done
python3 - "$TMP/sass-before" "$TMP/sass-after" <<'EOF'
import collections, os, sys

def bodies(path):
    """The multiset of a cuobjdump listing's function bodies, without their names."""
    # A body ends at the next function or at the "Fatbin" header of the listing's
    # next section (the PTX's), and its trailing blank lines are dropped: otherwise
    # the last function of a listing carries that header, and a change of which
    # function comes last reads as a change of code.
    out, body = collections.Counter(), None
    for line in open(path):
        if line.startswith('Fatbin'):
            if body is not None:
                out['\n'.join(body).rstrip()] += 1
            body = None
        elif 'Function :' in line:
            if body is not None:
                out['\n'.join(body).rstrip()] += 1
            body = []
        elif body is not None:
            body.append(line.rstrip())
    if body is not None:
        out['\n'.join(body).rstrip()] += 1
    return out

before, after = sys.argv[1], sys.argv[2]
allow_added = os.environ.get('ALLOW_ADDED') == '1'
same = True
for name in sorted(set(os.listdir(before)) | set(os.listdir(after))):
    a = bodies(os.path.join(before, name)) if os.path.exists(os.path.join(before, name)) else collections.Counter()
    b = bodies(os.path.join(after, name)) if os.path.exists(os.path.join(after, name)) else collections.Counter()
    gone, added = sum((a - b).values()), sum((b - a).values())
    if a == b:
        print(f"{name}: {sum(a.values())} functions, the same code")
    elif gone == 0:
        same = same and allow_added
        print(f"{name}: the {sum(a.values())} functions of before, the same code, and {added} added")
    else:
        same = False
        print(f"{name}: differs: {gone} functions only before, {added} only after")
sys.exit(0 if same else 1)
EOF
