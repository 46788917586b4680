#!/usr/bin/env bash
# Benchmark: upload and download of a 1 GiB resource through the API (disk blob store), next to a plain file copy on
# the same disk in the same run, and the server's peak RSS growth. See bench/README.md.
#
#   bash bench/resources.sh            one run; appends a block to bench/results/resources.md
#   bash bench/resources.sh --strict   exit 1 when a target is missed
#
# Tunables (environment): BENCH_SIZE_MIB (1024), BENCH_ROUNDS (3), BENCH_TARGET_PCT (70), BENCH_RSS_TARGET_MIB (64),
# BENCH_SAMPLE_MS (50), BENCH_NO_RECORD=1 (do not append to the results file), BENCH_PROFILE_DIR=DIR (run the server
# under `bun --cpu-prof-md --cpu-prof-dir=DIR`; slows it down, for finding where the time goes, not for figures).
#
# Everything (source file, copies, data directory, downloads) lives in one fresh temporary directory, so on one
# disk. Every timed step ends with the bytes durably on disk: the copy is `cp` then `sync FILE` (fsync of the copy),
# the upload answers only after the blob store has fsynced the blob (and its directory), the download is `curl -o`
# then `sync FILE`. Each round does copy, upload, download in turn; each is reported by its median round.
set -Eeuo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUN=$ROOT/node_modules/.bin/bun
[ -x "$BUN" ] || { echo "bench/resources.sh: Bun is missing; run 'npm ci' first" >&2; exit 2; }

SIZE_MIB=${BENCH_SIZE_MIB:-1024}
ROUNDS=${BENCH_ROUNDS:-3}
TARGET=${BENCH_TARGET_PCT:-70}
RSS_TARGET=${BENCH_RSS_TARGET_MIB:-64}
SAMPLE_MS=${BENCH_SAMPLE_MS:-50}
PROFILE_DIR=${BENCH_PROFILE_DIR:-}
RESULTS=$ROOT/bench/results/resources.md
STRICT=0
for a in "$@"; do
  case $a in
    --strict) STRICT=1 ;;
    --variants) ;; # bench/whoami.sh's, passed on by bench/run.sh: nothing to vary here
    *) echo "bench/resources.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done

# --- tools: curl (multipart upload streamed from disk, download), openssl (SHA-1) ---------------------------
TIME_BIN=
[ -x /usr/bin/time ] && TIME_BIN=/usr/bin/time # GNU time, for curl's own peak RSS (optional)

# shellcheck source=bench/common.sh
source bench/common.sh
need_packages curl openssl
bench_init resources

now_us() { echo "${EPOCHREALTIME/./}"; }
load1() { awk '{print $1}' /proc/loadavg; }
mbps() { awk -v b="$1" -v us="$2" 'BEGIN {printf "%.0f", b / us}'; } # bytes per µs = MB/s (10^6 B/s)
secs() { awk -v us="$1" 'BEGIN {printf "%.2f", us / 1e6}'; }
mib() { awk -v kb="$1" 'BEGIN {printf "%.1f", kb / 1024}'; }
median() { printf '%s\n' "$@" | sort -n | awk '{ a[NR] = $0 } END { print a[int((NR + 1) / 2)] }'; }
sha1_b64() { openssl dgst -sha1 -binary "$1" | base64; }
vm() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; } # vm PID VmRSS|VmHWM → kB

BYTES=$((SIZE_MIB * 1024 * 1024))
DATA=$TMP/data
SRC=$TMP/source.bin
echo "== working in $TMP ($(df -h --output=source,fstype,avail "$TMP" | awk 'NR == 2 {print $1 ", " $2 ", " $3 " free"}'))"
need_kb=$(((SIZE_MIB * 4 + 256) * 1024))
avail_kb=$(df -k --output=avail "$TMP" | awk 'NR == 2 {print $1}')
[ "$avail_kb" -ge "$need_kb" ] || { echo "bench/resources.sh: needs $((need_kb / 1024)) MiB free in $TMP, has $((avail_kb / 1024))" >&2; exit 1; }

