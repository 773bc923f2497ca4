#!/usr/bin/env python3
"""Third-party check of the companion's status rules with lists written by other libraries, read by
`switchback check-status` (the companion's own checker, given the list as a file):

- a Token Status List JWT (draft-ietf-oauth-status-list-20 §5.1) signed by joserfc for a Status Issuer
  whose certificate, made with `cryptography`, the credential's CA issued (§11.3, the certificate way): the
  entries read VALID and INVALID; the same list from a Status Issuer another trusted CA certified, with
  the anchor inside its x5c (HAIP 1.0 §6.1), or from another issuer of the same CA whose certificate does
  not name the list's host, is refused;
- an mdoc Identifier List Token (ISO/IEC 18013-5 second edition: COSE_Sign1, typ
  application/identifierlist+cwt, claim 65530) written with cbor2 and signed with `cryptography` by a
  list signer under the IACA: a listed identifier reads INVALID, another VALID; a wrong typ, another
  IACA, and a list under a certificate other than the one the MSO names are refused; a list under the
  named certificate (the trust point) is read.

Prints one line per check; exits 1 on the first failure.

usage: check_status.py PATH/TO/switchback
"""

import atexit
import base64
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.x509.oid import NameOID
from joserfc import jws
from joserfc.jwk import ECKey

from check_openid4vp import b64url, fail

NOW = datetime.datetime.now(datetime.timezone.utc)


def authority(name: str):
    """A self-signed CA: (certificate, key)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    certificate = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(NOW - datetime.timedelta(days=1))
                   .not_valid_after(NOW + datetime.timedelta(days=3650))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                   .sign(key, hashes.SHA256()))
    return certificate, key


def signer(ca, name: str, dns_name: str):
    """An end-entity signing certificate under `ca`: (certificate, key)."""
    ca_certificate, ca_key = ca
    key = ec.generate_private_key(ec.SECP256R1())
    builder = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
               .issuer_name(ca_certificate.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(NOW - datetime.timedelta(days=1)).not_valid_after(NOW + datetime.timedelta(days=365))
               .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
               .add_extension(x509.SubjectAlternativeName([x509.DNSName(dns_name)]), critical=False))
    return builder.sign(ca_key, hashes.SHA256()), key


def der(certificate) -> bytes:
    return certificate.public_bytes(serialization.Encoding.DER)


def pem(*certificates) -> str:
    return "".join(c.public_bytes(serialization.Encoding.PEM).decode() for c in certificates)


class Checker:
    def __init__(self, cli: str, directory: str):
        self.cli, self.directory, self.count = cli, directory, 0

    def file(self, content) -> str:
        self.count += 1
        path = os.path.join(self.directory, f"f{self.count}")
        with open(path, "wb" if isinstance(content, bytes) else "w") as handle:
            handle.write(content)
        return path

    def run(self, anchors: str, body, uri: str, *arguments):
        """`switchback check-status`'s exit status and what it printed."""
        run = subprocess.run([self.cli, "check-status", "--trust-anchors", self.file(anchors), "--list", self.file(body), "--uri", uri,
                              *arguments], capture_output=True, text=True, timeout=60)
        return run.returncode, (run.stdout + run.stderr).strip()

    def expect(self, what: str, expected: int, outcome):
        status, printed = outcome
        if status != expected:
            fail(f"{what}: exit {status} ({printed[:300]}), not {expected}")
        print(f"ok   {what}: {printed.splitlines()[-1][:140]}")


