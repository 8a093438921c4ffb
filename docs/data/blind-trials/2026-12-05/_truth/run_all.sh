#!/bin/bash
# Runs every truth on Warp 1.19.0 (the worktree venv) and 1.0.2 (the defects4warp env), writes NAME.truth.txt.
cd "$(dirname "$0")"
PY119=../../../../../.venv/bin/python
PY102=~/.cache/defects4warp/envs/warp-1.0.2/bin/python
for f in ${@:-$(ls *.py | grep -v common.py)}; do
  n=${f%.py}
  {
    head -3 $f | sed 's/^/# /' | grep -v '^# """$' | head -2
    for py in $PY119 $PY102; do
      $py $f 2>/dev/null | sed -n "/^# $n /,\$p"
      echo
    done
  } > $n.truth.txt
  grep "^# $n\|^iteration" $n.truth.txt | cut -c1-150
done