# --- the source: one random MiB repeated (generating it must not dominate the run), fsynced -----------------
echo "== making a $SIZE_MIB MiB source file (a random 1 MiB block repeated)"
t0=$(now_us)
head -c 1048576 /dev/urandom >"$TMP/block"
for ((i = 0; i < SIZE_MIB; i++)); do cat "$TMP/block"; done >"$SRC"
sync "$SRC"
t1=$(now_us)
[ "$(stat -c %s "$SRC")" -eq "$BYTES" ] || { echo "bench/resources.sh: the source has the wrong size" >&2; exit 1; }
SRC_SHA1=$(sha1_b64 "$SRC")
echo "   made in $(secs $((t1 - t0))) s; SHA-1 (base64) $SRC_SHA1"

# --- Quarry -------------------------------------------------------------------------------------------
PASSWORD=bench-$(date +%s)-password
PORT=$("$BUN" run bench/lib.ts free-port)
BASE=http://127.0.0.1:$PORT
SERVER_CMD=("$BUN" run server/main.ts)
if [ -n "$PROFILE_DIR" ]; then
  mkdir -p "$PROFILE_DIR"
  PROFILE_DIR=$(cd "$PROFILE_DIR" && pwd)
  SERVER_CMD=("$BUN" --cpu-prof-md "--cpu-prof-dir=$PROFILE_DIR" run server/main.ts)
  echo "== profiling the server into $PROFILE_DIR (figures of this run are not comparable)"
fi
echo "== starting Quarry on 127.0.0.1:$PORT (data in $DATA)"
QUARRY_DATA_DIR=$DATA QUARRY_LISTEN=127.0.0.1:$PORT QUARRY_ADMIN_PASSWORD=$PASSWORD QUARRY_LOG_LEVEL=warn \
  QUARRY_MAX_RESOURCE_SIZE=2GiB "${SERVER_CMD[@]}" >"$TMP/quarry.log" 2>&1 &
QPID=$!
PIDS+=("$QPID")
"$BUN" run bench/lib.ts wait "$BASE/api/test" 30 || { echo "bench/resources.sh: Quarry did not start" >&2; exit 1; }
[ "$(readlink "/proc/$QPID/exe")" = "$(readlink -f "$BUN")" ] || { echo "bench/resources.sh: PID $QPID is not the Bun server" >&2; exit 1; }
JWT=$("$BUN" run bench/lib.ts login "$BASE" "$PASSWORD")
AUTH="Authorization: Bearer $JWT"
RSS_START=$(vm "$QPID" VmRSS)

# upload GUID FILE OUT.json: PUT the file as a multipart body with one part `file`, streamed from disk by curl
# (curl -F name=@file reads the file as it sends; it knows the length, so Content-Length is set). `Expect:` off, so
# curl does not wait for a 100 Continue. Prints curl's peak RSS in kB (or - without GNU time).
upload() {
  local code rssf=$TMP/curl-rss
  rm -f "$rssf"
  local pre=()
  [ -z "$TIME_BIN" ] || pre=("$TIME_BIN" -f '%M %U %S' -o "$rssf")
  bounded 900 ${pre[@]+"${pre[@]}"} curl -sS -X PUT -H "$AUTH" -H 'Expect:' \
    -F "file=@$2;type=application/octet-stream" -o "$3" -w '%{http_code}' "$BASE/api/resources/$1/raw" >"$TMP/code"
  code=$(cat "$TMP/code")
  [ "$code" = 200 ] || { echo "bench/resources.sh: upload answered HTTP $code: $(head -c 500 "$3")" >&2; exit 1; }
  UPLOAD_CURL_KB=- CURL_CPU=-
  [ ! -s "$rssf" ] || read -r UPLOAD_CURL_KB CURL_CPU < <(tail -n 1 "$rssf" | awk '{print $1, $2 + $3}')
}

