#!/usr/bin/env python3
"""Third-party round trip of the companion's OpenID4VP verifier: joserfc reads its request objects and
writes the wallet's encrypted answers; sd-jwt issues and presents the credential.

Starts `switchback server` with a `wallet` section (a verifier key and certificate, and an issuer root made
here with `cryptography`), then plays the app and the wallet over HTTP:
- the app's `POST /wallet/start`; the wallet's POST to the request_uri with a wallet_nonce;
- joserfc verifies the request object's ES256 signature with the key of the certificate in `x5c`, whose
  SHA-256 must be the `x509_hash` client identifier, and its claims are checked (OpenID4VP 1.0 §5, §5.9.3,
  §5.10.1, HAIP 1.0 §5);
- sd-jwt issues an SD-JWT VC signed by an issuer certificate under the root (`x5c`) and presents two of
  its claims with a Key Binding JWT for the request's client_id and nonce;
- joserfc encrypts the answer with ECDH-ES to the request's key (A128GCM, then A256GCM), which the
  companion must open; the app redeems the response_code and must get exactly the disclosed claims.
Then the check is shown able to fail: an answer encrypted to another key, with an encryption the
request did not offer, with a tampered disclosure, and a request object signature checked against another
key must each be refused. Prints one line per check; exits 1 on the first failure.

usage: check_openid4vp.py PATH/TO/switchback
"""

import atexit
import base64
import datetime
import hashlib
import http.client
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import urllib.parse

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from joserfc import jwe, jws
from joserfc.errors import BadSignatureError, JoseError
from joserfc.jwk import ECKey
from jwcrypto.jwk import JWK
from sd_jwt.common import SDObj
from sd_jwt.holder import SDJWTHolder
from sd_jwt.issuer import SDJWTIssuer

APP_LINK = "https://app.example.com/wallet-return"
BINDING = "app-binding-" + secrets.token_urlsafe(24)


def fail(message: str) -> None:
    print(f"FAIL {message}")
    sys.exit(1)


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def certificate_pair(name: str, dns_name: str, document_signer: bool = False):
    """A root and an end-entity signing certificate for `dns_name` under it; returns (root PEM, leaf DER, leaf key).
    With `document_signer`, the leaf is an mdoc document signer's as ISO/IEC 18013-5 Annex B profiles it: its
    extended key usage names id-mdl-kp-mdlDS (1.0.18013.5.1.2), critical."""
    now = datetime.datetime.now(datetime.timezone.utc)
    root_key = ec.generate_private_key(ec.SECP256R1())
    root_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name + " Root")])
    root = (x509.CertificateBuilder().subject_name(root_name).issuer_name(root_name).public_key(root_key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, False, False, False), critical=True)
            .sign(root_key, hashes.SHA256()))
    leaf_key = ec.generate_private_key(ec.SECP256R1())
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
            .issuer_name(root_name).public_key(leaf_key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=365))
            .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(dns_name)]), critical=False))
    if document_signer:
        leaf = leaf.add_extension(x509.ExtendedKeyUsage([x509.ObjectIdentifier("1.0.18013.5.1.2")]), critical=True)
    leaf = leaf.sign(root_key, hashes.SHA256())
    return (root.public_bytes(serialization.Encoding.PEM).decode(), leaf.public_bytes(serialization.Encoding.DER), leaf_key)


def pem_key(key) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())


