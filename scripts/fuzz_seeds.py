# Writes the fuzz targets' seed corpora (Fuzz/Corpus/TARGET): the tests' fixtures and the specifications' examples.
# Run once when a target is added, naming it (python3 scripts/fuzz_seeds.py TARGET ...; no names writes every
# target's seeds); scripts/fuzz.sh merge TARGET keeps what a run finds, minimised.
import os, sys, json, zlib, base64, cbor2, hashlib
only = set(sys.argv[1:])
here = os.path.dirname(os.path.abspath(__file__))
root = os.path.join(here, "..", "Fuzz", "Corpus")
def put(target, name, data):
    if only and target not in only: return
    d = os.path.join(root, target); os.makedirs(d, exist_ok=True)
    if isinstance(data, str): data = data.encode()
    open(os.path.join(d, name), "wb").write(data)
def b64u(b): return base64.urlsafe_b64encode(b).rstrip(b"=").decode()

# json: claim sets and headers as tokens carry them, RFC 7519 §3.1 and OpenID Connect Core's example ID token
put("json", "rfc7519-claims", '{"iss":"joe",\r\n "exp":1300819380,\r\n "http://example.com/is_root":true}')
put("json", "oidc-core-id-token", '{"iss":"https://server.example.com","sub":"24400320","aud":"s6BhdRkqt3","nonce":"n-0S6_WzA2Mj","exp":1311281970,"iat":1311280970,"auth_time":1311280969,"acr":"urn:mace:incommon:iap:silver"}')
put("json", "header", '{"alg":"ES256","kid":"k1","typ":"JWT","crit":["b64"],"x5c":["MIIB"]}')
put("json", "nested", '{"a":[1,2.5e3,-0.0,true,false,null,{"b":"\\u00e9\\ud83d\\ude00"}],"c":{"d":[]},"e":"\\"\\\\\\/\\b\\f\\n\\r\\t"}')
put("json", "numbers", '{"n":[0,-0,1e308,4.9e-324,9007199254740993,1E+2,0.5]}')

# cbor: RFC 8949 Appendix A (definite lengths)
appendix_a = """00 01 0a 17 1818 1819 1864 1903e8 1a000f4240 1b000000e8d4a51000 1bffffffffffffffff c249010000000000000000
3bffffffffffffffff c349010000000000000000 20 29 3863 3903e7 f90000 f98000 f93c00 fb3ff199999999999a f93e00 f97bff fa47c35000
fa7f7fffff fb7e37e43c8800759c f90001 f90400 f9c400 fbc010666666666666 f97c00 f97e00 f9fc00 fa7f800000 fa7fc00000 faff800000
fb7ff0000000000000 fb7ff8000000000000 fbfff0000000000000 f4 f5 f6 f7 f0 f818 f8ff c074323031332d30332d32315432303a30343a30305a
c11a514b67b0 c1fb41d452d9ec200000 d74401020304 d818456449455446 d82076687474703a2f2f7777772e6578616d706c652e636f6d 40 4401020304
60 6161 6449455446 62225c 62c3bc 63e6b0b4 64f0908591 80 83010203 8301820203820405
98190102030405060708090a0b0c0d0e0f101112131415161718181819 a0 a201020304 a26161016162820203 826161a161626163
a56161614161626142616361436164614461656145""".split()
for h in appendix_a: put("cbor", "rfc8949-" + h[:24], bytes.fromhex(h))
# OpenID4VP 1.0 Appendix B.2.6.1's session transcript, as the CBOR tests hold it
put("cbor", "openid4vp-session-transcript", bytes.fromhex("83f6f682714f70656e494434565048616e646f7665725820048bc053c00442af9b8eed494cefdd9d95240d254b046b11b68013722aad38ac"))

# mdoc: a DeviceResponse shaped as ISO/IEC 18013-5 writes one (signatures are not valid)
item = cbor2.dumps({"digestID": 0, "random": bytes(range(16)), "elementIdentifier": "family_name", "elementValue": "Doe"})
mso = cbor2.dumps({"version": "1.0", "digestAlgorithm": "SHA-256", "docType": "org.iso.18013.5.1.mDL",
    "valueDigests": {"org.iso.18013.5.1": {0: hashlib.sha256(cbor2.dumps(cbor2.CBORTag(24, item))).digest()}},
    "deviceKeyInfo": {"deviceKey": {1: 2, -1: 1, -2: b"\x01" * 32, -3: b"\x02" * 32}},
    "validityInfo": {"signed": cbor2.CBORTag(0, "2024-01-01T00:00:00Z"), "validFrom": cbor2.CBORTag(0, "2024-01-01T00:00:00Z"), "validUntil": cbor2.CBORTag(0, "2030-01-01T00:00:00Z")}})