# download GUID FILE: GET the contents into FILE.
download() {
  local code rssf=$TMP/curl-rss
  rm -f "$rssf"
  local pre=()
  [ -z "$TIME_BIN" ] || pre=("$TIME_BIN" -f '%M %U %S' -o "$rssf")
  bounded 900 ${pre[@]+"${pre[@]}"} curl -sS -H "$AUTH" -o "$2" -w '%{http_code}' "$BASE/api/resources/$1/raw" >"$TMP/code"
  code=$(cat "$TMP/code")
  [ "$code" = 200 ] || { echo "bench/resources.sh: download answered HTTP $code" >&2; exit 1; }
  CURL_CPU=-
  [ ! -s "$rssf" ] || CURL_CPU=$(tail -n 1 "$rssf" | awk '{print $2 + $3}')
}

# CPU time (user + system) a process has used so far, in seconds.
TICKS=$(getconf CLK_TCK)
cpu_s() { awk -v t="$TICKS" '{ sub(/^.*\) /, ""); print ($12 + $13) / t }' "/proc/$1/stat"; }
# CPU ticks of each thread of a process, one line per thread: TID NAME TICKS (the main thread's name is "main").
thread_ticks() {
  local t
  for t in /proc/"$1"/task/*; do
    awk -v tid="${t##*/}" -v pid="$1" -v name="$(tr ' ' _ <"$t/comm" 2>/dev/null)" \
      '{ sub(/^.*\) /, ""); print tid, (tid == pid ? "main" : name), $12 + $13 }' "$t/stat" 2>/dev/null || true
  done
}
# thread_cpu BEFORE AFTER: the CPU seconds between two thread_ticks snapshots, summed by thread name, largest first.
thread_cpu() {
  awk -v t="$TICKS" 'NR == FNR { before[$1] = $3; next } { d[$2] += $3 - before[$1] }
    END { for (n in d) if (d[n] / t >= 0.05) printf "%s %.2f\n", n, d[n] / t }' "$1" "$2" | sort -k2 -nr | awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }'
}
sub_s() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.2f", a - b}'; }

delete_resource() { curl -sS -o /dev/null -X DELETE -H "$AUTH" "$BASE/api/resources/$1"; }

# Warm-up with the 1 MiB block: loads and compiles the upload/download paths (multipart parser, blob store) so
# that their one-off cost is not counted as growth caused by the 1 GiB transfer.
echo "== warm-up: 1 MiB upload and download"
G=$("$BUN" run bench/lib.ts resource "$BASE" "$JWT" warm-up)
upload "$G" "$TMP/block" "$TMP/warm.json"
download "$G" "$TMP/warm.bin"
cmp -s "$TMP/block" "$TMP/warm.bin" || { echo "bench/resources.sh: the warm-up download differs from its upload" >&2; exit 1; }
delete_resource "$G"
rm -f "$TMP/warm.bin" "$TMP/warm.json"
sleep 1

# --- RSS sampler: VmRSS of the server every SAMPLE_MS ms, "µs-timestamp kB" per line -------------------------
SAMPLES=$TMP/rss.txt
sampler() {
  local pid=$1 k v rest ival
  ival=$(awk -v ms="$SAMPLE_MS" 'BEGIN {printf "%.3f", ms / 1000}')
  trap - ERR
  set +e
  while [ -r "/proc/$pid/status" ]; do
    while read -r k v rest; do
      if [ "$k" = VmRSS: ]; then echo "${EPOCHREALTIME/./} $v"; break; fi
    done <"/proc/$pid/status" 2>/dev/null || break
    sleep "$ival"
  done
}
RSS_BASE=$(vm "$QPID" VmRSS)
HWM_BASE=$(vm "$QPID" VmHWM)
sampler "$QPID" >"$SAMPLES" &
SAMPLER=$!
PIDS+=("$SAMPLER")
sleep 0.5
echo "   server RSS: $(mib "$RSS_START") MiB after login, $(mib "$RSS_BASE") MiB after the warm-up (baseline)"

