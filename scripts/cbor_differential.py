# The CBOR reader against cbor2 (PyPI), input by input: the fuzz binary reports its reading of each file
# (SWITCHBACK_FUZZ_REPORT), and this script decodes the same bytes with cbor2, strictly (one item, nothing
# after it), and holds the two to the rules below. Exits 1 on a disagreement the rules do not allow.
#
# usage: python3 scripts/cbor_differential.py BINARY DIR [DIR ...]
#
# Where both read an input, cbor2 reads the item our reader writes again (shortest heads, floats as 64 bits)
# as the same value as the input. Where only one reads it, the difference must be one the reader states:
#   - ours refuses and cbor2 reads: indefinite lengths, a map key twice, simple values other than
#     false/true/null/undefined, nesting deeper than 24, maps over 4096 pairs, embedded CBOR (tag 24) with
#     longer heads than needed. A truncated item, a reserved head, text that is not UTF-8 or trailing bytes
#     must be refused by both.
#   - cbor2 refuses and ours reads: only an item with a tag, whose content cbor2 refuses for the tag's meaning
#     (a date that is not a date, a bignum that is not bytes); our reader gives tags no meaning.
import hashlib, io, os, subprocess, sys
import cbor2

ALLOWED_REFUSALS = ("indefinite lengths", "a key twice", "simple value", "nested deeper", "more than 4096 pairs", "non-shortest lengths")

def strict(data):
    """cbor2's reading of exactly one item, or the exception."""
    stream = io.BytesIO(data)
    try:
        value = cbor2.CBORDecoder(stream).decode()
    except Exception as error:  # cbor2 raises its own errors, and RecursionError or ValueError for some inputs
        return None, error
    if stream.tell() != len(data):
        return None, ValueError("bytes follow the item")
    return value, None

def canonical(value):
    try:
        return cbor2.dumps(value, canonical=True)
    except Exception as error:
        return "unencodable: %r" % error

def main():
    binary, dirs = sys.argv[1], sys.argv[2:]
    files = sorted(os.path.join(d, name) for d in dirs for name in os.listdir(d))
    inputs = {}
    for path in files:
        data = open(path, "rb").read()
        inputs.setdefault(hashlib.sha256(data).hexdigest(), (path, data))
    env = dict(os.environ, SWITCHBACK_FUZZ_TARGET="cbor", SWITCHBACK_FUZZ_REPORT="1", ASAN_OPTIONS="detect_leaks=0", SWIFT_BACKTRACE="enable=no")
    paths = [path for path, _ in inputs.values()]
    reports = {}
    for start in range(0, len(paths), 500):
        run = subprocess.run([binary] + paths[start:start + 500], env=env, capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit("cbor_differential: the fuzz binary failed:\n" + run.stderr[-2000:])
        for line in run.stdout.splitlines():
            digest, verdict, rest = (line.split(" ", 2) + [""])[:3]
            reports[digest] = (verdict, rest)
    counts = {"both read": 0, "both refuse": 0, "only cbor2 reads (allowed)": 0, "only ours reads (a tag)": 0}
    failures = []
    for digest, (path, data) in inputs.items():
        if digest not in reports:
            failures.append("%s: no report from the fuzz binary" % path)
            continue
        verdict, rest = reports[digest]
        value, error = strict(data)
        if verdict == "accepted":
            written, tagged = rest.split(" ")
            if error is not None:
                if tagged == "1":
                    counts["only ours reads (a tag)"] += 1
                else:
                    failures.append("%s: ours reads it, cbor2 refuses: %s" % (path, error))
                continue
            again, again_error = strict(bytes.fromhex(written))
            if again_error is not None or canonical(again) != canonical(value):
                failures.append("%s: ours reads another value than cbor2 (written again as %s)" % (path, written[:80]))
                continue
            counts["both read"] += 1
        else:
            if error is None:
                if any(reason in rest for reason in ALLOWED_REFUSALS):
                    counts["only cbor2 reads (allowed)"] += 1
                else:
                    failures.append("%s: ours refuses (%s), cbor2 reads %r" % (path, rest, value))
                continue
            counts["both refuse"] += 1
    print("cbor_differential: %d inputs; %s" % (len(inputs), ", ".join("%s %d" % item for item in counts.items())))
    for failure in failures:
        print("  " + failure)
    sys.exit(1 if failures else 0)

main()
