#!/usr/bin/env python3
"""Third-party check of the emulator's tokens with joserfc, a JOSE library written by others.

Starts `switchback emulator --port 0`, signs in over HTTP the way a browser and an app would (authorize,
login form, code + PKCE S256 at the token endpoint) for the RS256 and the ES256 client, and verifies each
ID token with joserfc against the published JWKS: signature, iss, aud, exp/iat, nonce, and at_hash and
c_hash recomputed here. Then switches on the bad-signature fault and expects joserfc to refuse, so the
check is shown able to fail. Last, a second emulator serves clients that registered encryption keys
made here: joserfc decrypts each encrypted ID token (several key management and content encryption
pairs, the Singpass one among them) and verifies the signed token inside; a token decrypted with
another key must fail. Prints one line per check; exits 1 on the first failure.

usage: check_emulator_tokens.py PATH/TO/switchback
"""

import base64
import hashlib
import http.client
import json
import secrets
import subprocess
import sys
import urllib.parse

import os
import tempfile

from joserfc import jwe, jwt
from joserfc.errors import BadSignatureError, DecodeError
from joserfc.jwk import ECKey, KeySet, RSAKey

REDIRECT_URI = "com.example.app:/oauth/callback"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def half_hash(value: str) -> str:
    return b64url(hashlib.sha256(value.encode()).digest()[:16])


class Emulator:
    def __init__(self, binary: str, *arguments: str):
        self.process = subprocess.Popen([binary, "emulator", "--port", "0", *arguments], stdout=subprocess.PIPE, text=True)
        self.issuer = None
        for line in self.process.stdout:
            if line.startswith("issuer: "):
                self.issuer = line[len("issuer: "):].strip()
            if "Ctrl-C stops it." in line:
                break
        if not self.issuer:
            raise SystemExit("check: the emulator printed no issuer")
        parsed = urllib.parse.urlsplit(self.issuer)
        self.host, self.port = parsed.hostname, parsed.port

    def request(self, method, path, body=None, headers=None):
        connection = http.client.HTTPConnection(self.host, self.port, timeout=10)
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, dict(response.getheaders()), data

    def form(self, path, fields):
        return self.request("POST", path, urllib.parse.urlencode(fields), {"Content-Type": "application/x-www-form-urlencoded"})

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


def hidden_value(html: str, name: str) -> str:
    marker = f'name="{name}" value="'
    start = html.index(marker) + len(marker)
    return html[start:html.index('"', start)]


def sign_in(emulator: Emulator, client_id: str):
    verifier = secrets.token_urlsafe(48)
    state, nonce = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    query = urllib.parse.urlencode({
        "response_type": "code", "client_id": client_id, "redirect_uri": REDIRECT_URI, "scope": "openid profile",
        "state": state, "nonce": nonce, "code_challenge": b64url(hashlib.sha256(verifier.encode()).digest()),
        "code_challenge_method": "S256",
    })
    status, _, page = emulator.request("GET", "/authorize?" + query)
    assert status == 200, f"authorize answered {status}"
    request_id = hidden_value(page.decode(), "request")
    status, headers, _ = emulator.form("/login", {"request": request_id, "username": "alice", "password": "Secret-123"})
    assert status == 302, f"login answered {status}"
    callback = urllib.parse.parse_qs(urllib.parse.urlsplit(headers["Location"]).query)
    assert callback["state"] == [state] and callback["iss"] == [emulator.issuer], "callback state or iss differs"
    code = callback["code"][0]
    status, _, body = emulator.form("/token", {
        "grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT_URI, "client_id": client_id,
        "code_verifier": verifier,
    })
    assert status == 200, f"token endpoint answered {status}"
    tokens = json.loads(body)
    return tokens, code, nonce


def verify(emulator: Emulator, client_id: str, algorithm: str):
    status, _, body = emulator.request("GET", "/jwks")
    assert status == 200
    keys = KeySet.import_key_set(json.loads(body))
    tokens, code, nonce = sign_in(emulator, client_id)
    token = jwt.decode(tokens["id_token"], keys, algorithms=[algorithm])
    assert token.header["alg"] == algorithm, f"alg {token.header['alg']}"
    registry = jwt.JWTClaimsRegistry(
        iss={"essential": True, "value": emulator.issuer}, aud={"essential": True, "value": client_id},
        sub={"essential": True}, nonce={"essential": True, "value": nonce}, exp={"essential": True}, iat={"essential": True},
    )
    registry.validate(token.claims)
    assert token.claims["at_hash"] == half_hash(tokens["access_token"]), "at_hash differs"
    assert token.claims["c_hash"] == half_hash(code), "c_hash differs"
    return token


