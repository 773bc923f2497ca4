public import Foundation
import Crypto

/// A DPoP key (RFC 9449): the client proves possession of it with every token request and every use of
/// the access token bound to it, so a stolen access or refresh token is useless without the key.
/// ES256 over P-256. A client makes a new key for every sign-in (``ClientConfiguration/DPoPPolicy/perSignIn``;
/// Singpass's DPoP page: a key pair is not reused across login sessions), keeps it with that sign-in's
/// session while the user is away, and then with the ``Credential`` whose tokens it binds (the refresh token
/// too), so it is stored wherever the credential is (the Keychain on Apple platforms).
///
/// Where the private key lives is its ``DPoPSigner``'s business: in memory (a software key, stored as its
/// PEM), or in a hardware element that never lets it out (the Secure Enclave on Apple platforms, stored as
/// an opaque handle only that device can use). ``DPoPKeySource`` picks one for each new key.
public struct DPoPKey: Sendable {
    private let signer: any DPoPSigner
    private let publicKey: P256.Signing.PublicKey

    /// How long after `iat` a proof's `exp` lies. RFC 9449 sets no `exp`; Singpass's FAPI server (as GovTech's
    /// MockPass checks it) refuses a proof without one, and a verifier that knows `exp` stops a proof sooner.
    public static let proofLifetime: TimeInterval = 60

    /// A fresh software key.
    public init() {
        let key = P256.Signing.PrivateKey()
        signer = SoftwareDPoPSigner(key: key)
        publicKey = key.publicKey
    }

    /// A software key read back from its PEM (SEC1 or PKCS#8).
    public init(privateKeyPEM: String) throws {
        do {
            let key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
            signer = SoftwareDPoPSigner(key: key)
            publicKey = key.publicKey
        } catch {
            throw SwitchbackError(.invalidConfiguration, "the DPoP key is not a P-256 private key")
        }
    }

    /// A key whose private part `signer` holds (a hardware key). Throws `dpopKeyUnavailable` when the
    /// signer's public key is not a P-256 point.
    public init(signer: any DPoPSigner) throws {
        guard let publicKey = try? P256.Signing.PublicKey(rawRepresentation: signer.publicKeyRawRepresentation) else {
            throw SwitchbackError(.dpopKeyUnavailable, "the \(signer.kind) DPoP key's public key is not a P-256 point")
        }
        self.signer = signer
        self.publicKey = publicKey
    }

    /// Where the private key lives: `software` or a hardware kind (`secure-enclave`).
    public var kind: String { signer.kind }

    /// The private key as PEM (PKCS#8), for a software key; nil for a hardware key, whose private part
    /// never leaves it.
    public var privateKeyPEM: String? {
        (signer as? SoftwareDPoPSigner)?.key.pemRepresentation
    }

    /// The public key as a JWK, as it goes in each proof's header.
    public var publicJWK: JSONValue { .object(PublicJWK.p256(publicKey)) }

    /// The JWK SHA-256 thumbprint (RFC 7638): `dpop_jkt` at PAR, `cnf.jkt` in bound tokens.
    public var thumbprint: String {
        Self.thumbprint(of: publicJWK) ?? ""
    }

    /// The RFC 7638 thumbprint of an EC P-256 public JWK; nil for any other key.
    public static func thumbprint(of jwk: JSONValue) -> String? {
        guard case .object(let members) = jwk, members["kty"] == .string("EC"), members["crv"] == .string("P-256"),
            case .string(let x)? = members["x"], case .string(let y)? = members["y"]
        else { return nil }
        // The required members in lexicographic order, no whitespace (RFC 7638 §3.2).
        let canonical = #"{"crv":"P-256","kty":"EC","x":"\#(x)","y":"\#(y)"}"#
        return Base64URL.encode(SHA256.hash(data: Data(canonical.utf8)))
    }

