import Foundation

/// A way the emulator can misbehave on purpose, from the OpenID relying-party negative list
/// (`conformance.md`) and the failures real providers show. Faults are switched on per client (in the
/// configuration, with ``Emulator/setFaults(_:forClient:)`` or `POST /emulator/faults`) or per request
/// (the authorize parameter `emulator_fault=a,b`, which the client sends as an extra parameter).
///
/// Each case says what a correct relying party does when it meets it.
public enum Fault: String, Sendable, Codable, CaseIterable {
    // MARK: ID token signature

    /// The ID token's signature bytes are altered. Refuse: signature invalid.
    case badSignature = "bad-signature"
    /// The ID token is signed with HS256 (the client ID as the key) instead of the registered algorithm.
    /// Refuse: algorithm not allowed.
    case hs256 = "hs256"
    /// The ID token is unsigned (`alg: none`). Refuse: algorithm not allowed.
    case algNone = "alg-none"
    /// New signing keys just before signing, so the token's `kid` is not in the JWKS the client cached
    /// at its first sign-in. Accept: refetch the JWKS once and verify.
    case rotateKeys = "rotate-keys"
    /// The JWKS also publishes a key nobody can parse. Accept: skip it and use the good keys.
    /// This fault concerns the JWKS document, which is shared: it applies when set for any client.
    case unparseableJWK = "bad-jwks-key"

    // MARK: ID token claims

    /// `iss` names another issuer. Refuse.
    case wrongIssuer = "wrong-iss"
    /// No `iss`. Refuse.
    case missingIssuer = "missing-iss"
    /// `aud` is another client. Refuse.
    case wrongAudience = "wrong-aud"
    /// No `aud`. Refuse.
    case missingAudience = "missing-aud"
    /// No `sub`. Refuse.
    case missingSubject = "missing-sub"
    /// No `iat`. Refuse.
    case missingIssuedAt = "missing-iat"
    /// `nonce` differs from the request's. Refuse.
    case wrongNonce = "wrong-nonce"
    /// `at_hash` does not match the access token. Refuse.
    case badAccessTokenHash = "bad-at-hash"
    /// No `at_hash`. Accept: it is optional for tokens from the token endpoint (OpenID Core §3.1.3.6).
    case missingAccessTokenHash = "missing-at-hash"
    /// `c_hash` does not match the code. Refuse.
    case badCodeHash = "bad-c-hash"
    /// No `c_hash`. Accept: it is required only in hybrid-flow authorization responses.
    case missingCodeHash = "missing-c-hash"

    // MARK: Authorization response

    /// The `iss` response parameter (RFC 9207) names another issuer. Refuse before redeeming.
    case wrongIssuerParameter = "wrong-iss-parameter"
    /// No `iss` response parameter although discovery promises it. Refuse before redeeming.
    case missingIssuerParameter = "missing-iss-parameter"
    /// The authorization response is `error=access_denied`, in the request's response mode (a
    /// form_post error when the mode is form_post). Report the provider's error.
    case authorizationError = "authorization-error"

    // MARK: Refresh

    /// The refreshed ID token names another issuer. Refuse.
    case refreshChangesIssuer = "refresh-changes-iss"
    /// The refreshed ID token names another subject. Refuse.
    case refreshChangesSubject = "refresh-changes-sub"
    /// The refreshed ID token is addressed to another client too. Refuse.
    case refreshChangesAudience = "refresh-changes-aud"

    // MARK: Token endpoint

    /// The token endpoint answers 503 with an OAuth `temporarily_unavailable` body. Refuse; the code is not used up.
    case tokenUnavailable = "token-5xx"
    /// The token endpoint answers only after ``EmulatorConfiguration/slowResponseDelay``. Time out.
    case tokenSlow = "token-slow"
    /// The token endpoint answers 200 with a body that is not JSON. Refuse.
    case tokenGarbage = "token-garbage"

    /// Parses a comma-separated list such as `wrong-iss,missing-at-hash`; fails on the first unknown name.
    public static func list(_ text: String) -> Result<Set<Fault>, UnknownFault> {
        var faults: Set<Fault> = []
        for name in text.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) where !name.isEmpty {
            guard let fault = Fault(rawValue: name) else { return .failure(UnknownFault(name: name)) }
            faults.insert(fault)
        }
        return .success(faults)
    }

    /// A fault name the emulator does not know.
    public struct UnknownFault: Error, CustomStringConvertible {
        public let name: String
        public var description: String {
            "unknown fault \"\(name)\"; known: \(Fault.allCases.map(\.rawValue).joined(separator: ", "))"
        }
    }
}

/// The faults switched on at run time, per client; read by every handler.
actor FaultBoard {
    private var byClient: [String: Set<Fault>]

    init(configuration: EmulatorConfiguration) {
        byClient = Dictionary(configuration.clients.map { ($0.clientID, Set($0.faults)) }, uniquingKeysWith: { $0.union($1) })
    }

    func set(_ faults: Set<Fault>, for clientID: String) { byClient[clientID] = faults }

    func faults(for clientID: String) -> Set<Fault> { byClient[clientID] ?? [] }

    func anyClient(has fault: Fault) -> Bool { byClient.values.contains { $0.contains(fault) } }
}