issuer_auth = [cbor2.dumps({1: -7}), {33: b"\x30\x82"}, cbor2.dumps(cbor2.CBORTag(24, mso)), b"\x00" * 64]
response = {"version": "1.0", "status": 0, "documents": [{"docType": "org.iso.18013.5.1.mDL",
    "issuerSigned": {"nameSpaces": {"org.iso.18013.5.1": [cbor2.CBORTag(24, item)]}, "issuerAuth": issuer_auth},
    "deviceSigned": {"nameSpaces": cbor2.CBORTag(24, cbor2.dumps({})), "deviceAuth": {"deviceSignature": [cbor2.dumps({1: -7}), {}, None, b"\x00" * 64]}}}]}
put("mdoc", "device-response", cbor2.dumps(response))
put("cbor", "device-response", cbor2.dumps(response))

# base64url
for i, text in enumerate(["", "AA", "AAA", "AAAA", "_-8", "eyJhbGciOiJFUzI1NiJ9", "SGVsbG8sIHdvcmxkIQ", "QQ", "QR"]):
    put("base64url", f"text-{i}", text)

# jws: RFC 7515 Appendix A examples
vectors = json.load(open(os.path.join(here, "..", "Tests", "SwitchbackTests", "Fixtures", "jws-vectors.json")))
for name, v in vectors.items():
    token = v.get("token") or v.get("compact") or v.get("jws")
    if isinstance(token, str): put("jws", name.split()[0].lower(), token)

# form
for i, text in enumerate(["code=SplxlOBeZQQYbYS6WxSbIA&state=xyz", "a=1&a=2&&b", "x=%E2%82%AC+y&z=%20", "=v&n=", "q=a%2Bb%26c"]):
    put("form", f"form-{i}", text)

# inflate: zlib streams, stored, fixed and dynamic blocks; the Token Status List draft's example list
for level in (0, 1, 9):
    put("inflate", f"zlib-level-{level}", zlib.compress(bytes(range(256)) * 4, level))
put("inflate", "status-list-example", base64.urlsafe_b64decode("eNrbuRgAAhcBXQ" + "=="))

# sd-jwt: the issuer's payload, then disclosures, separated by zero bytes
payload = {"iss": "https://issuer.example.com", "iat": 1683000000, "exp": 1883000000, "vct": "https://credentials.example.com/identity_credential",
           "sub": "user_42", "address": {"_sd": []}, "nationalities": ["US"]}
disclosures = [["2GLC42sKQveCfGfryNRN9w", "given_name", "John"], ["eluV5Og3gSNII8EYnsxA_A", "family_name", "Doe"],
               ["6Ij7tM-a5iVPGboS5tmvVA", "email", "johndoe@example.com"]]
put("sd-jwt", "rfc9901-like", json.dumps(payload).encode() + b"".join(b"\x00" + json.dumps(d).encode() for d in disclosures))

# sd-jwt: RFC 9901 §5.1's issued SD-JWT, as the verifier's tests hold it (RFC9901Example.swift): its payload and
# every disclosure, in the target's format
import re
swift = open(os.path.join(here, "..", "Tools", "Tests", "VerificationTests", "Presentation", "RFC9901Example.swift")).read()
issued = "".join(re.findall(r'"([A-Za-z0-9_~.\-]*)"', swift.split("static let issued =")[1].split("static let")[0]))
parts = issued.split("~")
unb64 = lambda text: base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
put("sd-jwt", "rfc9901-5.1", unb64(parts[0].split(".")[1]) + b"".join(b"\x00" + unb64(d) for d in parts[1:] if d))

# cbor: an App Attest attestation object as Apple documents its layout ("Validating apps that connect to your
# server": fmt apple-appattest, attStmt with x5c and receipt, authData); the certificates and data are placeholders
put("cbor", "app-attest-attestation", cbor2.dumps({"fmt": "apple-appattest", "attStmt": {"x5c": [b"\x30\x82\x02\x00" + bytes(16), b"\x30\x82\x01\x00" + bytes(16)],
    "receipt": b"\x30\x80" + bytes(24)}, "authData": hashlib.sha256(b"app.example.com").digest() + bytes([0x40]) + bytes(4) + b"appattest\x00\x00\x00\x00\x00\x00\x00" + b"\x00\x20" + bytes(32)}))

