#!/usr/bin/env python3
"""Third-party check of the companion's ISO mdoc verifier (OpenID4VP 1.0 Appendix B.2): pymdoccbor, the
EUDI wallet project's mdoc library, issues the credential; cbor2 and cryptography write the wallet's device
signature; joserfc encrypts the answer.

Starts `switchback server` with a `wallet` section asking for an mdoc PID (`mso_mdoc`, `doctype_value`,
two-name claim paths), and an IACA root made here as its `mdocTrustAnchorsFile`, then plays the app and the
wallet over HTTP (the request object is read and checked as check_openid4vp.py does):
- pymdoccbor issues an mdoc for a device key, signed by a document signer certificate under the root
  (`x5chain`), and its own verifier accepts it under that root;
- the wallet keeps the three asked elements, builds the SessionTranscript of OpenID4VP 1.0 §B.2.6.1 from
  the request object (client_id, nonce, the RFC 7638 thumbprint of the response key, response_uri) and
  signs DeviceAuthentication with the device key;
- the companion must verify it, and the app must redeem exactly those three elements.
Then the check is shown able to fail: a changed element, a device signature over another nonce, a
document signer under another root, and a `deviceMac` in place of the signature must each be refused.
Then a query with `credential_sets` (OpenID4VP 1.0 §6.2: a PID as an SD-JWT VC, or a mobile driving licence):
a pymdoccbor mDL answers it, and the app redeems the mDL alone; the mDL given under the PID's id is refused.
Prints one line per check; exits 1 on the first failure.

usage: check_mdoc.py PATH/TO/switchback
"""

import atexit
import datetime
import hashlib
import json
import shutil
import sys
import tempfile

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from joserfc import jwe
from joserfc.jwk import ECKey
from pymdoccbor.mdoc.issuer import MdocCborIssuer
from pymdoccbor.mdoc.verifier import MdocCbor

from check_openid4vp import Companion, b64url, certificate_pair, fail, read_request, redeem, refusal, write_config

DOCTYPE = "eu.europa.ec.eudi.pid.1"
ASKED = ["given_name", "birth_date", "age_over_18"]
# A mobile driving licence (ISO/IEC 18013-5 §7.1: its document type; §7.2.1: its namespace and elements).
MDL_DOCTYPE = "org.iso.18013.5.1.mDL"
MDL_NAMESPACE = "org.iso.18013.5.1"
MDL_ASKED = ["given_name", "birth_date", "document_number"]


def coordinate(number: int) -> bytes:
    return number.to_bytes(32, "big")


def issue(document_signer_der: bytes, document_signer_key, device_key, doctype=DOCTYPE, namespace=DOCTYPE, data=None) -> dict:
    """pymdoccbor's mdoc (the PID unless told otherwise): a DeviceResponse dict holding the issuerSigned part of one document."""
    now = datetime.datetime.now(datetime.timezone.utc)
    numbers = document_signer_key.private_numbers()
    device = device_key.public_key().public_numbers()
    issuer = MdocCborIssuer(
        private_key={1: 2, -1: 1, 3: -7, -2: coordinate(numbers.public_numbers.x), -3: coordinate(numbers.public_numbers.y),
                     -4: coordinate(numbers.private_value)},
        alg="ES256")
    return issuer.new(
        doctype=doctype,
        data={namespace: data or {"family_name": "Mustermann", "given_name": "Erika", "birth_date": "1984-01-26", "age_over_18": True}},
        validity={"issuance_date": (now - datetime.timedelta(days=1)).strftime("%Y-%m-%d"),
                  "expiry_date": (now + datetime.timedelta(days=90)).strftime("%Y-%m-%d")},
        devicekeyinfo={1: 2, -1: 1, -2: coordinate(device.x), -3: coordinate(device.y)},
        x509_chain=[document_signer_der])


def thumbprint(jwk: dict) -> bytes:
    """RFC 7638: the required members of an EC key, sorted, without white space."""
    members = {name: jwk[name] for name in ("crv", "kty", "x", "y")}
    return hashlib.sha256(json.dumps(members, separators=(",", ":"), sort_keys=True).encode()).digest()


