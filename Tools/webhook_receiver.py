#!/usr/bin/env python3
"""A webhook receiver for `liveness serve` (docs/webhooks.md), on Python's standard library only
(http.server, hmac, hashlib), plus the `cryptography` package for the Ed25519 check. It shares no
code with the engine: it verifies each delivery as a relying party would, and the tests run it.

For each POST it checks the HMAC header (Liveness-Webhook-Signature: t=..,v1=.. over
"<t>.<delivery id>.<body>" with the shared secret, a timestamp within --tolerance seconds), and with
--public-key the Ed25519 signature of the report (Liveness-Report-Signature: report.sig,
liveness-signature/1, docs/signing.md, without its report member, in base64; the body is that member). It appends one JSON
line per request (of any method) to --record (headers, body, the checks, what it answered) and answers 500 to the
first --fail-first requests, a redirect to every request with --redirect-to, 200 otherwise.

usage: webhook_receiver.py --secret-file FILE --record FILE [--port N] [--fail-first N]
                           [--redirect-to URL] [--public-key liveness.pub] [--tolerance SECONDS]
Prints "listening on PORT" once it listens (port 0 picks a free one).
"""
import argparse
import base64
import hashlib
import hmac
import json
import os
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def hmac_valid(secret, header, delivery_id, body, tolerance, now=None):
    """True when `header` (t=..,v1=..) is the HMAC-SHA256 of "<t>.<delivery id>.<body>" under
    `secret` and t is within `tolerance` seconds of now."""
    try:
        fields = dict(part.split("=", 1) for part in header.split(","))
        t = int(fields["t"])
    except (ValueError, KeyError):
        return False
    if abs((now or time.time()) - t) > tolerance:
        return False
    expected = hmac.new(secret, f"{t}.{delivery_id}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, fields.get("v1", ""))


def report_signature_valid(public_key_path, header, body):
    """True when `header` (report.sig without its report member, base64) with the body put back as
    its report is signed by the key."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
    from verify_signature import canonical
    try:
        envelope = json.loads(base64.b64decode(header, validate=True))
        if "report" in envelope:
            return False
        envelope["report"] = json.loads(body)
        signature = base64.b64decode(envelope.pop("signature"), validate=True)
        with open(public_key_path, "rb") as f:
            key = load_pem_public_key(f.read())
        key.verify(signature, canonical(envelope))
        return True
    except (InvalidSignature, ValueError, KeyError, TypeError):
        return False


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--secret-file", required=True)
    parser.add_argument("--record", required=True)
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--redirect-to")
    parser.add_argument("--public-key")
    parser.add_argument("--tolerance", type=float, default=300)
    args = parser.parse_args()
    with open(args.secret_file, "rb") as f:
        secret = f.read().splitlines()[0].strip()
    lock = threading.Lock()
    count = [0]

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            with lock:
                count[0] += 1
                n = count[0]
            delivery = self.headers.get("Liveness-Delivery-Id", "")
            entry = {
                "n": n, "at": time.time(), "method": self.command, "path": self.path,
                "headers": {k.lower(): v for k, v in self.headers.items()},
                "body": body.decode("utf-8", "replace"),
                "hmacValid": hmac_valid(secret, self.headers.get("Liveness-Webhook-Signature", ""), delivery, body, args.tolerance),
            }
            if args.public_key and self.headers.get("Liveness-Report-Signature"):
                entry["signatureValid"] = report_signature_valid(args.public_key, self.headers["Liveness-Report-Signature"], body)
            if args.redirect_to:
                status = 302
            elif n <= args.fail_first:
                status = 500
            else:
                status = 200
            entry["answered"] = status
            with lock, open(args.record, "a") as f:
                f.write(json.dumps(entry) + "\n")
            self.send_response(status)
            if status == 302:
                self.send_header("Location", args.redirect_to)
            self.send_header("Content-Length", "0")
            self.end_headers()

        # Any other method is recorded too (a followed redirect may turn the POST into a GET).
        do_GET = do_PUT = do_HEAD = do_DELETE = do_PATCH = do_POST

        def log_message(self, *_):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    print(f"listening on {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
