#!/usr/bin/env python3
"""Third-party check of the SD-JWT verifier with `sd-jwt`, the OpenWallet Foundation's SD-JWT library.

The library (not this project) issues an SD-JWT VC with selectively disclosable claims (a nested object,
array elements, decoy digests), its holder presents some of them with a Key Binding JWT for a verifier's
audience and nonce, and `switchback verify-presentation` must accept it and print exactly the disclosed
claims. Then tampered variants must be refused: a disclosure edited, one withheld after binding, another
nonce, another audience, an issuer signature from another key, a Key Binding JWT from another key. Prints
one line per check; exits 1 on the first failure.

usage: check_sd_jwt.py PATH/TO/switchback
"""

import base64
import json
import subprocess
import sys
import tempfile

from jwcrypto.jwk import JWK
from sd_jwt.common import SDObj
from sd_jwt.holder import SDJWTHolder
from sd_jwt.issuer import SDJWTIssuer

AUDIENCE = "x509_san_dns:verifier.example.com"
NONCE = "n-0S6_WzA2Mj"


def fail(message: str) -> None:
    print(f"FAIL {message}")
    sys.exit(1)


def verify(cli: str, jwks_path: str, presentation: str, audience: str = AUDIENCE, nonce: str = NONCE):
    """The verifier's verdict: (accepted, output)."""
    run = subprocess.run(
        [cli, "verify-presentation", "--jwks", jwks_path, "--audience", audience, "--nonce", nonce, "-"],
        input=presentation, capture_output=True, text=True, timeout=60)
    return run.returncode == 0, run.stdout + run.stderr


def issue(issuer_key: JWK, holder_key: JWK) -> str:
    claims = {
        "iss": "https://issuer.example.com",
        "vct": "urn:eudi:pid:1",
        "iat": 1700000000,
        "exp": 4102444800,
        SDObj("given_name"): "Erika",
        SDObj("family_name"): "Mustermann",
        SDObj("birthdate"): "1984-01-26",
        SDObj("address"): {SDObj("locality"): "Berlin", SDObj("postal_code"): "10115", "country": "DE"},
        "nationalities": [SDObj("DE"), SDObj("FR")],
    }
    issuer = SDJWTIssuer(claims, issuer_key, holder_key, sign_alg="ES256", add_decoy_claims=True,
                         extra_header_parameters={"typ": "dc+sd-jwt"})
    return issuer.sd_jwt_issuance


def present(issuance: str, holder_key: JWK, audience: str = AUDIENCE, nonce: str = NONCE) -> str:
    holder = SDJWTHolder(issuance)
    holder.create_presentation(
        {"given_name": True, "address": {"locality": True}, "nationalities": [True, False]},
        nonce=nonce, aud=audience, holder_key=holder_key, sign_alg="ES256")
    return holder.sd_jwt_presentation


def b64url_json(value) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def main() -> None:
    cli = sys.argv[1]
    issuer_key = JWK.generate(kty="EC", crv="P-256")
    holder_key = JWK.generate(kty="EC", crv="P-256")
    stranger = JWK.generate(kty="EC", crv="P-256")
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as jwks:
        jwks.write(json.dumps({"keys": [json.loads(issuer_key.export_public())]}))
    issuance = issue(issuer_key, holder_key)
    presentation = present(issuance, holder_key)

    accepted, output = verify(cli, jwks.name, presentation)
    if not accepted:
        fail(f"the library's presentation was refused: {output}")
    claims = json.loads(output[output.index("{"):])
    expected = {"given_name": "Erika", "address": {"locality": "Berlin", "country": "DE"}, "nationalities": ["DE"]}
    for name, value in expected.items():
        if claims.get(name) != value:
            fail(f"{name} is {claims.get(name)!r}, expected {value!r}")
    for hidden in ("family_name", "birthdate", "_sd", "_sd_alg"):
        if hidden in claims or hidden in claims.get("address", {}):
            fail(f"{hidden} appears though it was not disclosed")
    print("ok   sd-jwt's presentation verified: disclosed claims only, nested and array elements in place, decoys ignored")

    parts = presentation.split("~")
    issuer_jwt, disclosures, kb_jwt = parts[0], parts[1:-1], parts[-1]
    decoded = json.loads(base64.urlsafe_b64decode(disclosures[0] + "=" * (-len(disclosures[0]) % 4)))
    decoded[-1] = "tampered"
    other_issuance = issue(stranger, holder_key)
    variants = {
        "a disclosure edited": "~".join([issuer_jwt, b64url_json(decoded)] + disclosures[1:] + [kb_jwt]),
        "a disclosure withheld after binding": "~".join([issuer_jwt] + disclosures[:-1] + [kb_jwt]),
        "another nonce": present(issuance, holder_key, nonce="another-nonce"),
        "another audience": present(issuance, holder_key, audience="x509_san_dns:other.example.com"),
        "an issuer signature from another key": present(other_issuance, holder_key),
        "a Key Binding JWT from another key": present(issuance, stranger),
    }
    for name, variant in variants.items():
        accepted, output = verify(cli, jwks.name, variant)
        if accepted:
            fail(f"{name}: accepted")
        print(f"ok   refused: {name} ({output.strip().splitlines()[-1][:90]})")


if __name__ == "__main__":
    main()
