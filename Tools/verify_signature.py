#!/usr/bin/env python3
"""Reference verifier of signed liveness reports (report.sig, format liveness-signature/1).

It shares no code with the engine: Python's json and hashlib and the `cryptography` package
(Debian's python3-cryptography) only, following docs/signing.md. It shows that another language
can verify a report, and the tests run it against what `liveness analyze --sign-key` writes.

usage: verify_signature.py FOLDER --public-key liveness.pub [--input FILE]
exit code 0 valid, 1 invalid, 2 usage error (as `liveness verify`).
"""
import argparse
import base64
import binascii
import hashlib
import json
import os
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_public_key


def canonical(value):
    """The canonical form (docs/signing.md): sorted keys, no whitespace, UTF-8, Python's numbers."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key")
    return dict(pairs)


def load_json(path):
    with open(path, "rb") as f:
        return json.loads(f.read().decode("utf-8"), object_pairs_hook=no_duplicates,
                          parse_constant=lambda name: (_ for _ in ()).throw(ValueError(name)))


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify(folder, key, input_path=None):
    """The problems found (an empty list: valid)."""
    try:
        envelope = load_json(os.path.join(folder, "report.sig"))
        signature = base64.b64decode(envelope.pop("signature"), validate=True)
    except (OSError, ValueError, KeyError, AttributeError, binascii.Error) as error:
        return [f"report.sig: unreadable or malformed ({error})"]
    if envelope.get("format") != "liveness-signature/1" or envelope.get("algorithm") != "Ed25519":
        return ["report.sig: not liveness-signature/1 with Ed25519"]
    try:
        key.verify(signature, canonical(envelope))
    except InvalidSignature:
        return ["signature: does not verify with the trusted key"]
    problems = []
    signed_report = envelope["report"]
    if hashlib.sha256(canonical(signed_report)).hexdigest() != envelope["reportSha256"]:
        problems.append("report.sig: reportSha256 is not the digest of its report")
    if hashlib.sha256(canonical(signed_report["policy"])).hexdigest() != envelope["policySha256"]:
        problems.append("report.sig: policySha256 is not the digest of its report's policy")
    try:
        report = load_json(os.path.join(folder, "report.json"))
        if canonical(report) != canonical(signed_report):
            changed = sorted(k for k in set(report) | set(signed_report) if report.get(k, None) != signed_report.get(k, None)
                             or (k in report) != (k in signed_report))
            problems.append("report.json: differs from the signed report in " + ", ".join(changed))
    except (OSError, ValueError) as error:
        problems.append(f"report.json: unreadable ({error})")
    for role, still in sorted(envelope["stills"].items()):
        if still is None:
            if os.path.exists(os.path.join(folder, role + ".jpg")):
                problems.append(f"{role}.jpg: not part of the signed result")
            continue
        path = os.path.join(folder, still["file"])
        if not os.path.isfile(path):
            problems.append(f"{still['file']}: missing")
        elif sha256_file(path) != still["sha256"]:
            problems.append(f"{still['file']}: differs from the signed {role}")
    if input_path is not None:
        signed_input = envelope["input"]
        if signed_input["sha256"] is None:
            problems.append("input: the signature holds no digest of its input")
        elif sha256_file(input_path) != signed_input["sha256"]:
            problems.append("input: not the signed input")
    return problems


def main():
    parser = argparse.ArgumentParser(description="Verify a signed liveness report folder.")
    parser.add_argument("folder")
    parser.add_argument("--public-key", required=True, help="the trusted liveness.pub (PEM)")
    parser.add_argument("--input", help="the judged input file, to check its digest")
    args = parser.parse_args()
    try:
        with open(args.public_key, "rb") as f:
            key = load_pem_public_key(f.read())
    except (OSError, ValueError) as error:
        print(f"error: {args.public_key}: {error}", file=sys.stderr)
        return 2
    if not isinstance(key, Ed25519PublicKey):
        print(f"error: {args.public_key}: not an Ed25519 public key", file=sys.stderr)
        return 2
    problems = verify(args.folder, key, args.input)
    print(f"{args.folder}: " + ("valid" if not problems else "INVALID"))
    for problem in problems:
        print("  " + problem)
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
