import Crypto
import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback
import SwitchbackEmulator
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

/// Probes of the Singpass and MitID contract terms over HTTP, each on the provider's own profile carrying
/// the contract under test (``ProviderContractTests``): what the emulator does, read back as a term's value.
enum SingpassProbes {
    static let redirectURI = "https://app.example.com/oauth/callback"

    /// The singpass profile carrying `contract`, with a FAPI client whose JWKS holds its signing key, its
    /// encryption key (with `alg` `encryption`) and `extraKeys`.
    static func withSingpass(
        _ contract: ProviderContract, extraKeys: [JSONValue] = [], encryption: String = "ECDH-ES+A256KW",
        _ body: (Emulator, EmulatorHarness.Keys) async throws -> Void
    ) async throws {
        var profile = Profile.singpass
        profile.contract = contract
        let keys = try await EmulatorHarness.clientKeys()
        guard case .object(let signing) = keys.jwks, case .array(let signingKeys)? = signing["keys"] else { throw RigFailure("no keys") }
        var configuration = EmulatorConfiguration.defaults
        let encryptionKey = JSONValue.object(
            EmulatorSingpassTests.decryptionKey.publicJWK(algorithm: encryption).merging(["use": .string("enc")]) { $1 })
        configuration.clients.append(
            .init(
                clientID: "singpass-app", authentication: .privateKeyJWT, redirectURIs: [redirectURI], idTokenAlgorithm: "ES256",
                jwks: .object(["keys": .array(signingKeys + [encryptionKey] + extraKeys)]), appReturnURLs: [EmulatorSingpassTests.launchURL]
            ))
        try await EmulatorHarness.withEmulator(profile: profile, configuration: configuration) { try await body($0, keys) }
    }

    static func client(_ emulator: Emulator, keys: EmulatorHarness.Keys, transport: any HTTPTransport = URLSessionTransport()) throws -> OIDCClient {
        OIDCClient(
            configuration: ClientConfiguration(
                clientID: "singpass-app", redirectURI: try #require(URL(string: redirectURI)), authentication: .privateKeyJWT(keys.signer),
                dpop: .perSignIn, decryptionKeys: [EmulatorSingpassTests.decryptionKey]),
            provider: .discovery(issuer: emulator.issuer), transport: transport)
    }

    /// The OAuth error the pushed request is refused with, or nil when it is taken.
    static func parError(_ client: OIDCClient, scopes: [String] = ["openid"]) async throws -> String? {
        var options = EmulatorSingpassTests.launchOptions()
        options.scopes = scopes
        do {
            _ = try await client.prepareAuthorization(options)
            return nil
        } catch let error as SwitchbackError {
            return error.oauthError?.error ?? "\(error.code)"
        }
    }

