#!/usr/bin/env python3
"""Writes Tests/SwitchbackTests/Fixtures/joserfc-jwe.json: compact JWEs made by joserfc, a JOSE library
written by others, for every key management and content encryption pair the core decrypts, to fresh
P-256, P-384, P-521 and RSA-2048 keys whose private PEMs are stored beside them. The Swift test
`CompactJWETests.joserfc` decrypts each one; `scripts/check_emulator_tokens.py` checks the other
direction (joserfc decrypts the emulator's encrypted ID tokens) on every CI run.

usage: make_jwe_fixtures.py   (needs joserfc 1.6.5; rerun only to refresh the fixture)
"""

import json
import pathlib

from joserfc import jwe
from joserfc.jwk import ECKey, RSAKey

KEY_MANAGEMENT = ["ECDH-ES", "ECDH-ES+A128KW", "ECDH-ES+A192KW", "ECDH-ES+A256KW"]
CONTENT = ["A128GCM", "A192GCM", "A256GCM", "A128CBC-HS256", "A192CBC-HS384", "A256CBC-HS512"]
ALLOWED = KEY_MANAGEMENT + ["RSA-OAEP-256"] + CONTENT
PLAINTEXT = "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl"


def main():
    keys = {
        "P-256": ECKey.generate_key("P-256", parameters={"kid": "p256"}),
        "P-384": ECKey.generate_key("P-384", parameters={"kid": "p384"}),
        "P-521": ECKey.generate_key("P-521", parameters={"kid": "p521"}),
        "RSA": RSAKey.generate_key(2048, parameters={"kid": "rsa"}),
    }
    tokens = []
    for name, key in keys.items():
        algorithms = ["RSA-OAEP-256"] if name == "RSA" else KEY_MANAGEMENT
        for alg in algorithms:
            for enc in CONTENT:
                header = {"alg": alg, "enc": enc, "cty": "JWT", "kid": key.kid}
                token = jwe.encrypt_compact(header, PLAINTEXT.encode(), key, algorithms=ALLOWED)
                tokens.append({"key": name, "alg": alg, "enc": enc, "jwe": token})
    document = {
        "generator": "joserfc 1.6.5 (scripts/make_jwe_fixtures.py)",
        "plaintext": PLAINTEXT,
        "keys": {name: {"kid": key.kid, "pem": key.as_pem(private=True).decode()} for name, key in keys.items()},
        "tokens": tokens,
    }
    path = pathlib.Path(__file__).resolve().parent.parent / "Tests/SwitchbackTests/Fixtures/joserfc-jwe.json"
    path.write_text(json.dumps(document, indent=1) + "\n")
    print(f"wrote {len(tokens)} tokens to {path}")


if __name__ == "__main__":
    main()