class Companion:
    def __init__(self, binary: str, config_path: str):
        self.process = subprocess.Popen([binary, "server", "--config", config_path, "--port", "0"], stdout=subprocess.PIPE, text=True)
        self.base = None
        for line in self.process.stdout:
            if line.startswith("Switchback companion on "):
                self.base = line[len("Switchback companion on "):].split(",")[0].strip()
            if "Ctrl-C stops it." in line:
                break
        if not self.base:
            fail("the companion printed no address")
        parsed = urllib.parse.urlsplit(self.base)
        self.host, self.port = parsed.hostname, parsed.port

    def request(self, method, url, body=None, headers=None):
        path = urllib.parse.urlsplit(url)
        target = path.path + (("?" + path.query) if path.query else "")
        connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
        connection.request(method, target, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, dict(response.getheaders()), data

    def post_json(self, path, value):
        return self.request("POST", path, json.dumps(value), {"Content-Type": "application/json"})

    def post_form(self, url, fields):
        return self.request("POST", url, urllib.parse.urlencode(fields), {"Content-Type": "application/x-www-form-urlencoded"})

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


def read_request(companion: Companion, trusted_key=None):
    """The app's start and the wallet's reading of the request object; returns its claims."""
    status, _, body = companion.post_json("/wallet/start", {"binding": BINDING})
    if status != 200:
        fail(f"/wallet/start answered {status}: {body[:200]!r}")
    started = json.loads(body)
    if started.get("return_url") != APP_LINK:
        fail(f"return_url is {started.get('return_url')!r}")
    link = urllib.parse.urlsplit(started["wallet_url"])
    query = dict(urllib.parse.parse_qsl(link.query))
    if link.scheme != "openid4vp" or query.get("request_uri_method") != "post":
        fail(f"the wallet link is {started['wallet_url']}")
    wallet_nonce = secrets.token_urlsafe(16)
    status, headers, body = companion.post_form(query["request_uri"], {"wallet_nonce": wallet_nonce})
    if status != 200 or headers.get("Content-Type") != "application/oauth-authz-req+jwt":
        fail(f"the request_uri answered {status} {headers.get('Content-Type')}")
    token = body.decode()
    header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
    leaf = base64.b64decode(header["x5c"][0])
    certificate = x509.load_der_x509_certificate(leaf)
    key = trusted_key or ECKey.import_key(certificate.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    # An x5c header is longer than joserfc's default limit on a protected header (512 bytes).
    registry = jws.JWSRegistry(algorithms=["ES256"])
    registry.max_header_length = 8192
    verified = jws.deserialize_compact(token, key, algorithms=["ES256"], registry=registry)
    claims = json.loads(verified.payload)
    expected_client = "x509_hash:" + b64url(hashlib.sha256(leaf).digest())
    checks = {
        "client_id in the link": query.get("client_id") == expected_client,
        "client_id in the request": claims.get("client_id") == expected_client,
        "typ": header.get("typ") == "oauth-authz-req+jwt",
        "response_type": claims.get("response_type") == "vp_token",
        "response_mode": claims.get("response_mode") == "direct_post.jwt",
        "wallet_nonce echoed": claims.get("wallet_nonce") == wallet_nonce,
        "aud": claims.get("aud") == "https://self-issued.me/v2",
        "a nonce and a state": bool(claims.get("nonce")) and bool(claims.get("state")),
        "no redirect_uri": "redirect_uri" not in claims,
    }
    for name, ok in checks.items():
        if not ok:
            fail(f"the request object: {name} ({json.dumps(claims)[:300]})")
    return claims


def answer(companion: Companion, claims, presentation: str = "", enc: str = "A128GCM", key=None, members=None):
    """The wallet's direct_post.jwt answer (the presentation, or `members` such as an error response),
    encrypted by joserfc; returns (status, redirect_uri or body)."""
    jwk = claims["client_metadata"]["jwks"]["keys"][0]
    recipient = key or ECKey.import_key(jwk)
    payload = json.dumps(members if members is not None else {"vp_token": {"pid": [presentation]}, "state": claims["state"]})
    token = jwe.encrypt_compact({"alg": "ECDH-ES", "enc": enc, "kid": jwk["kid"]}, payload, recipient)
    status, _, body = companion.post_form(claims["response_uri"], {"response": token})
    if status != 200:
        return status, body.decode(errors="replace")
    return status, json.loads(body).get("redirect_uri", "")


def refusal(status: int, text: str, told: str) -> str:
    """A refused answer as the wallet must get it (OpenID4VP 1.0 §8.2 lets the verifier send `redirect_uri`
    with an error; HAIP 1.0 §5.1 wants the user back in the app): 400, `invalid_request`, the sentence the
    wallet shows, and the app link; returns the link."""
    try:
        answered = json.loads(text)
    except ValueError:
        answered = {}
    if status != 400 or answered.get("error") != "invalid_request" or answered.get("error_description") != told \
            or not answered.get("redirect_uri"):
        fail(f"a refused answer should be 400 invalid_request \"{told}\" with a redirect_uri, got {status} {text[:200]}")
    return answered["redirect_uri"]


def redeem(companion: Companion, redirect_uri: str):
    if not redirect_uri.startswith(APP_LINK + "#response_code="):
        fail(f"the redirect_uri is {redirect_uri!r}")
    code = redirect_uri[len(APP_LINK + "#response_code="):]
    status, _, body = companion.post_json("/wallet/redeem", {"response_code": code, "binding": BINDING})
    return status, json.loads(body)


def write_config(directory: str, anchors_key, anchors_pem: str, query: dict) -> str:
    """A companion configuration with a `wallet` section: a verifier key and certificate made here, the
    issuers' roots under `anchors_key` (one key, or a tuple of them), and `query`; returns its path."""
    _, verifier_leaf, verifier_key = certificate_pair("Check Verifier", "verifier.example.com")
    files = {
        "key.pem": pem_key(verifier_key).decode(),
        "chain.pem": x509.load_der_x509_certificate(verifier_leaf).public_bytes(serialization.Encoding.PEM).decode(),
        "anchors.pem": anchors_pem,
    }
    for name, text in files.items():
        with open(os.path.join(directory, name), "w") as handle:
            handle.write(text)
    config = {
        "host": "127.0.0.1", "port": 0,
        "wallet": {
            "signingKeyFile": os.path.join(directory, "key.pem"), "certificateChainFile": os.path.join(directory, "chain.pem"),
            "appLink": APP_LINK, "query": query,
            **{key: os.path.join(directory, "anchors.pem") for key in ((anchors_key,) if isinstance(anchors_key, str) else anchors_key)},
        },
    }
    config_path = os.path.join(directory, "config.json")
    with open(config_path, "w") as handle:
        json.dump(config, handle)
    return config_path


def main() -> None:
    cli = sys.argv[1]
    directory = tempfile.mkdtemp(prefix="switchback-openid4vp-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    issuer_root, issuer_leaf, issuer_key = certificate_pair("Check PID Issuer", "issuer.example.com")
    config_path = write_config(directory, "issuerTrustAnchorsFile", issuer_root, {
        "credentials": [{"id": "pid", "format": "dc+sd-jwt", "meta": {"vct_values": ["urn:eudi:pid:1"]},
                         "claims": [{"path": ["given_name"]}, {"path": ["birthdate"]}]}]})

    issuer_jwk = JWK.from_pem(pem_key(issuer_key))
    holder_jwk = JWK.generate(kty="EC", crv="P-256")
    issuance = SDJWTIssuer(
        {"iss": "https://issuer.example.com", "vct": "urn:eudi:pid:1", "iat": 1700000000, "exp": 4102444800,
         SDObj("given_name"): "Erika", SDObj("family_name"): "Mustermann", SDObj("birthdate"): "1984-01-26"},
        issuer_jwk, holder_jwk, sign_alg="ES256", add_decoy_claims=True,
        extra_header_parameters={"typ": "dc+sd-jwt", "x5c": [base64.b64encode(issuer_leaf).decode()]},
    ).sd_jwt_issuance

    def present(claims) -> str:
        holder = SDJWTHolder(issuance)
        holder.create_presentation({"given_name": True, "birthdate": True}, nonce=claims["nonce"], aud=claims["client_id"],
                                   holder_key=holder_jwk, sign_alg="ES256")
        return holder.sd_jwt_presentation

    companion = Companion(cli, config_path)
    try:
        for enc in ("A128GCM", "A256GCM"):
            claims = read_request(companion)
            status, redirect = answer(companion, claims, present(claims), enc=enc)
            if status != 200:
                fail(f"the companion refused joserfc's {enc} answer: {status} {redirect[:200]}")
            status, redeemed = redeem(companion, redirect)
            pid = (redeemed.get("credentials") or {}).get("pid", [{}])[0]
            if status != 200 or pid.get("given_name") != "Erika" or pid.get("birthdate") != "1984-01-26" or "family_name" in pid:
                fail(f"the redeemed claims are {redeemed}")
            print(f"ok   joserfc verified the request object (x509_hash, ES256, claims) and its ECDH-ES {enc} answer was opened and verified")

        claims = read_request(companion)
        try:
            read_request(companion, trusted_key=ECKey.generate_key("P-256"))
            fail("joserfc accepted the request object with another key")
        except BadSignatureError:
            print("ok   the request object's signature does not verify with another key (the check can fail)")
        stranger = ECKey.generate_key("P-256")
        refusals = {
            "an answer encrypted to another key": answer(companion, claims, present(claims), key=ECKey.import_key(
                {**stranger.as_dict(private=False), "kid": claims["client_metadata"]["jwks"]["keys"][0]["kid"]})),
            "an encryption the request did not offer": answer(companion, claims, present(claims), enc="A192GCM"),
        }
        parts = present(claims).split("~")
        disclosure = json.loads(base64.urlsafe_b64decode(parts[1] + "=="))
        disclosure[-1] = "Mallory"
        parts[1] = b64url(json.dumps(disclosure).encode())
        tampered = answer(companion, claims, "~".join(parts))
        for name, (status, text) in refusals.items():
            if status == 200:
                fail(f"{name}: accepted")
            print(f"ok   refused: {name} (HTTP {status})")
        redirect = refusal(*tampered, "the credential was not accepted for this request")
        status, redeemed = redeem(companion, redirect)
        if status == 200 or redeemed.get("error") != "invalid_presentation":
            fail(f"a tampered disclosure was redeemed: {redeemed}")
        print("ok   refused: a tampered disclosure (the wallet is told, 400 with the app link; the app gets invalid_presentation)")

        # OpenID4VP 1.0 §5.6, §8.3.1: a wallet that can encrypt sends its error response encrypted too.
        claims = read_request(companion)
        status, redirect = answer(companion, claims, members={"error": "access_denied", "error_description": "The user declined",
                                                              "state": claims["state"]})
        if status != 200:
            fail(f"the companion refused joserfc's encrypted error response: {status} {redirect[:200]}")
        status, redeemed = redeem(companion, redirect)
        if redeemed.get("error") != "access_denied":
            fail(f"an encrypted access_denied reached the app as {redeemed}")
        print("ok   an error response encrypted by joserfc (access_denied) gets a redirect_uri and reaches the app as access_denied")
    except JoseError as error:
        fail(f"joserfc: {error!r}")
    finally:
        companion.stop()


if __name__ == "__main__":
    main()
