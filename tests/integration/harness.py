"""The small test harness the CLI test scripts share: a registry of test functions, a Skip
exception, JSON Schema validation through python3-jsonschema (which lives in Debian's
/usr/bin/python3, not necessarily the interpreter running the tests), and a runner that prints
one line per test and closes with "N passed, N failed, N skipped"."""
import subprocess
import traceback

TESTS = []


class Skip(Exception):
    pass


def test(fn):
    TESTS.append(fn)
    return fn


def validate(doc, schema, python, draft="Draft7Validator", required=True):
    """Validates doc (JSON text or bytes) against the schema file. Without jsonschema the
    test is skipped (required) or the validation alone is (not required)."""
    if not python:
        if not required:
            return
        raise Skip("no python3 with jsonschema (install python3-jsonschema)")
    if isinstance(doc, str):
        doc = doc.encode()
    code = ("import json,sys,jsonschema;s=json.load(open(sys.argv[1]));d=json.load(sys.stdin);"
            "V=getattr(jsonschema,sys.argv[2]);V.check_schema(s);"
            "e=sorted(V(s).iter_errors(d),key=str);"
            "[print(x.message,list(x.path)) for x in e[:5]];sys.exit(1 if e else 0)")
    p = subprocess.run([python, "-c", code, schema, draft], input=doc, capture_output=True)
    if b"No module named 'jsonschema'" in p.stderr:
        if not required:
            return
        raise Skip("python3-jsonschema is not installed")
    assert p.returncode == 0, "schema %s: %s%s" % (schema, p.stdout.decode(),
                                                  p.stderr.decode()[-500:])


def main():
    passed = failed = skipped = 0
    for t in TESTS:
        try:
            t()
            print("PASS", t.__name__)
            passed += 1
        except Skip as e:
            print("SKIP", t.__name__ + ":", e)
            skipped += 1
        except Exception:
            print("FAIL", t.__name__)
            traceback.print_exc()
            failed += 1
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0