def present(issued: dict, claims: dict, device_key, nonce=None, mac=False, tamper=False, doctype=DOCTYPE, namespace=DOCTYPE,
            asked=ASKED) -> str:
    """The wallet's DeviceResponse: the asked elements only, and a device signature for this request."""
    document = dict(issued["documents"][0])
    items = []
    for item in document["issuerSigned"]["nameSpaces"][namespace]:
        element = cbor2.loads(item.value)
        if element["elementIdentifier"] in asked:
            if tamper and element["elementIdentifier"] == "given_name":
                element["elementValue"] = "Mallory"
                item = cbor2.CBORTag(24, cbor2.dumps(element))
            items.append(item)
    document["issuerSigned"] = {"nameSpaces": {namespace: items}, "issuerAuth": document["issuerSigned"]["issuerAuth"]}
    jwk = claims["client_metadata"]["jwks"]["keys"][0]
    info = [claims["client_id"], nonce or claims["nonce"], thumbprint(jwk), claims["response_uri"]]
    transcript = [None, None, ["OpenID4VPHandover", hashlib.sha256(cbor2.dumps(info)).digest()]]
    device_namespaces = cbor2.CBORTag(24, cbor2.dumps({}))
    authentication = cbor2.dumps(cbor2.CBORTag(24, cbor2.dumps(["DeviceAuthentication", transcript, doctype, device_namespaces])))
    protected = cbor2.dumps({1: -7})
    der = device_key.sign(cbor2.dumps(["Signature1", protected, b"", authentication]), ec.ECDSA(hashes.SHA256()))
    r, s = decode_dss_signature(der)
    signature = coordinate(r) + coordinate(s)
    device_auth = {"deviceMac": [cbor2.dumps({1: 5}), {}, None, signature[:32]]} if mac else \
        {"deviceSignature": [protected, {}, None, signature]}
    document["deviceSigned"] = {"nameSpaces": device_namespaces, "deviceAuth": device_auth}
    return b64url(cbor2.dumps({"version": "1.0", "documents": [document], "status": 0}))


def answer(companion: Companion, claims: dict, presentation: str, query_id="pid"):
    jwk = claims["client_metadata"]["jwks"]["keys"][0]
    payload = json.dumps({"vp_token": {query_id: [presentation]}, "state": claims["state"]})
    token = jwe.encrypt_compact({"alg": "ECDH-ES", "enc": "A128GCM", "kid": jwk["kid"]}, payload, ECKey.import_key(jwk))
    status, _, body = companion.post_form(claims["response_uri"], {"response": token})
    if status == 200:
        return redeem(companion, json.loads(body).get("redirect_uri", ""))
    # A refused mdoc: the wallet is told and sent back to the app, which learns the refusal when it redeems.
    return redeem(companion, refusal(status, body.decode(errors="replace"), "the credential was not accepted for this request"))