# peak_between T0 T1: highest sampled RSS (kB) with T0 <= time <= T1.
peak_between() { awk -v a="$1" -v b="$2" '$1 >= a && $1 <= b && $2 > m {m = $2} END {print m + 0}' "$SAMPLES"; }

# --- rounds: copy, upload, download ------------------------------------------------------------------
UP_THREADS=() COPY_US=() HASH_US=() CLIENT_US=() UP_US=() DOWN_US=() UP_CPU=() UP_CURL_CPU=() DOWN_CPU=() DOWN_CURL_CPU=() LOADS=() UP_PEAK=() DOWN_PEAK=() CURL_KB=()
for r in $(seq "$ROUNDS"); do
  L=$(load1)
  LOADS+=("$L")
  echo "== round $r of $ROUNDS (load $L)"

  rm -f "$TMP/copy.bin"
  t0=$(now_us)
  bounded 600 cp "$SRC" "$TMP/copy.bin"
  bounded 600 sync "$TMP/copy.bin"
  t1=$(now_us)
  COPY_US+=($((t1 - t0)))
  rm -f "$TMP/copy.bin"
  printf '   %-30s %6s s  %5s MB/s\n' "copy (cp + sync FILE)" "$(secs $((t1 - t0)))" "$(mbps "$BYTES" $((t1 - t0)))"

  # The floors, no Quarry involved: SHA-1 of the source alone (Bun.CryptoHasher, as the server; one core, from the
  # page cache), which every upload must compute; and the download client writing the same bytes from a local file
  # (curl file://) + sync.
  read -r us sum < <("$BUN" run bench/lib.ts sha1 "$SRC")
  [ "$sum" = "$SRC_SHA1" ] || { echo "bench/resources.sh: Bun's SHA-1 of the source is $sum, not $SRC_SHA1" >&2; exit 1; }
  HASH_US+=("$us")
  printf '   %-30s %6s s  %5s MB/s\n' "SHA-1 alone (Bun.CryptoHasher)" "$(secs "$us")" "$(mbps "$BYTES" "$us")"
  rm -f "$TMP/floor.bin"
  t0=$(now_us)
  bounded 600 curl -sS -o "$TMP/floor.bin" "file://$SRC"
  bounded 600 sync "$TMP/floor.bin"
  t1=$(now_us)
  CLIENT_US+=($((t1 - t0)))
  rm -f "$TMP/floor.bin"
  printf '   %-30s %6s s  %5s MB/s\n' "client (curl -o file:// + sync)" "$(secs $((t1 - t0)))" "$(mbps "$BYTES" $((t1 - t0)))"

  G=$("$BUN" run bench/lib.ts resource "$BASE" "$JWT" "bench-$r")
  c0=$(cpu_s "$QPID")
  thread_ticks "$QPID" >"$TMP/ticks0"
  t0=$(now_us)
  upload "$G" "$SRC" "$TMP/up.json"
  t1=$(now_us)
  UP_CPU+=("$(sub_s "$(cpu_s "$QPID")" "$c0")") UP_CURL_CPU+=("$CURL_CPU")
  thread_ticks "$QPID" >"$TMP/ticks1"
  UP_THREADS+=("round $r: $(thread_cpu "$TMP/ticks0" "$TMP/ticks1")")
  UP_US+=($((t1 - t0)))
  CURL_KB+=("$UPLOAD_CURL_KB")
  UP_PEAK+=("$(peak_between "$t0" "$t1")")
  SIZE=$("$BUN" run bench/lib.ts field "$TMP/up.json" Size)
  HASH=$("$BUN" run bench/lib.ts field "$TMP/up.json" Hash)
  [ "$SIZE" = "$BYTES" ] || { echo "bench/resources.sh: the resource's Size is $SIZE, not $BYTES" >&2; exit 1; }
  [ "$HASH" = "$SRC_SHA1" ] || { echo "bench/resources.sh: the resource's Hash $HASH is not the source's $SRC_SHA1" >&2; exit 1; }
  printf '   %-30s %6s s  %5s MB/s   server peak RSS %s MiB, curl peak RSS %s kB\n' "upload (curl -F file=@)" \
    "$(secs $((t1 - t0)))" "$(mbps "$BYTES" $((t1 - t0)))" "$(mib "${UP_PEAK[-1]}")" "$UPLOAD_CURL_KB"
  printf '   %-30s server %s s, curl %s s\n' "  CPU time (user + system)" "${UP_CPU[-1]}" "${UP_CURL_CPU[-1]}"

  rm -f "$TMP/down.bin"
  c0=$(cpu_s "$QPID")
  t0=$(now_us)
  download "$G" "$TMP/down.bin"
  bounded 600 sync "$TMP/down.bin"
  t1=$(now_us)
  DOWN_CPU+=("$(sub_s "$(cpu_s "$QPID")" "$c0")") DOWN_CURL_CPU+=("$CURL_CPU")
  DOWN_US+=($((t1 - t0)))
  DOWN_PEAK+=("$(peak_between "$t0" "$t1")")
  printf '   %-30s %6s s  %5s MB/s   server peak RSS %s MiB\n' "download (curl -o + sync FILE)" \
    "$(secs $((t1 - t0)))" "$(mbps "$BYTES" $((t1 - t0)))" "$(mib "${DOWN_PEAK[-1]}")"
  printf '   %-30s server %s s, curl %s s\n' "  CPU time (user + system)" "${DOWN_CPU[-1]}" "${DOWN_CURL_CPU[-1]}"
  GOT=$(sha1_b64 "$TMP/down.bin")
  [ "$GOT" = "$SRC_SHA1" ] || { echo "bench/resources.sh: the download's SHA-1 $GOT is not the source's $SRC_SHA1" >&2; exit 1; }
  rm -f "$TMP/down.bin"
  delete_resource "$G"
  sleep 1 # lets the server settle between rounds
