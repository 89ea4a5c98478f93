#!/usr/bin/env bash
# Renders the real-ROS lane's capability rows (build/ros/*/table-*.tsv, written
# by scripts/test-ros.sh) for docs/REAL-ROS.md: a capability x lane matrix of
# verdicts, then every row with pulse's figure beside the nodes' own.
#   scripts/ros-table.sh build/ros/*/table-*.tsv
set -euo pipefail
(($#)) || { echo "usage: ros-table.sh TABLE.tsv..." >&2; exit 2; }
cat "$@" | awk -F'\t' '
  { gsub(/\|/, "\\|")
    lane = $2 " " ($3 == "rmw_cyclonedds_cpp" ? "Cyclone" : $3 == "rmw_fastrtps_cpp" ? "Fast DDS" : $3) ", " ($4 == "with" ? "LTTng" : "no LTTng")
    if (!(lane in seenL)) { seenL[lane] = 1; lanes[nl++] = lane }
    if (!($6 in seenC)) { seenC[$6] = 1; caps[nc++] = $6 }
    v = verdict[$6, lane]; verdict[$6, lane] = (v == "" || v == "PASS") ? $5 : v
    rows[nr++] = "| " $1 " | " lane " | " $6 " | " $5 " | " $7 " | " $8 " |" }
  END {
    printf "| capability |"; for (i = 0; i < nl; i++) printf " %s |", lanes[i]; print ""
    printf "|---|"; for (i = 0; i < nl; i++) printf "---|"; print ""
    for (c = 0; c < nc; c++) { printf "| %s |", caps[c]; for (i = 0; i < nl; i++) printf " %s |", verdict[caps[c], lanes[i]] == "" ? "-" : verdict[caps[c], lanes[i]]; print "" }
    print ""; print "| date | lane | capability | verdict | pulse | the nodes own |"; print "|---|---|---|---|---|---|"
    for (r = 0; r < nr; r++) print rows[r] }'
