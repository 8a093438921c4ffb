#!/bin/bash
# Runs the tool as a user would, one script at a time: no flags on 1.19.0, then --warp 1.0.2.
cd "$(dirname "$0")/.."
D4W=/work/wt-blind5/.venv/bin/defects4warp
for n in ${@:-$(ls -d */ | tr -d / | grep -v _truth)}; do
  (cd $n && s=$(date +%s) && timeout 300 $D4W diagnose train.py --json out.json > tool.log 2>&1; echo "rc=$? wall=$(( $(date +%s) - s ))s" > tool.rc)
  echo "$n 1.19.0 $(cat $n/tool.rc) $(grep -m1 '^verdict' $n/tool.log)"
  (cd $n && s=$(date +%s) && timeout 300 $D4W diagnose train.py --warp 1.0.2 --json out-1.0.2.json > tool-1.0.2.log 2>&1; echo "rc=$? wall=$(( $(date +%s) - s ))s" > tool-1.0.2.rc)
  echo "$n 1.0.2 $(cat $n/tool-1.0.2.rc) $(grep -m1 '^verdict' $n/tool-1.0.2.log)"
done