done
LOADS+=("$(load1)")

PEAK=$(awk '$2 > m {m = $2} END {print m + 0}' "$SAMPLES")
NSAMPLES=$(wc -l <"$SAMPLES")
HWM_END=$(vm "$QPID" VmHWM)
RSS_END=$(vm "$QPID" VmRSS)
kill -TERM "$SAMPLER" 2>/dev/null || true
wait "$SAMPLER" 2>/dev/null || true
forget "$SAMPLER"
kill -TERM "$QPID" 2>/dev/null || true
for _ in $(seq 100); do kill -0 "$QPID" 2>/dev/null || break; sleep 0.1; done
kill -KILL "$QPID" 2>/dev/null || true
wait "$QPID" 2>/dev/null || true
forget "$QPID"
if [ -s "$TMP/quarry.log" ]; then echo "   Quarry logged (warn and above):"; sed 's/^/   | /' "$TMP/quarry.log" | head -20; fi

# --- report ------------------------------------------------------------------------------------------
C=$(median "${COPY_US[@]}")
H=$(median "${HASH_US[@]}")
K=$(median "${CLIENT_US[@]}")
U=$(median "${UP_US[@]}")
D=$(median "${DOWN_US[@]}")
C_MB=$(mbps "$BYTES" "$C")
U_MB=$(mbps "$BYTES" "$U")
D_MB=$(mbps "$BYTES" "$D")
U_PCT=$(pct "$C" "$U") # throughput ratio = inverse time ratio
D_PCT=$(pct "$C" "$D")
GROWTH_KB=$((PEAK - RSS_BASE))
GROWTH=$(mib "$GROWTH_KB")
HWM_GROWTH=$(mib $((HWM_END - RSS_BASE)))
per_round() { # US-ARRAY-NAME
  local -n arr=$1
  local out=() i
  for i in "${!arr[@]}"; do out+=("$(pct "${COPY_US[$i]}" "${arr[$i]}") %"); done
  echo "${out[*]}"
}
ok() { awk -v a="$1" -v op="$2" -v b="$3" 'BEGIN {exit !(op == ">=" ? a >= b : a < b)}'; }
verdict() { if ok "$@"; then echo met; else echo "NOT met"; fi; }
V_UP=$(verdict "$U_PCT" ">=" "$TARGET")
V_DOWN=$(verdict "$D_PCT" ">=" "$TARGET")
V_RSS=$(verdict "$GROWTH_KB" "<" $((RSS_TARGET * 1024)))
# Issue 17: the upload at least 80 % of the slower of its two floors, SHA-1 alone and the copy.
FLOOR=$(( H > C ? H : C ))
F_PCT=$(pct "$FLOOR" "$U")
V_FLOOR=$(verdict "$F_PCT" ">=" 80)
MISSED=0
for v in "$V_UP" "$V_DOWN" "$V_RSS" "$V_FLOOR"; do [ "$v" = met ] || MISSED=1; done

