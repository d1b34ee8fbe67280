#!/usr/bin/env bash
# A git repository as a forkpoint workspace: snapshot, fork 3, an agent commits in each
# fork, merge one back, go back two snapshots. .git is content: it travels with every
# snapshot, so git's history goes back and forth with the workspace.
# Run: bash examples/gitRepository.sh (after npm run build; FORKPOINT=COMMAND to use another)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
forkpoint() { "${FORKPOINT:-$root/bin/forkpoint}" "$@"; }
export GIT_AUTHOR_NAME=user GIT_AUTHOR_EMAIL=user@example.com GIT_COMMITTER_NAME=user GIT_COMMITTER_EMAIL=user@example.com

repo=$(mktemp -d)
branches=()
cleanup() {
  for branch in "${branches[@]}"; do forkpoint -C "$repo" abort "$branch" >/dev/null; done
  rm -rf "$repo"
}
trap cleanup EXIT
cd "$repo"

git init -q -b main
echo 'hello' >README.md
git add README.md && git commit -q -m first
forkpoint init # adds .forkpoint/ to .git/info/exclude: git status stays clean
first=$(forkpoint snapshot -m first 2>/dev/null)
echo 'world' >>README.md && git commit -q -a -m second
second=$(forkpoint snapshot -m second 2>/dev/null)

# three forks of the second snapshot; in each, an "agent" writes a file and commits it
forkpoint fork "$second" -n 3 --materialize >/dev/null
mapfile -t branches < <(forkpoint branch --list | cut -f1)
children=()
for i in 0 1 2; do
  agent="echo 'idea $i' >idea$i.txt && git add idea$i.txt && git -c user.name=agent$i -c user.email=agent@example.com commit -q -m 'agent $i'"
  forkpoint run --branch "${branches[$i]}" -- sh -c "$agent" 2>/dev/null
  children+=("$(forkpoint snapshot --branch "${branches[$i]}" 2>/dev/null)")
done

# the second agent's work comes back, its git commit with it
forkpoint merge "${children[1]}"
echo "after the merge: $(git log --format=%s | paste -sd ' ' -) ($(ls idea*.txt))"

# three snapshots in this history (first, second, the merged fork): go back two
forkpoint checkout "$first"
echo "two snapshots back: $(git log --format=%s | paste -sd ' ' -), README.md: $(cat README.md)"
echo "git status: $(git status --porcelain | wc -l) changes"
