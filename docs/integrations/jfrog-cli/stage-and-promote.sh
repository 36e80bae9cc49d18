#!/bin/bash
# Staging-then-promote with the JFrog CLI: each wheel is uploaded to a staging repository
# (which no consumer resolves from), checked, then moved to the release repository when it
# passes, or to the quarantine repository, with wheelgate.* properties, when it fails.
# Nothing reaches the release repository unchecked; the staging repository does store every
# wheel first, so point consumers only at the release repository.
#
# The check: `wheelgate check` here (the publish profile, plus any target facts in
# WHEELGATE_ARGS), or, with WHEELGATE_URL, `wheelgate serve`'s POST /v1/check, whose answer
# is the single-target document (wheelgate.check/1) or, with a fleet of targets in serve's
# config, the fleet envelope (wheelgate.fleet/1, its top-level verdict under the fleet's
# policy). Both are read. An answer that cannot be read (wheelgate not answering, a timeout,
# a status other than 200/422, not JSON, another schema, a report that contradicts the exit
# status) is never taken as a pass: see ON_UNREADABLE.
#
# Usage: stage-and-promote.sh WHEEL...
# Environment (defaults in brackets):
#   STAGING_REPO [pypi-staging]  RELEASE_REPO [pypi-local]  QUARANTINE_REPO [pypi-quarantine]
#   REPO_PATH    path inside the repositories, e.g. "mypkg/" [the wheel's project name + /]
#   WHEELGATE    [wheelgate]     WHEELGATE_ARGS extra `wheelgate check` options, e.g.
#                                "--profile install --target python=3.12,torch=2.8.0+cu128"
#   WHEELGATE_URL    check with `wheelgate serve` at this base URL instead (its fleet, when
#                    it has one, decides; WHEELGATE_ARGS is then not used) [unset]
#   WHEELGATE_TOKEN  its bearer token (--token), if it has one [unset]
#   WHEELGATE_TIMEOUT seconds one check through WHEELGATE_URL may take [120]
#   ON_UNREADABLE [quarantine]  what an unreadable answer does: quarantine (moved to the
#                    quarantine repository with wheelgate.verdict=unchecked; exit 1) or warn
#                    (promoted with wheelgate.verdict=unchecked and a warning). Any other
#                    value is a usage error.
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
WHEELGATE_URL=${WHEELGATE_URL:-}
WHEELGATE_TIMEOUT=${WHEELGATE_TIMEOUT:-120}
ON_UNREADABLE=${ON_UNREADABLE:-quarantine}
REPORT_DIR=${REPORT_DIR:-.}
JF=${JF:-jf}
read -r -a wg_args <<<"${WHEELGATE_ARGS:---profile publish}"

if [ $# -eq 0 ]; then
	echo "usage: $0 WHEEL..." >&2
	exit 2
fi
case $ON_UNREADABLE in
quarantine | warn) ;;
*) echo "$0: ON_UNREADABLE takes quarantine or warn, not '$ON_UNREADABLE'" >&2; exit 2 ;;
esac
for w in "$@"; do
	case "$w" in
	*.whl) [ -f "$w" ] || { echo "$0: $w: no such file" >&2; exit 2; } ;;
	*) echo "$0: $w: not a wheel (.whl)" >&2; exit 2 ;;
	esac
done
mkdir -p "$REPORT_DIR"