rounds_mb() { # US-ARRAY-NAME
  local -n arr=$1
  local out=() x
  for x in "${arr[@]}"; do out+=("$(mbps "$BYTES" "$x")"); done
  echo "${out[*]}"
}
peaks_mib() { local -n arr=$1; local out=() x; for x in "${arr[@]}"; do out+=("$(mib $((x - RSS_BASE)))"); done; echo "${out[*]}"; }

TABLE='| step | time (s) | MB/s | of copy | per round (MB/s) | server peak RSS growth (MiB) |'$'\n''| --- | ---: | ---: | ---: | --- | --- |'
TABLE+=$'\n'"| plain copy: \`cp\` + \`sync FILE\` | $(secs "$C") | $C_MB | 100.0 % | $(rounds_mb COPY_US) | |"
TABLE+=$'\n'"| floor: SHA-1 alone, \`Bun.CryptoHasher\` over the source in 1 MiB pieces (one core) | $(secs "$H") | $(mbps "$BYTES" "$H") | $(pct "$C" "$H") % | $(rounds_mb HASH_US) | |"
TABLE+=$'\n'"| floor: download client alone, \`curl -o FILE file://source\` + \`sync FILE\` | $(secs "$K") | $(mbps "$BYTES" "$K") | $(pct "$C" "$K") % | $(rounds_mb CLIENT_US) | |"
TABLE+=$'\n'"| upload: \`PUT …/raw\`, multipart, \`curl -F file=@\` | $(secs "$U") | $U_MB | $U_PCT % | $(rounds_mb UP_US) | $(peaks_mib UP_PEAK) |"
TABLE+=$'\n'"| download: \`GET …/raw\`, \`curl -o\` + \`sync FILE\` | $(secs "$D") | $D_MB | $D_PCT % | $(rounds_mb DOWN_US) | $(peaks_mib DOWN_PEAK) |"
SUMMARY="- upload / copy: **$U_PCT %** (per round $(per_round UP_US)); target at least $TARGET %: **$V_UP**"
SUMMARY+=$'\n'"- upload / the slower of SHA-1 alone and the copy (bench/README.md): **$F_PCT %**; target at least 80 %: **$V_FLOOR**"
SUMMARY+=$'\n'"- download / copy: **$D_PCT %** (per round $(per_round DOWN_US)); target at least $TARGET %: **$V_DOWN**"
SUMMARY+=$'\n'"- the floors against the copy: SHA-1 alone $(pct "$C" "$H") % (the upload's ceiling when it gets as much CPU as this step got; under load a one-thread step gets less than a multi-threaded one, so single rounds can beat it), the download client alone $(pct "$C" "$K") %; upload / SHA-1 alone $(pct "$H" "$U") %, download / client alone $(pct "$K" "$D") %"
SUMMARY+=$'\n'"- CPU time (user + system) per round, server / curl: upload ${UP_CPU[*]} / ${UP_CURL_CPU[*]} s, download ${DOWN_CPU[*]} / ${DOWN_CURL_CPU[*]} s; with $(nproc) cores an upload cannot take less wall time than its CPU time (server + curl) divided by $(nproc)"
SUMMARY+=$'\n'"- the server's upload CPU by thread (s; \`main\` is the JS thread, \`Worker\` the SHA-1 worker where used, \`Bun_Pool_N\` the file writes): $(printf '%s; ' "${UP_THREADS[@]}" | sed 's/; $//')"
SUMMARY+=$'\n'"- server peak RSS growth: **$GROWTH MiB** (peak $(mib "$PEAK") MiB of $NSAMPLES samples every $SAMPLE_MS ms, over the baseline $(mib "$RSS_BASE") MiB after the warm-up; $(mib "$RSS_START") MiB after login, before the warm-up); target under $RSS_TARGET MiB: **$V_RSS**"
SUMMARY+=$'\n'"- cross-check: VmHWM $(mib "$HWM_BASE") MiB at the baseline, $(mib "$HWM_END") MiB at the end ($HWM_GROWTH MiB over the baseline RSS); RSS at the end $(mib "$RSS_END") MiB; curl's peak RSS during the uploads ${CURL_KB[*]} kB"
SUMMARY+=$'\n'"- load average (1 min) at the start of each round and at the end: ${LOADS[*]}"