# dcql: OpenID4VP 1.0 §6 examples, shortened
put("dcql", "sd-jwt-query", json.dumps({"credentials": [{"id": "my_credential", "format": "dc+sd-jwt", "meta": {"vct_values": ["https://credentials.example.com/identity_credential"]},
    "claims": [{"path": ["last_name"]}, {"path": ["address", "street_address"]}]}]}))
put("dcql", "mdoc-query", json.dumps({"credentials": [{"id": "mdl", "format": "mso_mdoc", "meta": {"doctype_value": "org.iso.7367.1.mVRC"},
    "claims": [{"path": ["org.iso.7367.1", "vehicle_holder"]}, {"path": ["org.iso.18013.5.1", "first_name"], "intent_to_retain": False}],
    "trusted_authorities": [{"type": "aki", "values": ["s9tIpPmhxdiuNkHMEWNpYim8S8Y"]}]}]}))

# callback: STATE stands for the sign-in's state
for i, text in enumerate(["https://app.example.com/oauth/callback?code=c1&state=STATE",
                          "https://app.example.com/oauth/callback?code=c+2%2B&state=STATE&iss=https%3A%2F%2Fid.example.com",
                          "https://app.example.com/oauth/callback?error=access_denied&state=STATE",
                          "https://app.example.com/oauth/callback#code=c&state=STATE",
                          "https://APP.example.com:443/oauth/callback?state=STATE&code=x"]):
    put("callback", f"callback-{i}", text)

# client-address
for i, text in enumerate(["203.0.113.7", "203.0.113.7:8443", "2001:db8::1", "[2001:db8::1]:443", "::ffff:192.0.2.1", "fe80::1%eth0", " 10.0.0.1\t", "1:2:3:4:5:6:7:8"]):
    put("client-address", f"address-{i}", text)

# redirect
for i, text in enumerate(["https://web.example.com/app/page?x=1", "https://web.example.com/app", "https://other.example.org/",
                          "http://127.0.0.1:8080/local/x", "https://web.example.com@evil.example/app", "https://web.example.com/app/../x",
                          "https://WEB.example.com:443/app/x#f"]):
    put("redirect", f"goto-{i}", text)

# companion-bodies
for i, body in enumerate([{"redirect_uri": "com.example.app:/cb", "binding": "b" * 43}, {"flow_id": "f", "binding": "b" * 43, "wait": 20},
                          {"app_callback_uri": "https://app.example.com/bankid", "statement_id": "s"}, {"goto": "https://web.example.com/app"},
                          {"key_id": "k", "attestation": "a", "challenge": "c"}, {"token": "t", "token_type_hint": "refresh_token"}]):
    put("companion-bodies", f"body-{i}", json.dumps(body))