    /// A transport that changes each request before sending it (a header dropped or spoilt), and keeps the
    /// token endpoint's answers.
    struct Rewriting: HTTPTransport {
        let rewrite: @Sendable (inout HTTPRequest) -> Void
        let tokenAnswers = LockedValue<[Data]>([])

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            var request = request
            rewrite(&request)
            let response = try await URLSessionTransport().send(request)
            if request.url.path.hasSuffix("/token") { tokenAnswers.withLock { $0.append(response.body) } }
            return response
        }
    }

    /// The JSON object a compact JWS or JWE segment encodes.
    static func segment(_ token: String, _ index: Int) throws -> [String: JSONValue] {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count > index, let data = Base64URL.decode(String(parts[index])),
            case .object(let object) = try JSONDecoder().decode(JSONValue.self, from: data)
        else { throw RigFailure("not a compact token") }
        return object
    }

    /// A public signing key on `curve` (an EC JWK with its own kid), or an RSA one.
    static func extraKey(_ curve: String) -> JSONValue {
        let x963: Data =
            switch curve {
            case "P-384": P384.Signing.PrivateKey().publicKey.x963Representation
            case "P-521": P521.Signing.PrivateKey().publicKey.x963Representation
            default: P256.Signing.PrivateKey().publicKey.x963Representation
            }
        let jwk = curve == "RSA" ? ["kty": .string("RSA"), "n": .string("sXch"), "e": .string("AQAB")] : ECPoint.jwk(curve: curve, x963: x963)
        return .object(jwk.merging(["kid": .string("extra-\(curve)"), "use": .string("sig")]) { $1 })
    }

    static func observed(_ key: ProviderContract.Term.Key, under contract: ProviderContract) async throws -> ProviderContract.Term.Value {
        let listed = contract.list(key) ?? []
        func candidates(_ more: [String]) -> [String] { listed + more.filter { !listed.contains($0) } }
        switch key {
        case .allowedScopes:
            // Each scope beside openid, pushed: taken, or refused as invalid_scope.
            var taken: [String] = []
            try await withSingpass(contract) { emulator, keys in
                let client = try client(emulator, keys: keys)
                for scope in candidates(["openid", "user.identity", "name", "email", "mobileno", "profile", "uinfin", "sub_account"]) {
                    let error = try await parError(client, scopes: scope == "openid" ? ["openid"] : ["openid", scope])
                    if error == nil { taken.append(scope) } else { #expect(error == "invalid_scope", "\(scope)") }
                }
            }
            return .list(taken)
        case .clientKeyCurves:
            // A client whose JWKS also holds a key on each curve; an RSA key is refused whatever the curves.
            var taken: [String] = []
            for curve in candidates(["P-256", "P-384", "P-521"]) + ["RSA"] {
                try await withSingpass(contract, extraKeys: [extraKey(curve)]) { emulator, keys in
                    if try await parError(try client(emulator, keys: keys)) == nil { taken.append(curve) }
                }
            }
            #expect(!taken.contains("RSA"))
            return .list(taken)
        case .keyEncryptionAlgorithms:
            var taken: [String] = []
            for algorithm in candidates(["ECDH-ES+A128KW", "ECDH-ES+A192KW", "ECDH-ES+A256KW", "ECDH-ES"]) {
                try await withSingpass(contract, encryption: algorithm) { emulator, keys in
                    if try await parError(try client(emulator, keys: keys)) == nil { taken.append(algorithm) }
                }
            }
            return .list(taken)
        case .invalidDPoPError:
            // A proof that is no JWT at the pushed request.
            var error: String?
            try await withSingpass(contract) { emulator, keys in
                let spoilt = Rewriting { request in
                    if request.url.path.hasSuffix("/par") { request.headers["DPoP"] = "not-a-proof" }
                }
                error = try await parError(try client(emulator, keys: keys, transport: spoilt))
            }
            return .text(error ?? "taken")
        case .missingDPoPError, .subjectAttributes, .idTokenContentEncryption:
            // A whole sign-in; its token request without the DPoP header for the missing proof.
            var value: ProviderContract.Term.Value?
            try await withSingpass(contract) { emulator, keys in
                let transport = Rewriting { request in
                    guard key == .missingDPoPError, request.url.path.hasSuffix("/token") else { return }
                    request.headers = request.headers.filter { $0.key.lowercased() != "dpop" }
                }
                let client = try client(emulator, keys: keys, transport: transport)
                var options = EmulatorSingpassTests.launchOptions()
                options.scopes = ["openid", "user.identity", "name"]
                let session = try await client.prepareAuthorization(options)
                let browser = EmulatorBrowser()
                let (link, page) = try await browser.handOff(session.authorizationURL)
                _ = try await EmulatorUAEPassTests.app(emulator).respond(to: link, with: .approve())
                let tapped = try EmulatorMitIDTests.returnLink(
                    try await browser.open(try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer)))
                do {
                    let credential = try await client.completeAuthorization(.redirect(tapped), session: session)
                    switch key {
                    case .subjectAttributes:
                        let claims = try segment(try #require(credential.idToken), 1)
                        if case .object(let attributes)? = claims["sub_attributes"] {
                            #expect(attributes["name"] == .string(EmulatorConfiguration.defaults.users[0].name))
                            #expect(attributes["identity_coi"] == .string("SG"))
                            #expect(attributes["email"] == nil, "only for the scopes asked")
                        }
                        value = .flag(claims["sub_attributes"] != nil)
                    case .idTokenContentEncryption:
                        let answer = try #require(transport.tokenAnswers.withLock { $0.last })
                        guard case .object(let body) = try JSONDecoder().decode(JSONValue.self, from: answer),
                            case .string(let jwe)? = body["id_token"]
                        else { throw RigFailure("no id_token") }
                        if case .string(let enc)? = try segment(jwe, 0)["enc"] { value = .text(enc) }
                    default:
                        value = .text("taken")
                    }
                } catch let error as SwitchbackError where key == .missingDPoPError {
                    value = .text(error.oauthError?.error ?? "\(error.code)")
                }
            }
            return try #require(value)
        default:
            throw RigFailure("\(key) is not a Singpass probe")
        }
    }

    /// MitID: after the MitID app returns, the broker's page redirects to the redirect URI (false) or
    /// shows a page of its own whose button leads there (true).
    static func returnPage(under contract: ProviderContract) async throws -> ProviderContract.Term.Value {
        var profile = Profile.mitID
        profile.contract = contract
        var value: ProviderContract.Term.Value?
        try await EmulatorHarness.withEmulator(profile: profile) { emulator in
            let client = OIDCClient(
                configuration: ClientConfiguration(clientID: "native-rs", redirectURI: try #require(URL(string: redirectURI))),
                provider: .discovery(issuer: emulator.issuer))
            let session = try await client.prepareAuthorization(EmulatorMitIDTests.appSwitch(EmulatorMitIDTests.resumeURL))
            let browser = EmulatorBrowser()
            guard case .page(200, let page) = try await browser.open(session.authorizationURL) else { throw RigFailure("no MitID page") }
            let issuer = try #require(URL(string: emulator.issuer))
            let link = try #require(WebPage(url: issuer, html: page).tapHandOff)
            _ = try await EmulatorUAEPassTests.app(emulator).respond(to: link.url, with: .approve())
            switch try await browser.open(try EmulatorBankIDNorwayTests.continueURL(page, base: emulator.issuer)) {
            case .redirect(let location):
                #expect(location.hasPrefix(redirectURI + "?code="))
                value = .flag(false)
            case .page(200, let html) where html.contains("id=\"return\""):
                value = .flag(true)
            case let other:
                throw RigFailure("unexpected \(other)")
            }
        }
        return try #require(value)
    }
}