def main() -> None:
    cli = sys.argv[1]
    directory = tempfile.mkdtemp(prefix="switchback-mdoc-")
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    iaca_root, signer_der, signer_key = certificate_pair("Check PID IACA", "pid.example.com", document_signer=True)
    _, stranger_der, stranger_key = certificate_pair("Check Stranger IACA", "pid.example.com", document_signer=True)
    config_path = write_config(directory, "mdocTrustAnchorsFile", iaca_root, {
        "credentials": [{"id": "pid", "format": "mso_mdoc", "meta": {"doctype_value": DOCTYPE},
                         "claims": [{"path": [DOCTYPE, name], "intent_to_retain": False} for name in ASKED]}]})

    device_key = ec.generate_private_key(ec.SECP256R1())
    issued = issue(signer_der, signer_key, device_key)
    parsed = MdocCbor()
    parsed.loads(cbor2.dumps(issued))
    if not parsed.verify(trusted_root_certs=[x509.load_pem_x509_certificate(iaca_root.encode())]):
        fail("pymdoccbor does not verify its own mdoc under the root")
    print("ok   pymdoccbor issued an mdoc PID (x5chain to the IACA root) and its own verifier accepts it")

    companion = Companion(cli, config_path)
    try:
        claims = read_request(companion)
        formats = claims["client_metadata"]["vp_formats_supported"]
        if formats.get("mso_mdoc", {}).get("deviceauth_alg_values") != [-7]:
            fail(f"the request object's vp_formats_supported is {formats}")
        status, redeemed = answer(companion, claims, present(issued, claims, device_key))
        pid = (redeemed.get("credentials") or {}).get("pid", [{}])[0].get(DOCTYPE, {})
        expected = {"given_name": "Erika", "birth_date": "1984-01-26", "age_over_18": True}
        if status != 200 or pid != expected:
            fail(f"the redeemed mdoc claims are {redeemed}")
        print("ok   the companion verified the mdoc (issuerAuth, digests, device signature over the §B.2.6.1 transcript); "
              "the app got exactly the three elements")

        stranger = issue(stranger_der, stranger_key, device_key)
        refusals = {
            "a changed element": lambda c: present(issued, c, device_key, tamper=True),
            "a device signature over another nonce": lambda c: present(issued, c, device_key, nonce="another-nonce"),
            "a document signer under another root": lambda c: present(stranger, c, device_key),
            "a deviceMac in place of the signature": lambda c: present(issued, c, device_key, mac=True),
        }
        for name, make in refusals.items():
            claims = read_request(companion)
            status, redeemed = answer(companion, claims, make(claims))
            if status == 200 or redeemed.get("error") != "invalid_presentation":
                fail(f"{name}: redeemed {redeemed}")
            print(f"ok   refused: {name} (the wallet is told, 400 with the app link; the app gets invalid_presentation)")
    finally:
        companion.stop()

    # OpenID4VP 1.0 §6.2, §6.4.2: a PID (SD-JWT VC) or a mobile driving licence; this wallet holds the licence.
    config_path = write_config(directory, ("mdocTrustAnchorsFile", "issuerTrustAnchorsFile"), iaca_root, {
        "credentials": [
            {"id": "pid", "format": "dc+sd-jwt", "meta": {"vct_values": ["urn:eudi:pid:1"]}, "claims": [{"path": ["given_name"]}]},
            {"id": "mdl", "format": "mso_mdoc", "meta": {"doctype_value": MDL_DOCTYPE},
             "claims": [{"path": [MDL_NAMESPACE, name], "intent_to_retain": False} for name in MDL_ASKED]}],
        "credential_sets": [{"options": [["pid"], ["mdl"]]}]})
    licence = issue(signer_der, signer_key, device_key, doctype=MDL_DOCTYPE, namespace=MDL_NAMESPACE,
                    data={"family_name": "Mustermann", "given_name": "Erika", "birth_date": "1984-01-26", "document_number": "B072RRE2I55",
                          "issuing_country": "DE"})
    companion = Companion(cli, config_path)
    try:
        claims = read_request(companion)
        if claims["dcql_query"].get("credential_sets") != [{"options": [["pid"], ["mdl"]]}]:
            fail(f"the request object's dcql_query is {claims['dcql_query']}")
        mdl = present(licence, claims, device_key, doctype=MDL_DOCTYPE, namespace=MDL_NAMESPACE, asked=MDL_ASKED)
        status, redeemed = answer(companion, claims, mdl, query_id="mdl")
        credentials = redeemed.get("credentials") or {}
        expected = {"given_name": "Erika", "birth_date": "1984-01-26", "document_number": "B072RRE2I55"}
        if status != 200 or set(credentials) != {"mdl"} or credentials["mdl"][0].get(MDL_NAMESPACE) != expected:
            fail(f"the redeemed answer to the credential set is {redeemed}")
        print("ok   credential_sets: the request object carries the sets; an mDL made by pymdoccbor answers \"a PID or an mDL\", "
              "and the app gets the mDL alone")
        claims = read_request(companion)
        mdl = present(licence, claims, device_key, doctype=MDL_DOCTYPE, namespace=MDL_NAMESPACE, asked=MDL_ASKED)
        status, redeemed = answer(companion, claims, mdl, query_id="pid")
        if status == 200 or redeemed.get("error") != "invalid_presentation":
            fail(f"an mDL answering the SD-JWT PID's query was redeemed: {redeemed}")
        print("ok   refused: an mDL given as the answer to the PID's query (the app gets invalid_presentation)")
    finally:
        companion.stop()


if __name__ == "__main__":
    main()