# jwe: a token after an even byte (RFC 7520 §5.4 and §5.5, which the target's keys open); after an odd byte, the
# key management and content encryption indexes, a key byte, and the plaintext to encrypt
rfc7520 = {
    "rfc7520-5.4": "eyJhbGciOiJFQ0RILUVTK0ExMjhLVyIsImtpZCI6InBlcmVncmluLnRvb2tAdHVja2Jvcm91Z2guZXhhbXBsZSIsImVwayI6eyJrdHkiOiJFQyIsImNydiI6IlAtMzg0IiwieCI6InVCbzRrSFB3Nmtiang1bDB4b3dyZF9vWXpCbWF6LUdLRlp1NHhBRkZrYllpV2d1dEVLNml1RURzUTZ3TmROZzMiLCJ5Ijoic3AzcDVTR2haVkMyZmFYdW1JLWU5SlUyTW84S3BvWXJGRHI1eVBOVnRXNFBnRXdaT3lRVEEtSmRhWTh0YjdFMCJ9LCJlbmMiOiJBMTI4R0NNIn0.0DJjBXri_kBcC46IkU5_Jk9BqaQeHdv2.mH-G2zVqgztUtnW_.tkZuOO9h95OgHJmkkrfLBisku8rGf6nzVxhRM3sVOhXgz5NJ76oID7lpnAi_cPWJRCjSpAaUZ5dOR3Spy7QuEkmKx8-3RCMhSYMzsXaEwDdXta9Mn5B7cCBoJKB0IgEnj_qfo1hIi-uEkUpOZ8aLTZGHfpl05jMwbKkTe2yK3mjF6SBAsgicQDVCkcY9BLluzx1RmC3ORXaM0JaHPB93YcdSDGgpgBWMVrNU1ErkjcMqMoT_wtCex3w03XdLkjXIuEr2hWgeP-nkUZTPU9EoGSPj6fAS-bSz87RCPrxZdj_iVyC6QWcqAu07WNhjzJEPc4jVntRJ6K53NgPQ5p99l3Z408OUqj4ioYezbS6vTPlQ.WuGzxmcreYjpHGJoa17EBg",
    "rfc7520-5.5": "eyJhbGciOiJFQ0RILUVTIiwia2lkIjoibWVyaWFkb2MuYnJhbmR5YnVja0BidWNrbGFuZC5leGFtcGxlIiwiZXBrIjp7Imt0eSI6IkVDIiwiY3J2IjoiUC0yNTYiLCJ4IjoibVBVS1RfYkFXR0hJaGcwVHBqanFWc1AxclhXUXVfdndWT0hIdE5rZFlvQSIsInkiOiI4QlFBc0ltR2VBUzQ2ZnlXdzVNaFlmR1RUMElqQnBGdzJTUzM0RHY0SXJzIn0sImVuYyI6IkExMjhDQkMtSFMyNTYifQ..yc9N8v5sYyv3iGQT926IUg.BoDlwPnTypYq-ivjmQvAYJLb5Q6l-F3LIgQomlz87yW4OPKbWE1zSTEFjDfhU9IPIOSA9Bml4m7iDFwA-1ZXvHteLDtw4R1XRGMEsDIqAYtskTTmzmzNa-_q4F_evAPUmwlO-ZG45Mnq4uhM1fm_D9rBtWolqZSF3xGNNkpOMQKF1Cl8i8wjzRli7-IXgyirlKQsbhhqRzkv8IcY6aHl24j03C-AR2le1r7URUhArM79BY8soZU0lzwI-sD5PZ3l4NDCCei9XkoIAfsXJWmySPoeRb2Ni5UZL4mYpvKDiwmyzGd65KqVw7MsFfI_K767G9C9Azp73gKZD0DyUn1mn0WW5LmyX_yJ-3AROq8p1WZBfG-ZyJ6195_JGG2m9Csg.WCCkNa-x4BeB9hIDIfFuhg",
}
for name, token in rfc7520.items(): put("jwe", name, b"\x00" + token.encode())
for alg in range(5):
    for enc in range(6):
        put("jwe", f"encrypt-{alg}-{enc}", bytes([1, alg, enc, alg + enc]) + b"inner.jws.token")

# navigation: UAE Pass's authenticator links (its documented successurl/failureurl, once and twice encoded), a
# foreign return page, Swedish BankID's autostart link, the redirect URI and ordinary pages
for i, text in enumerate(["uaepass://digitalid?successurl=https%3A%2F%2Fid.uaepass.ae%2Fok&failureurl=https%3A%2F%2Fid.uaepass.ae%2Fno",
                          "uaepassstg://digitalid?successURL=https%253A%252F%252Fstg-id.uaepass.ae%252Fok&x=1%2B2&failureurl=#frag",
                          "uaepass://digitalid?successurl=https%3A%2F%2Fevil.example%2Fok",
                          "uaepass://digitalid?successurl=https%3A%2F%2Fid.uaepass.ae%40evil.example%2F",
                          "bankid:///?autostarttoken=7c40b5c9-fa74-49cf-b98c-bfe651f9a7c6&redirect=null",
                          "https://app.bankid.com/?autostarttoken=7c40b5c9&redirect=https%3A%2F%2Fapp.example.com%2Freturn",
                          "https://app.example.com/oauth/callback?tenant=a&code=c&state=s", "https://id.uaepass.ae/authorize?x=1",
                          "tel:+971000", "HTTPS://APP.EXAMPLE.COM:443/oauth/callback?tenant=a"]):
    put("navigation", f"url-{i}", text)

# return-url: returns for this flow (f7Qx2bL9) and another, callbacks at the redirect URI and the response link
for i, text in enumerate(["https://app.example.com/return?app=1&switchback_flow=f7Qx2bL9&switchback_outcome=success",
                          "https://app.example.com/return?app=1&switchback_flow=f7Qx2bL9&switchback_outcome=failure",
                          "https://app.example.com/return?app=1&switchback_flow=other&switchback_outcome=success",
                          "https://app.example.com/oauth/callback?tenant=a&code=c&state=s",
                          "https://links.example.com/r?code=c&state=s&iss=https%3A%2F%2Fid.uaepass.ae",
                          "https://links.example.com/r#state=s&error=access_denied", "https://links.example.com/r",
                          "https://app.example.com/bankid-return", "https://app.example.com/return?switchback_flow=f7Qx2bL9&switchback_outcome=success"]):
    put("return-url", f"url-{i}", text)