# (client, key, key management, content encryption): Singpass's documented pair first.
ENCRYPTING_CLIENTS = [
    ("enc-singpass", ECKey.generate_key("P-256", parameters={"kid": "enc-p256", "use": "enc"}), "ECDH-ES+A256KW", "A256CBC-HS512"),
    ("enc-direct", ECKey.generate_key("P-384", parameters={"kid": "enc-p384", "use": "enc"}), "ECDH-ES", "A128GCM"),
    ("enc-kw128", ECKey.generate_key("P-521", parameters={"kid": "enc-p521", "use": "enc"}), "ECDH-ES+A128KW", "A128CBC-HS256"),
    ("enc-rsa", RSAKey.generate_key(2048, parameters={"kid": "enc-rsa", "use": "enc"}), "RSA-OAEP-256", "A256GCM"),
]
JWE_ALGORITHMS = ["ECDH-ES", "ECDH-ES+A128KW", "ECDH-ES+A256KW", "RSA-OAEP-256", "A128GCM", "A256GCM", "A128CBC-HS256", "A256CBC-HS512"]


def check_encryption(binary: str):
    clients = []
    for client_id, key, alg, enc in ENCRYPTING_CLIENTS:
        public = dict(key.as_dict(private=False), alg=alg)
        clients.append({"clientID": client_id, "redirectURIs": [REDIRECT_URI], "idTokenAlgorithm": "ES256", "jwks": {"keys": [public]}, "idTokenEncryption": enc})
    users = [{"username": "alice", "password": "Secret-123", "subject": "9b1f7c2e-alice", "name": "Alice Example", "email": "alice@example.com"}]
    handle, path = tempfile.mkstemp(suffix=".json")
    with os.fdopen(handle, "w") as file:
        json.dump({"clients": clients, "users": users}, file)
    emulator = Emulator(binary, "--config", path)
    try:
        status, _, body = emulator.request("GET", "/jwks")
        assert status == 200
        signing_keys = KeySet.import_key_set(json.loads(body))
        for client_id, key, alg, enc in ENCRYPTING_CLIENTS:
            tokens, _, nonce = sign_in(emulator, client_id)
            assert tokens["id_token"].count(".") == 4, f"{client_id}: the ID token is not a compact JWE"
            decrypted = jwe.decrypt_compact(tokens["id_token"], key, algorithms=JWE_ALGORITHMS)
            header = decrypted.protected
            assert (header["alg"], header["enc"], header.get("cty"), header.get("kid")) == (alg, enc, "JWT", key.kid), f"{client_id}: header {header}"
            inner = jwt.decode(decrypted.plaintext.decode(), signing_keys, algorithms=["ES256"])
            assert inner.claims["nonce"] == nonce and inner.claims["aud"] == client_id, f"{client_id}: inner claims differ"
            print(f"check: joserfc decrypts the emulator's {alg} / {enc} ID token to its key {key.kid} and verifies the ES256 token inside")
        stranger = ECKey.generate_key("P-256")
        tokens, _, _ = sign_in(emulator, "enc-singpass")
        try:
            jwe.decrypt_compact(tokens["id_token"], stranger, algorithms=JWE_ALGORITHMS)
        except (DecodeError, ValueError):
            print("check: joserfc refuses to decrypt the token with another P-256 key")
        else:
            raise AssertionError("joserfc decrypted an ID token with a key it was not encrypted to")
    finally:
        emulator.stop()
        os.unlink(path)


def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    check_encryption(sys.argv[1])
    emulator = Emulator(sys.argv[1])
    try:
        for client_id, algorithm in [("native-rs", "RS256"), ("native-es", "ES256")]:
            token = verify(emulator, client_id, algorithm)
            print(f"check: joserfc verifies the emulator's {algorithm} ID token (kid {token.header['kid']}): signature, iss, aud, sub, nonce, exp, iat, at_hash, c_hash")
        status, _, _ = emulator.form("/emulator/faults", {"client_id": "native-rs", "faults": "bad-signature"})
        assert status == 200
        try:
            verify(emulator, "native-rs", "RS256")
        except BadSignatureError:
            print("check: joserfc refuses the ID token the bad-signature fault alters")
        else:
            raise AssertionError("joserfc accepted a token whose signature the emulator altered")
    finally:
        emulator.stop()


if __name__ == "__main__":
    try:
        main()
    except AssertionError as failure:
        print(f"check FAILED: {failure}", file=sys.stderr)
        sys.exit(1)
