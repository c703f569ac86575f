#!/usr/bin/env bash
# Checks the contracts other teams consume: proto/ with `buf lint` (buf.yaml) and `buf breaking`
# against the proto/ of a base commit, then the OpenAPI document of the built service with Redocly
# (scripts/ci/openapi-lint.mjs). Run from anywhere after `npm run build`; .ci/run calls it right
# after its build step.
#
# The base commit, first match wins:
#   1. BUF_AGAINST_REF, when set (e.g. a pull request's target branch in a CI that sets it);
#   2. on a branch: the merge base with origin/main, else with a local main (a worktree);
#   3. on main itself (CI's fresh clone): HEAD's first parent, i.e. main before the last commit
#      or merge, so the change being verified is what gets compared;
#   4. a repository with a single commit: HEAD itself (nothing earlier to break).
# A shallow clone may lack the merge base: CI should clone with full history (fetch-depth: 0).
set -euo pipefail
cd "$(dirname "$0")/../.."

buf=node_modules/.bin/buf
if [ ! -x "$buf" ]; then
  echo "contracts: $buf is missing; run npm ci first" >&2
  exit 1
fi

echo '--- buf lint (buf.yaml: STANDARD, with its recorded exceptions)'
"$buf" lint
echo 'buf lint: clean'

base_ref() {
  if [ -n "${BUF_AGAINST_REF:-}" ]; then
    git rev-parse --verify "${BUF_AGAINST_REF}^{commit}"
    return
  fi
  local upstream merge_base
  for upstream in origin/main main; do
    if git rev-parse --verify -q "${upstream}^{commit}" >/dev/null; then
      merge_base=$(git merge-base HEAD "$upstream" || true)
      if [ -n "$merge_base" ] && [ "$merge_base" != "$(git rev-parse HEAD)" ]; then
        echo "$merge_base"
        return
      fi
    fi
  done
  git rev-parse --verify -q 'HEAD~1^{commit}' || git rev-parse HEAD
}

base=$(base_ref)
echo "--- buf breaking against proto/ at $(git log -1 --format='%h %s' "$base")"
if [ "$(git rev-parse --is-shallow-repository)" = true ]; then
  echo 'note: shallow clone; the base may be newer than the real merge base'
fi
if git cat-file -e "$base:proto" 2>/dev/null; then
  # The base's proto/ beside today's buf.yaml (the base may predate it), so both sides are built
  # the same way. A plain directory rather than buf's `.git#ref=` input, which needs a .git
  # directory (a worktree has a .git file) and the full history in buf's own clone.
  against=$(mktemp -d)
  trap 'rm -rf "$against"' EXIT
  git archive "$base" proto | tar -x -C "$against"
  cp buf.yaml "$against/"
  "$buf" breaking --against "$against"
  echo 'buf breaking: compatible'
else
  echo "buf breaking: no proto/ at $base; nothing to compare"
fi

echo '--- redocly lint of GET /docs-json (redocly.yaml: recommended; .redocly.lint-ignore.yaml)'
node scripts/ci/openapi-lint.mjs