    /// A proof for one HTTP request (RFC 9449 §4.2): `htm` and `htu` name the request, `iat` and `exp`
    /// (``proofLifetime`` later) bound it in time, `ath` binds the access token when one is presented,
    /// `nonce` echoes the server's when it asked for one.
    public func proof(method: String, url: URL, accessToken: String? = nil, nonce: String? = nil, now: Date, jti: String) throws -> String {
        var target = URLComponents(url: url, resolvingAgainstBaseURL: false)
        target?.query = nil
        target?.fragment = nil
        let issuedAt = now.timeIntervalSince1970.rounded(.down)
        var claims: [String: JSONValue] = [
            "jti": .string(jti), "htm": .string(method), "htu": .string(target?.string ?? url.absoluteString),
            "iat": .number(issuedAt), "exp": .number(issuedAt + Self.proofLifetime),
        ]
        if let accessToken { claims["ath"] = .string(Self.accessTokenHash(accessToken)) }
        if let nonce { claims["nonce"] = .string(nonce) }
        let header: JSONValue = .object(["typ": .string("dpop+jwt"), "alg": .string("ES256"), "jwk": publicJWK])
        let input = Base64URL.encode(Data(header.description.utf8)) + "." + Base64URL.encode(Data(JSONValue.object(claims).description.utf8))
        // ES256 in JWS is the raw r‖s pair, which is what `rawRepresentation` is.
        let signature: Data
        do {
            signature = try signer.signature(for: Data(input.utf8))
        } catch let error as SwitchbackError {
            throw error
        } catch {
            throw SwitchbackError(.dpopKeyUnavailable, "the DPoP key (\(signer.kind)) could not sign the proof", underlying: error)
        }
        return input + "." + Base64URL.encode(signature)
    }

    /// The nonce a server asks a proof to carry, when `response` is that request (RFC 9449 §8.1 at an
    /// authorization server: 400 with `use_dpop_nonce`; §9 at a resource server: 401 whose
    /// `WWW-Authenticate` says `use_dpop_nonce`), with the nonce in `DPoP-Nonce`; nil otherwise.
    public static func nonceRequested(by response: HTTPResponse, resourceServer: Bool) -> String? {
        guard let nonce = response.headers["dpop-nonce"], isHeaderSafe(nonce) else { return nil }
        if resourceServer {
            guard response.status == 401, response.headers["www-authenticate"]?.contains("use_dpop_nonce") == true else { return nil }
        } else {
            guard response.status == 400, (try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body))?.error == "use_dpop_nonce"
            else { return nil }
        }
        return nonce
    }

    /// Whether a server's nonce can go into a proof: 1 to 512 visible ASCII characters.
    static func isHeaderSafe(_ nonce: String) -> Bool {
        !nonce.isEmpty && nonce.count <= 512 && nonce.unicodeScalars.allSatisfy { $0.value >= 0x21 && $0.value <= 0x7E }
    }

    /// `ath`: base64url SHA-256 of the access token.
    public static func accessTokenHash(_ accessToken: String) -> String {
        Base64URL.encode(SHA256.hash(data: Data(accessToken.utf8)))
    }
}

extension DPoPKey: Equatable {
    /// Two keys are equal when they are of one kind and their stored forms are (compared in constant time).
    public static func == (lhs: DPoPKey, rhs: DPoPKey) -> Bool {
        lhs.kind == rhs.kind && ConstantTime.equals(Array(lhs.signer.storedRepresentation), Array(rhs.signer.storedRepresentation))
    }
}

extension DPoPKey: Codable {
    private enum CodingKeys: String, CodingKey { case kind, key }

    /// Decodes what ``encode(to:)`` wrote: a software key's PEM, or a hardware key's kind and handle, which
    /// the ``DPoPKeySource`` in the decoder's `userInfo` (``DPoPKeySource/userInfoKey``) turns back into a
    /// key; without one, a hardware key cannot be read (``SwitchbackError/Code/dpopKeyUnavailable``).
    public init(from decoder: any Decoder) throws {
        if let pem = try? decoder.singleValueContainer().decode(String.self) {
            try self.init(privateKeyPEM: pem)
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        guard let handle = Base64URL.decode(try container.decode(String.self, forKey: .key)) else {
            throw DecodingError.dataCorruptedError(forKey: .key, in: container, debugDescription: "the DPoP key's handle is not base64url")
        }
        let source = decoder.userInfo[DPoPKeySource.userInfoKey] as? DPoPKeySource ?? .software
        self = try source.restore(kind: kind, representation: Data(handle))
    }

    /// Encodes a software key as its PEM, a hardware key as its kind and handle. Only protected storage
    /// may hold the result (a software key's PEM is the private key).
    public func encode(to encoder: any Encoder) throws {
        if let privateKeyPEM {
            var container = encoder.singleValueContainer()
            try container.encode(privateKeyPEM)
        } else {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(kind, forKey: .kind)
            try container.encode(Base64URL.encode(signer.storedRepresentation), forKey: .key)
        }
    }
}

extension DPoPKey: CustomReflectable {
    /// `dump` and debuggers see the thumbprint, not the private key's storage.
    public var customMirror: Mirror { Mirror(self, children: ["kind": kind, "thumbprint": thumbprint], displayStyle: .struct) }
}

extension DPoPKey: CustomStringConvertible {
    /// The thumbprint only; the private key never appears.
    public var description: String { "DPoPKey(\(kind), jkt: \(thumbprint))" }
}
