"""The small test harness the CLI test scripts share: a registry of test functions, a Skip
exception, JSON Schema validation through python3-jsonschema (which lives in Debian's
/usr/bin/python3, not necessarily the interpreter running the tests), and a runner that prints
one line per test and closes with "N passed, N failed, N skipped".

A Skip is for what CI may lack too (a GPU, nvcc, a CUDA toolkit). A Missing is for what CI
always has (../shared, python3-jsonschema, the tools scripts/setup.sh --test installs): outside
CI the test is skipped and says so; in CI (CI=true in the environment) it fails. A script that skipped for lack of such a prerequisite,
and failed nothing, exits with SKIPPED (77), which CTest reports as Skipped, not Passed."""
import atexit
import os
import subprocess
import sys
import traceback

TESTS = []
NOTES = []
SKIPPED = 77


def in_ci():
    return os.environ.get("CI", "").lower() in ("true", "1", "yes")


class Skip(Exception):
    pass


class Missing(Skip):
    pass


def need_path(path, what):
    """Raises Missing unless path exists; what names it (e.g. "the corpus")."""
    if not os.path.exists(path):
        raise Missing("%s not found at %s" % (what, path))


def _no_jsonschema(why, required):
    if required or in_ci():
        raise Missing(why)
    # Outside CI a test that only validates in passing goes on, but says it did not validate.
    if why not in NOTES:
        print("NOTE: JSON Schema validation skipped:", why)
        NOTES.append(why)


def test(fn):
    TESTS.append(fn)
    return fn


def validate(doc, schema, python, draft="Draft7Validator", required=True):
    """Validates doc (JSON text or bytes) against the schema file. Without jsonschema the
    test is skipped (required) or the validation alone is (not required)."""
    if not python or not os.access(python, os.X_OK):
        return _no_jsonschema("no python3 with jsonschema at %r (install python3-jsonschema)"
                              % python, required)
    if isinstance(doc, str):
        doc = doc.encode()
    code = ("import json,sys,jsonschema;s=json.load(open(sys.argv[1]));d=json.load(sys.stdin);"
            "V=getattr(jsonschema,sys.argv[2]);V.check_schema(s);"
            "e=sorted(V(s).iter_errors(d),key=str);"
            "[print(x.message,list(x.path)) for x in e[:5]];sys.exit(1 if e else 0)")
    p = subprocess.run([python, "-c", code, schema, draft], input=doc, capture_output=True)
    if b"No module named 'jsonschema'" in p.stderr:
        return _no_jsonschema("python3-jsonschema is not installed for " + python, required)
    assert p.returncode == 0, "schema %s: %s%s" % (schema, p.stdout.decode(),
                                                  p.stderr.decode()[-500:])


def main():
    """Runs every test; returns 1 when any failed, SKIPPED when what CI has was missing here,
    else 0. The process exits with that outcome even when the script drops it (four scripts
    ended in a bare main(), and ctest saw their failures as passes)."""
    rc = _run()
    if rc:
        atexit.register(_exit_with, rc)
    return rc


def _exit_with(rc):
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(rc)


def _run():
    passed = failed = skipped = missing = 0
    for t in TESTS:
        try:
            t()
            print("PASS", t.__name__)
            passed += 1
        except Missing as e:
            if in_ci():
                print("FAIL", t.__name__ + ":", e, "(CI=true: CI must have it)")
                failed += 1
            else:
                print("SKIP", t.__name__ + ":", e, "(a failure in CI)")
                skipped += 1
                missing += 1
        except Skip as e:
            print("SKIP", t.__name__ + ":", e)
            skipped += 1
        except Exception:
            print("FAIL", t.__name__)
            traceback.print_exc()
            failed += 1
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    if NOTES:
        print("NOTE: some JSON output was not validated against its schema:", "; ".join(NOTES))
    if failed:
        return 1
    if missing or NOTES:
        print("NOTE: what CI has was missing here: reported as skipped (CI=true fails instead)")
        return SKIPPED
    return 0