# session-cookie: Cookie headers and Authorization headers (the text is read as both)
sid = b64u(hashlib.sha256(b"session").digest())
for i, text in enumerate([f"__Host-switchback_session={sid}", f"theme=dark; __Host-switchback_session={sid};\tlang=en",
                          f"__Host-switchback_session=short; __Host-switchback_session={sid}", f"Session {sid}", f"session {sid}x",
                          f"Bearer {sid}", f"__host-switchback_session={sid}"]):
    put("session-cookie", f"header-{i}", text)

# response-query: what a provider's redirect to /response carries
for i, text in enumerate(["code=SplxlOBeZQQYbYS6WxSbIA&state=xyz&iss=https%3A%2F%2Fid.example.com",
                          "error=access_denied&error_description=The+user+cancelled&state=xyz", "code=a&code=b&state=s",
                          "state=s", "code=%E2%82%AC&state=a%26b%3Dc&extra=1", "code=c+d&state=s&error_uri=https%3A%2F%2Fx"]):
    put("response-query", f"query-{i}", text)

# crl: after an even byte, a revocation list's DER (v2, empty or with entries, a reason and a CRL number, or with
# a critical issuing distribution point); after an odd byte, a certificate naming distribution points
import datetime
from cryptography import x509
from cryptography.x509.oid import NameOID, ExtensionOID
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
iaca_key = ec.derive_private_key(7, ec.SECP256R1())
iaca = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test IACA"), x509.NameAttribute(NameOID.COUNTRY_NAME, "NO")])
when = datetime.datetime(2026, 11, 1, tzinfo=datetime.timezone.utc)
def crl(entries=(), extensions=()):
    builder = x509.CertificateRevocationListBuilder().issuer_name(iaca).last_update(when).next_update(when + datetime.timedelta(days=30))
    for serial, reason in entries:
        entry = x509.RevokedCertificateBuilder().serial_number(serial).revocation_date(when)
        if reason: entry = entry.add_extension(x509.CRLReason(reason), critical=False)
        builder = builder.add_revoked_certificate(entry.build())
    for extension, critical in extensions: builder = builder.add_extension(extension, critical=critical)
    return builder.sign(iaca_key, hashes.SHA256()).public_bytes(serialization.Encoding.DER)
put("crl", "list-empty", b"\x00" + crl())
put("crl", "list-entries", b"\x00" + crl([(1, None), (0x00ff, x509.ReasonFlags.key_compromise), (2**80, None)], [(x509.CRLNumber(7), False)]))
put("crl", "list-critical-idp", b"\x00" + crl([(5, None)], [(x509.IssuingDistributionPoint(
    full_name=[x509.UniformResourceIdentifier("http://iaca.example.com/iaca.crl")], relative_name=None, only_contains_user_certs=True,
    only_contains_ca_certs=False, only_some_reasons=None, indirect_crl=False, only_contains_attribute_certs=False), True)]))
leaf_key = ec.derive_private_key(11, ec.SECP256R1())
def certificate(points):
    builder = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Document signer")]))
        .issuer_name(iaca).public_key(leaf_key.public_key()).serial_number(42).not_valid_before(when)
        .not_valid_after(when + datetime.timedelta(days=365)))
    if points is not None: builder = builder.add_extension(x509.CRLDistributionPoints(points), critical=False)
    return builder.sign(iaca_key, hashes.SHA256()).public_bytes(serialization.Encoding.DER)
uri = lambda text: x509.UniformResourceIdentifier(text)
put("crl", "certificate-point", b"\x01" + certificate([x509.DistributionPoint([uri("http://iaca.example.com/iaca.crl")], None, None, None)]))
put("crl", "certificate-points", b"\x01" + certificate([
    x509.DistributionPoint([uri("https://a.example.com/l.crl"), uri("ldap://x.example.com/cn=l"), uri("http://b.example.com/")], None, None, None),
    x509.DistributionPoint([uri("http://partial.example.com/l.crl")], None, frozenset([x509.ReasonFlags.key_compromise]), None),
    x509.DistributionPoint([uri("http://indirect.example.com/l.crl")], None, None, [x509.DirectoryName(iaca)])]))
put("crl", "certificate-none", b"\x01" + certificate(None))
print("ok")