def status_list_jwt(key, chain, uri: str, revoked: set) -> str:
    """A one-bit Token Status List of 16 entries, `revoked` INVALID (§4.1, §4.2), signed by joserfc."""
    entries = bytearray(2)
    for index in revoked:
        entries[index // 8] |= 1 << (index % 8)
    payload = {"sub": uri, "iat": int(time.time()), "exp": int(time.time()) + 3600, "ttl": 300,
               "status_list": {"bits": 1, "lst": b64url(zlib.compress(bytes(entries)))}}
    header = {"alg": "ES256", "typ": "statuslist+jwt", "x5c": [base64.b64encode(der(c)).decode() for c in chain]}
    private = ECKey.import_key(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    registry = jws.JWSRegistry(algorithms=["ES256"])
    registry.max_header_length = 8192
    return jws.serialize_compact(header, json.dumps(payload), private, algorithms=["ES256"], registry=registry)


def identifier_list_cwt(key, chain, uri: str, identifiers, typ: str = "application/identifierlist+cwt") -> bytes:
    """An Identifier List Token: COSE_Sign1 (tag 18, ES256), typ (16) and x5chain (33) protected, claims sub (2),
    iat (6), exp (4), ttl (65534) and identifier_list (65530) {"identifiers": {id: {}}}."""
    x5chain = der(chain[0]) if len(chain) == 1 else [der(c) for c in chain]
    protected = cbor2.dumps({1: -7, 16: typ, 33: x5chain})
    claims = cbor2.dumps({2: uri, 6: int(time.time()), 4: int(time.time()) + 3600, 65534: 300,
                          65530: {"identifiers": {identifier: {} for identifier in identifiers}}})
    r, s = decode_dss_signature(key.sign(cbor2.dumps(["Signature1", protected, b"", claims]), ec.ECDSA(hashes.SHA256())))
    return cbor2.dumps(cbor2.CBORTag(18, [protected, {}, claims, r.to_bytes(32, "big") + s.to_bytes(32, "big")]))


def main() -> None:
    checker = Checker(sys.argv[1], tempfile.mkdtemp(prefix="switchback-status-"))
    atexit.register(shutil.rmtree, checker.directory, ignore_errors=True)

    # §11.3, the certificate way: the issuer and its Status Issuer certified by the same CA.
    ca, other = authority("Check PID CA"), authority("Check Other CA")
    issuer_certificate, _ = signer(ca, "Check PID Issuer", "issuer.example.com")
    status_certificate, status_key = signer(ca, "Check Status Issuer", "status.example.com")
    stranger_certificate, stranger_key = signer(other, "Check Other Status Issuer", "status.other.example.com")
    uri = "https://status.example.com/lists/1"
    anchors = pem(ca[0], other[0])
    credential = ["--issuer", "https://issuer.example.com", "--credential-chain", checker.file(pem(issuer_certificate))]
    token = status_list_jwt(status_key, [status_certificate], uri, {3})
    checker.expect("a Status Issuer the credential's CA certified, joserfc's list, entry 2", 0,
                   checker.run(anchors, token, uri, "--index", "2", *credential))
    checker.expect("the same list, entry 3 (revoked)", 1, checker.run(anchors, token, uri, "--index", "3", *credential))
    checker.expect("refused: a Status Issuer another trusted CA certified", 2,
                   checker.run(anchors, status_list_jwt(stranger_key, [stranger_certificate], uri, set()), uri, "--index", "2", *credential))
    checker.expect("refused: the anchor inside the list's x5c (HAIP 1.0 §6.1)", 2,
                   checker.run(anchors, status_list_jwt(status_key, [status_certificate, ca[0]], uri, set()), uri, "--index", "2", *credential))
    checker.expect("refused: the list for another uri (sub)", 2,
                   checker.run(anchors, token, uri + "0", "--index", "2", *credential))
    sibling_certificate, sibling_key = signer(ca, "Check Other Issuer", "other-issuer.example.com")
    checker.expect("refused: another issuer the same CA certified, its certificate not naming the list's host", 2,
                   checker.run(anchors, status_list_jwt(sibling_key, [sibling_certificate], uri, set()), uri, "--index", "3", *credential))

    # ISO/IEC 18013-5 second edition's identifier list, signed under the IACA that issued the mdoc.
    iaca = authority("Check IACA")
    list_signer, list_key = signer(iaca, "Check List Signer", "pid.example.com")
    uri = "https://pid.example.com/identifiers/1"
    revoked = b"revoked-mdoc"
    cwt = identifier_list_cwt(list_key, [list_signer], uri, [revoked, b"another"])
    checker.expect("cbor2's identifier list under the IACA, an identifier not listed", 0,
                   checker.run(pem(iaca[0]), cwt, uri, "--mdoc", "--id", b"valid-mdoc".hex()))
    checker.expect("the same list, the listed identifier (revoked)", 1,
                   checker.run(pem(iaca[0]), cwt, uri, "--mdoc", "--id", revoked.hex()))
    checker.expect("refused: a status list's typ on an identifier list", 2,
                   checker.run(pem(iaca[0]), identifier_list_cwt(list_key, [list_signer], uri, [revoked], typ="application/statuslist+cwt"),
                               uri, "--mdoc", "--id", revoked.hex()))
    other_iaca = authority("Check Other IACA")
    other_signer, other_key = signer(other_iaca, "Check Other Signer", "other.example.com")
    checker.expect("refused: an identifier list under another IACA", 2,
                   checker.run(pem(iaca[0]), identifier_list_cwt(other_key, [other_signer], uri, [revoked]), uri, "--mdoc", "--id",
                               revoked.hex()))
    # The certificate the MSO's status names: the list's signer must lead to it.
    point = checker.file(pem(other_iaca[0]))
    checker.expect("a list under the certificate the MSO names (trust point), the listed identifier", 1,
                   checker.run(pem(iaca[0]), identifier_list_cwt(other_key, [other_signer], uri, [revoked]), uri, "--mdoc", "--id",
                               revoked.hex(), "--trust-point", point))
    checker.expect("refused: the IACA's own list when the MSO names another certificate", 2,
                   checker.run(pem(iaca[0]), cwt, uri, "--mdoc", "--id", revoked.hex(), "--trust-point", point))


if __name__ == "__main__":
    main()
