#!/bin/bash
# Staging-then-promote with the JFrog CLI: each wheel is uploaded to a staging repository
# (which no consumer resolves from), checked with `wheelgate check` (the publish profile,
# plus any target facts in WHEELGATE_ARGS), then moved to the release repository when it
# passes, or to the quarantine repository, with wheelgate.* properties, when it fails.
# Nothing reaches the release repository unchecked; the staging repository does store every
# wheel first, so point consumers only at the release repository.
#
# Usage: stage-and-promote.sh WHEEL...
# Environment (defaults in brackets):
#   STAGING_REPO [pypi-staging]  RELEASE_REPO [pypi-local]  QUARANTINE_REPO [pypi-quarantine]
#   REPO_PATH    path inside the repositories, e.g. "mypkg/" [the wheel's project name + /]
#   WHEELGATE    [wheelgate]     WHEELGATE_ARGS extra `wheelgate check` options, e.g.
#                                "--profile install --target python=3.12,torch=2.8.0+cu128"
#   REPORT_DIR   where the JSON reports go [.]
#   JF           the JFrog CLI [jf], configured beforehand (`jf c add` or JF_URL/JF_ACCESS_TOKEN)
# Exit status: 0 every wheel promoted, 1 one or more quarantined, 2 usage or tool failure
# (what was not yet decided stays in staging).
# SPDX-License-Identifier: GPL-3.0-or-later
set -euo pipefail

STAGING_REPO=${STAGING_REPO:-pypi-staging}
RELEASE_REPO=${RELEASE_REPO:-pypi-local}
QUARANTINE_REPO=${QUARANTINE_REPO:-pypi-quarantine}
WHEELGATE=${WHEELGATE:-wheelgate}
REPORT_DIR=${REPORT_DIR:-.}
JF=${JF:-jf}
read -r -a wg_args <<<"${WHEELGATE_ARGS:---profile publish}"

if [ $# -eq 0 ]; then
	echo "usage: $0 WHEEL..." >&2
	exit 2
fi
for w in "$@"; do
	case "$w" in
	*.whl) [ -f "$w" ] || { echo "$0: $w: no such file" >&2; exit 2; } ;;
	*) echo "$0: $w: not a wheel (.whl)" >&2; exit 2 ;;
	esac
done
mkdir -p "$REPORT_DIR"

# The blocking rule ids of a check report (JSON on stdin), comma-separated.
rule_ids() {
	python3 -c '
import json, sys
d = json.load(sys.stdin)
rank = {"info": 0, "warning": 1, "error": 2}
floor = rank.get(d.get("fail_on"), 2)
print(",".join(sorted({f["rule"] for i in d["inputs"] for f in i.get("findings", [])
                       if rank.get(f.get("severity"), -1) >= floor})))'
}

failed=0
for w in "$@"; do
	name=$(basename "$w")
	dir=${REPO_PATH-${name%%-*}/}
	staged="$STAGING_REPO/$dir$name"
	"$JF" rt upload --flat "$w" "$staged" || { echo "$0: $name: upload to staging failed" >&2; exit 2; }

	report="$REPORT_DIR/$name.wheelgate.json"
	rc=0
	"$WHEELGATE" check --no-config "${wg_args[@]}" --format json -o "$report" "$w" || rc=$?
	case $rc in
	0)
		"$JF" rt move --flat "$staged" "$RELEASE_REPO/$dir$name" || exit 2
		"$JF" rt set-props "$RELEASE_REPO/$dir$name" "wheelgate.verdict=pass" || exit 2
		echo "$name: pass: promoted to $RELEASE_REPO/$dir$name"
		;;
	1 | 2)
		verdict=$([ $rc -eq 1 ] && echo fail || echo error)
		rules=$(rule_ids <"$report")
		"$JF" rt move --flat "$staged" "$QUARANTINE_REPO/$dir$name" || exit 2
		props="wheelgate.verdict=$verdict"
		[ -n "$rules" ] && props="$props;wheelgate.rules=$rules"
		"$JF" rt set-props "$QUARANTINE_REPO/$dir$name" "$props" || exit 2
		echo "$name: $verdict${rules:+ ($rules)}: quarantined in $QUARANTINE_REPO/$dir$name;" \
			"report: $report" >&2
		failed=1
		;;
	*)
		echo "$0: $name: wheelgate check failed to run (exit $rc); left in $staged" >&2
		exit 2
		;;
	esac
done
exit $failed