# Checks one wheel and reads the answer. Prints four lines: the verdict (pass, fail, error,
# or unchecked when the answer could not be read), the blocking rule ids and the failing
# targets (comma-separated, maybe empty), and a one-line detail.
#   judge local REPORT RC            the report `wheelgate check` wrote, and its exit status
#   judge serve REPORT WHEEL NAME    POST the wheel to $WHEELGATE_URL/v1/check, answer to REPORT
judge() {
	python3 - "$@" <<'PY'
import json, os, sys, urllib.error, urllib.parse, urllib.request

RANK = {"info": 0, "warning": 1, "error": 2}
VERDICTS = ("pass", "fail", "error")

class Unreadable(Exception):
    pass

def blocking(doc):
    floor = RANK.get(doc.get("fail_on"), 2)
    return {f["rule"] for i in doc.get("inputs") or [] for f in i.get("findings") or []
            if isinstance(f, dict) and isinstance(f.get("rule"), str)
            and RANK.get(f.get("severity"), -1) >= floor}

def check_verdict(doc, what):
    if not isinstance(doc, dict) or doc.get("schema") != "wheelgate.check/1":
        raise Unreadable("%s: schema %r, not wheelgate.check/1"
                         % (what, doc.get("schema") if isinstance(doc, dict) else None))
    inputs = doc.get("inputs")
    if (not isinstance(inputs, list) or len(inputs) != 1 or not isinstance(inputs[0], dict)
            or inputs[0].get("verdict") not in VERDICTS):
        raise Unreadable("%s: not one input with a verdict" % what)
    return inputs[0]["verdict"]

def read(doc):
    """(verdict, rules, failing targets, detail) of either document; Unreadable otherwise."""
    if not isinstance(doc, dict):
        raise Unreadable("the answer is not a JSON object")
    if doc.get("schema") == "wheelgate.check/1":
        v = check_verdict(doc, "the answer")
        return v, blocking(doc) if v == "fail" else set(), [], "wheelgate: " + v
    if doc.get("schema") != "wheelgate.fleet/1":
        raise Unreadable("unknown schema %r (read here: wheelgate.check/1, wheelgate.fleet/1)"
                         % doc.get("schema"))
    v, policy, targets = doc.get("verdict"), doc.get("policy"), doc.get("targets")
    if v not in VERDICTS:
        raise Unreadable("fleet: verdict %r" % v)
    if policy not in ("every", "any"):
        raise Unreadable("fleet: policy %r" % policy)
    if not isinstance(targets, list) or not targets:
        raise Unreadable("fleet: no targets")
    failed = []
    for t in targets:
        if (not isinstance(t, dict) or not isinstance(t.get("name"), str)
                or t.get("verdict") not in VERDICTS):
            raise Unreadable("fleet: a target without a name or verdict")
        if check_verdict(t.get("check"), "fleet: target " + t["name"]) != t["verdict"]:
            raise Unreadable("fleet: target %s: two verdicts" % t["name"])
        if t["verdict"] != "pass":
            failed.append(t)
    rules = set()
    if v == "fail":
        if doc.get("publish") is not None and check_verdict(doc["publish"], "fleet: publish") == "fail":
            rules |= blocking(doc["publish"])
        if len(failed) == len(targets) if policy == "any" else failed:
            for t in failed:
                rules |= blocking(t["check"])
    names = [t["name"] for t in failed]
    detail = "wheelgate: %s (fleet of %d, policy %s%s)" % (
        v, len(targets), policy, "; fails on " + ", ".join(names) if names else "")
    return v, rules, names if v != "pass" else [], detail

def main():
    mode, report = sys.argv[1], sys.argv[2]
    if mode == "local":
        rc = int(sys.argv[3])
        if rc not in (0, 1, 2):
            raise Unreadable("wheelgate check failed to run (exit %d)" % rc)
        try:
            with open(report, "rb") as f:
                doc = json.loads(f.read())
        except (OSError, ValueError) as e:
            raise Unreadable("no readable report: %s" % e)
        answer = read(doc)
        if answer[0] != VERDICTS[rc]:
            raise Unreadable("the report says %s, the exit status %d" % (answer[0], rc))
        return answer
    wheel, name = sys.argv[3], sys.argv[4]
    url = (os.environ["WHEELGATE_URL"].rstrip("/") + "/v1/check?"
           + urllib.parse.urlencode({"filename": name}))
    headers = {"Content-Type": "application/octet-stream"}
    if os.environ.get("WHEELGATE_TOKEN"):
        headers["Authorization"] = "Bearer " + os.environ["WHEELGATE_TOKEN"]
    with open(wheel, "rb") as f:
        req = urllib.request.Request(url, data=f.read(), headers=headers, method="POST")
    try:
        timeout = float(os.environ.get("WHEELGATE_TIMEOUT") or 120)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                status, body = r.status, r.read()
        except urllib.error.HTTPError as e:
            status, body = e.code, e.read()
    except (OSError, ValueError) as e:
        raise Unreadable("wheelgate unreachable: %s" % e)
    with open(report, "wb") as f:
        f.write(body)
    if status not in (200, 422):
        raise Unreadable("wheelgate answered %d: %s"
                         % (status, body[:300].decode("utf-8", "replace").strip()))
    try:
        doc = json.loads(body)
    except ValueError:
        raise Unreadable("the answer is not JSON: %r" % body[:100])
    return read(doc)

try:
    v, rules, targets, detail = main()
except Unreadable as e:
    v, rules, targets, detail = "unchecked", set(), [], "unreadable answer: %s" % e
print(v)
print(",".join(sorted(rules)))
print(",".join(targets))
print(" ".join(detail.split()))
PY
}

failed=0
for w in "$@"; do
	name=$(basename "$w")
	dir=${REPO_PATH-${name%%-*}/}
	staged="$STAGING_REPO/$dir$name"
	"$JF" rt upload --flat "$w" "$staged" || { echo "$0: $name: upload to staging failed" >&2; exit 2; }

	report="$REPORT_DIR/$name.wheelgate.json"
	rm -f "$report"
	if [ -n "$WHEELGATE_URL" ]; then
		answer=$(judge serve "$report" "$w" "$name" || true)
	else
		rc=0
		"$WHEELGATE" check --no-config "${wg_args[@]}" --format json -o "$report" "$w" || rc=$?
		answer=$(judge local "$report" "$rc" || true)
	fi
	verdict='' rules='' targets='' detail=''
	{ read -r verdict; read -r rules; read -r targets; IFS= read -r detail; } <<<"$answer" || true
	case $verdict in
	pass | fail | error) ;;
	*) verdict=unchecked detail=${detail:-"the answer could not be judged"} ;;
	esac
	props="wheelgate.verdict=$verdict"
	[ -n "$rules" ] && props="$props;wheelgate.rules=$rules"
	[ -n "$targets" ] && props="$props;wheelgate.targets=$targets"
	if [ "$verdict" = pass ] || { [ "$verdict" = unchecked ] && [ "$ON_UNREADABLE" = warn ]; }; then
		"$JF" rt move --flat "$staged" "$RELEASE_REPO/$dir$name" || exit 2
		"$JF" rt set-props "$RELEASE_REPO/$dir$name" "$props" || exit 2
		if [ "$verdict" = pass ]; then
			echo "$name: pass: promoted to $RELEASE_REPO/$dir$name"
		else
			echo "$name: unchecked: promoted to $RELEASE_REPO/$dir$name (ON_UNREADABLE=warn); $detail"
			echo "$0: warning: $name was promoted unchecked: $detail" >&2
		fi
	else
		"$JF" rt move --flat "$staged" "$QUARANTINE_REPO/$dir$name" || exit 2
		"$JF" rt set-props "$QUARANTINE_REPO/$dir$name" "$props" || exit 2
		echo "$name: $verdict${rules:+ ($rules)}${targets:+ on $targets}: quarantined in" \
			"$QUARANTINE_REPO/$dir$name; $detail; report: $report" >&2
		failed=1
	fi
done
exit $failed