echo
echo "$TABLE"
echo
echo "$SUMMARY"

CPU=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
if [ "${BENCH_NO_RECORD:-0}" != 1 ]; then
  mkdir -p "$(dirname "$RESULTS")"
  [ -s "$RESULTS" ] || printf '# 1 GiB resource upload and download vs plain copy (disk blob store)\n\nAppended by `bash bench/resources.sh`, newest last. MB/s are 10^6 bytes per second; each step is reported by its median round.\n' >"$RESULTS"
  {
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- machine: $(nproc) CPUs (nproc), $CPU, $(uname -sr), $(free -g | awk '/^Mem:/ {print $2}') GiB RAM; disk $(df --output=source,fstype "$TMP" | awk 'NR == 2 {print $1 " (" $2 ")"}')"
    echo "- Bun $("$BUN" --version), $(curl --version | awk 'NR == 1 {print $1, $2}'), $(cp --version | awk 'NR == 1 {print "cp", $NF}'); Quarry with QUARRY_LOG_LEVEL=warn, QUARRY_MAX_RESOURCE_SIZE=2GiB${PROFILE_DIR:+, under --cpu-prof-md (profiled: figures not comparable)}"
    echo "- command: \`bash bench/resources.sh$([ "$STRICT" -eq 0 ] || echo ' --strict')\` ($SIZE_MIB MiB, a random MiB repeated; $ROUNDS rounds of copy, the two floors, upload, download; all files in one temp dir on one disk, every step ends fsynced, source in the page cache)"
    echo "- upload: \`curl -X PUT -H 'Expect:' -F 'file=@source;type=application/octet-stream' …/api/resources/<guid>/raw\`; download: \`curl -o file …/raw\` then \`sync file\`; both SHA-1 checked against the source and the resource's Hash"
    echo
    echo "$TABLE"
    echo
    echo "$SUMMARY"
  } >>"$RESULTS"
  echo "appended to ${RESULTS#"$ROOT"/}"
fi

if [ "$STRICT" -eq 1 ] && [ "$MISSED" -eq 1 ]; then exit 1; fi
