#!/usr/bin/env bash
# Makes calltrace files (CALLTRACE_FILE.<pid>) readable and small, one process
# after another, on stdout:
#
#   tools/calltrace/symbolize.sh [-g] [-k MS] [-a REGEX] [-d REGEX] FILE...
#
# Lines go in the order of entry (sort by the first column, stable). Times
# become ms since the process's first call; with -g, since the first call of
# all FILEs (one time base for processes that ran together: CLOCK_MONOTONIC
# is the machine's). Thread ids become T1, T2, ... by first appearance. Every
# pointer and client GUID becomes a symbolic id per process, named after the
# argument where it first appeared (node_handle#1, guid#2); a buffer's id is
# one per argument and address (request#1: one address passed as a request,
# whatever else malloc later put there). Kept: the calls of the process's
# first MS ms (-k, default 1000) and every later call whose line matches
# REGEX (-a), less every line matching -d. Each process ends with
# '# COUNTS': every function's calls in the whole file.
set -euo pipefail
keep=1000 always='^$' drop='^$' global=0
while getopts gk:a:d: o; do
  case $o in
  g) global=1 ;;
  k) keep=$OPTARG ;;
  a) always=$OPTARG ;;
  d) drop=$OPTARG ;;
  *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))
base=
if [[ $global == 1 ]]; then
  base=$(for f in "$@"; do grep -v '^#' "$f" | sort -n -k1,1 | head -1 | cut -d' ' -f1; done | sort -n | head -1)
fi
n=0
for f in "$@"; do
  n=$((n + 1))
  { grep '^#' "$f" || true; grep -v '^#' "$f" | sort -s -n -k1,1; } |
    awk -v P="$n" -v t0="$base" -v keep="$keep" -v always="$always" -v drop="$drop" '
    # buffers (messages, requests, headers) are keyed by argument and address: malloc reuses their
    # addresses for anything; every other pointer (a handle) by its address alone
    function label(v, name,   key) {
      key = name ~ /^(message|request|response|header|sequence_number|options|type_support|gid|allocation|ros_message|serialized_message)$/ ? name "|" v : v
      if (!(key in id)) { k[name]++; id[key] = name "#" k[name] }
      return id[key]
    }
    /^# calltrace/ {
      sub(/ realtime_ns=[0-9]+ monotonic_ns=[0-9]+/, "")
      gsub(/\/[^ ]*\/install\/lib\/pulse_testnodes\//, "<ws>/lib/pulse_testnodes/")
      sub(/^# calltrace /, "=== P" P " ")
      print; next
    }
    {
      if (t0 == "") t0 = $1
      if (first == "") first = ($1 - t0) / 1e6
      count[$3]++
      if (!($2 in tid)) tid[$2] = "T" (++nt)
      ms = ($1 - t0) / 1e6
      if ($0 ~ drop || (ms - first > keep && $0 !~ always)) { dropped++; next }
      out = sprintf("%10.3f %-3s %s", ms, tid[$2], $3)
      rest = $0; sub(/^[^ ]+ [^ ]+ [^ ]+/, "", rest)
      # every name=value, values quoted with spaces kept whole
      while (match(rest, /^ [a-z_]+=("([^"\\]|\\.)*"|[^ ]*)/)) {
        kv = substr(rest, 2, RLENGTH - 1); rest = substr(rest, RLENGTH + 1)
        eq = index(kv, "="); name = substr(kv, 1, eq - 1); v = substr(kv, eq + 1)
        if (v ~ /^0x[0-9a-f]+$/) v = label(v, name)
        else if (name == "guid") v = label(v, "guid")
        out = out " " name "=" v
      }
      print out rest
    }
    END {
      if (dropped && always == "^$") printf "# %d later calls left out (kept: the first %s ms of the process)\n", dropped, keep
      else if (dropped) printf "# %d later calls left out (kept: the first %s ms of the process and lines matching /%s/)\n", dropped, keep, always
      printf "# COUNTS (whole run):"
      nf = 0; for (f in count) names[++nf] = f
      for (i = 2; i <= nf; i++) { x = names[i]; for (j = i - 1; j >= 1 && names[j] > x; j--) names[j + 1] = names[j]; names[j + 1] = x }
      for (i = 1; i <= nf; i++) printf " %s=%d", names[i], count[names[i]]
      printf "\n\n"
    }'
done
