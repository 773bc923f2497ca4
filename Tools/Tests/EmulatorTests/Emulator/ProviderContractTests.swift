import Foundation
import Testing
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
@_spi(SwitchbackInternals) import SwitchbackTesting
import ToolsTestSupport

/// The providers' contracts (issue 51): each term is enforced by the emulator, not decoration. For every
/// term of every contract, a plain profile carrying the contract, and then carrying it with that one term
/// changed, is probed over HTTP: what the emulator does follows the term each time. Each profile carries
/// its provider's contract, and Documentation/Providers.md states every term with its source.
@Suite("Provider contracts")
struct ProviderContractTests {
    /// What the emulator does about `key`, read over HTTP from an emulator whose profile carries `contract`:
    /// for a lifetime, the term's own value when something is still taken a second before it and refused a
    /// second after it (else -1); for refresh tokens, whether one is issued and the refresh grant answers.
    static func observed(_ key: ProviderContract.Term.Key, under contract: ProviderContract) async throws -> ProviderContract.Term.Value {
        switch key {
        case .allowedScopes, .subjectAttributes, .missingDPoPError, .invalidDPoPError, .clientKeyCurves, .keyEncryptionAlgorithms,
            .idTokenContentEncryption:
            return try await SingpassProbes.observed(key, under: contract)
        case .providerReturnPage:
            return try await SingpassProbes.returnPage(under: contract)
        default:
            break
        }
        // Userinfo's shape is probed where the emulator answers a userinfo identity (the UAE Pass profile, whose
        // web sign-in reports an acr); the other terms on a plain profile.
        var profile = key == .subjectPrefix || key == .userInfoACR ? Profile.uaePass() : Profile.generic
        // The term alone: a plain profile's client asks for what a plain provider takes (openid profile email).
        profile.contract = ProviderContract(provider: contract.provider, terms: contract.terms.filter { $0.key == key })
        let clock = ManualClock(Date())
        var observed: ProviderContract.Term.Value?
        try await EmulatorHarness.withEmulator(profile: profile, clock: clock) { emulator in
            switch key {
            case .pushedRequestLifetime:
                let lifetime = try #require(contract.seconds(key))
                var taken: [Bool] = []
                for wait in [lifetime - 1, lifetime + 1] {
                    let session = try await EmulatorHarness.client(emulator, par: .always).prepareAuthorization()
                    #expect(session.authorizationURL.query?.contains("request_uri=") == true)
                    clock.advance(by: wait)
                    // Taken: the provider's login page; refused: an error page, or the error sent back to the app.
                    switch try await EmulatorBrowser().open(session.authorizationURL) {
                    case .page(let status, _): taken.append(status == 200)
                    case .redirect(let location): taken.append(!location.contains("error="))
                    case .handOff: taken.append(true)
                    }
                }
                observed = .seconds(taken == [true, false] ? lifetime : -1)
            case .codeLifetime:
                let lifetime = try #require(contract.seconds(key))
                var taken: [Bool] = []
                for wait in [lifetime - 1, lifetime + 1] {
                    // The client reads the emulator's clock: the ID token is issued after the wait.
                    let client = EmulatorHarness.client(emulator, clock: clock)
                    let session = try await client.prepareAuthorization()
                    guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL) else {
                        throw RigFailure("no redirect")
                    }
                    clock.advance(by: wait)
                    do {
                        _ = try await client.completeAuthorization(.redirect(try #require(URL(string: location))), session: session)
                        taken.append(true)
                    } catch let error as SwitchbackError where error.oauthError?.error == "invalid_grant" {
                        taken.append(false)
                    }
                }
                observed = .seconds(taken == [true, false] ? lifetime : -1)
            case .redirectsInvalidRequestURI:
                // A request_uri opened twice: the second answer is a redirect to the app with the error and
                // the request's state, or a page.
                let session = try await EmulatorHarness.client(emulator, par: .always).prepareAuthorization()
                _ = try await EmulatorBrowser().open(session.authorizationURL)
                switch try await EmulatorBrowser().open(session.authorizationURL) {
                case .redirect(let location):
                    let query = URLComponents(string: location)?.queryItems ?? []
                    #expect(query.contains { $0.name == "error" && $0.value == "invalid_request_uri" })
                    #expect(query.contains { $0.name == "state" && $0.value == session.state })
                    observed = .flag(true)
                default:
                    observed = .flag(false)
                }
            case .subjectPrefix, .userInfoACR:
                // Userinfo as the provider answers it, read raw: its `sub` (the ID token's is the same, or the
                // sign-in would have been refused) and whether it carries the `acr` the sign-in asked for.
                let client = OIDCClient(
                    configuration: ClientConfiguration(
                        clientID: "backend", redirectURI: try #require(URL(string: "com.example.app:/oauth/callback")),
                        authentication: .clientSecretBasic(secret: "backend-secret"), pushedAuthorization: .never, identitySource: .userInfo),
                    provider: .static(.uaePass(base: try #require(URL(string: emulator.issuer)))))
                let session = try await client.prepareAuthorization(
                    AuthorizationOptions(scopes: [UAEPassOptions.profileScope], acrValues: [UAEPassOptions.webACR]))
                let landing = try await EmulatorBrowser().signIn(session.authorizationURL)
                let credential = try await client.completeAuthorization(try EmulatorBrowser.callback(landing), session: session)
                let answer = try await URLSessionTransport().send(
                    HTTPRequest(
                        method: .get, url: try #require(URL(string: emulator.issuer + "/idshub/userinfo")),
                        headers: ["Authorization": "Bearer \(credential.accessToken)"]))
                guard case .object(let claims)? = try? JSONDecoder().decode(JSONValue.self, from: answer.body),
                    case .string(let subject)? = claims["sub"]
                else { throw RigFailure("userinfo answered \(answer.status)") }
                #expect(credential.subject == subject, "the ID token's sub and userinfo's agree")
                if key == .subjectPrefix {
                    observed = .text(subject.hasSuffix("9b1f7c2e-alice") ? String(subject.dropLast("9b1f7c2e-alice".count)) : "?")
                } else {
                    observed = .flag(claims["acr"] != nil)
                }
            case .refreshTokens:
                let client = EmulatorHarness.client(emulator)
                let session = try await client.prepareAuthorization()
                guard case .redirect(let location) = try await EmulatorBrowser().signIn(session.authorizationURL) else {
                    throw RigFailure("no redirect")
                }
                let credential = try await client.completeAuthorization(.redirect(try #require(URL(string: location))), session: session)
                let answer = try await URLSessionTransport().send(
                    .form(
                        try #require(URL(string: emulator.issuer + "/token")),
                        [("grant_type", "refresh_token"), ("refresh_token", credential.refreshToken ?? "none"), ("client_id", "native-rs")]))
                let refused = String(decoding: answer.body, as: UTF8.self).contains("unsupported_grant_type")
                #expect((credential.refreshToken == nil) == refused, "the token response and the grant agree")
                observed = .flag(credential.refreshToken != nil && answer.status == 200)
            case .accessTokenLifetime, .singleUseAccessTokens:
                // The token response's lifetime (the clock stands still), and userinfo asked twice with one token.
                let client = EmulatorHarness.client(emulator, clock: clock)
                let session = try await client.prepareAuthorization()
                let credential = try await client.completeAuthorization(
                    try EmulatorBrowser.callback(try await EmulatorBrowser().signIn(session.authorizationURL)), session: session)
                if key == .accessTokenLifetime {
                    observed = .seconds(try #require(credential.expiresAt).timeIntervalSince(clock.now()).rounded())
                } else {
                    var statuses: [Int] = []
                    for _ in 0..<2 {
                        let answer = try await URLSessionTransport().send(
                            HTTPRequest(
                                method: .get, url: try #require(URL(string: emulator.issuer + "/userinfo")),
                                headers: ["Authorization": "Bearer \(credential.accessToken)"]))
                        statuses.append(answer.status)
                    }
                    #expect(statuses.first == 200)
                    observed = .flag(statuses == [200, 401])
                }
            case .responseModes:
                // Each mode asked for: the login page (taken), or the error sent back (refused).
                var taken: [String] = []
                let listed = contract.list(key) ?? []
                for mode in listed + ["query", "fragment", "form_post"].filter({ !listed.contains($0) }) {
                    guard let responseMode = ResponseMode(rawValue: mode) else { continue }
                    let session = try await EmulatorHarness.client(emulator).prepareAuthorization(AuthorizationOptions(responseMode: responseMode))
                    switch try await EmulatorBrowser().open(session.authorizationURL) {
                    case .page(200, _): taken.append(mode)
                    case .redirect(let location): #expect(location.contains("error=invalid_request"), "\(mode)")
                    case let other: throw RigFailure("\(mode): \(other)")
                    }
                }
                observed = .list(taken)
            default:
                throw RigFailure("\(key) is probed elsewhere")
            }
        }
        return try #require(observed)
    }

    /// A value other than the term's, of its kind, that the probes can tell apart: for a list its first
    /// entry alone (or one more entry); for an error code or an algorithm another that exists.
    static func flipped(_ key: ProviderContract.Term.Key, _ value: ProviderContract.Term.Value) -> ProviderContract.Term.Value {
        switch (key, value) {
        case (.missingDPoPError, .text(let text)), (.invalidDPoPError, .text(let text)):
            .text(text == "invalid_request" ? "invalid_dpop_proof" : "invalid_request")
        case (.idTokenContentEncryption, .text(let text)): .text(text == "A256GCM" ? "A128CBC-HS256" : "A256GCM")
        case (_, .seconds(let seconds)): .seconds(seconds == 30 ? 120 : 30)
        case (_, .flag(let flag)): .flag(!flag)
        case (_, .text(let text)): .text(text == "" ? "EXAMPLE/" : "")
        case (_, .list(let list)): .list(list.count > 1 ? [list[0]] : list + ["EXAMPLE"])
        }
    }

    static let terms: [(provider: String, key: ProviderContract.Term.Key)] = ProviderContract.all.flatMap { contract in
        contract.terms.map { (contract.provider, $0.key) }
    }

    @Test(
        "every term of every contract is enforced: the emulator does what the term says, and otherwise when the term says otherwise",
        arguments: 0..<terms.count)
    func enforced(_ index: Int) async throws {
        let (provider, key) = Self.terms[index]
        let contract = try #require(ProviderContract.of(provider))
        let term = try #require(contract.term(key))
        #expect(try await Self.observed(key, under: contract) == term.value, "\(provider) \(key)")
        let changed = Self.flipped(key, term.value)
        #expect(try await Self.observed(key, under: contract.replacing(key, with: changed)) == changed, "\(provider) \(key) changed")
    }

    @Test("each provider's profile carries its contract")
    func profiles() throws {
        #expect(Profile.singpass.contract == .singpass)
        #expect(Profile.uaePass().contract == .uaePass)
        #expect(Profile.mitID.contract == .mitID)
        #expect(try Profile.named("mitid", variants: ["idura"]).get().contract == .mitIDIdura)
        #expect(Profile.bankIDSweden().contract == .bankIDSweden)
        // The broker's continue page, a variant of its own, overrides the contract's plain redirect.
        #expect(try Profile.named("bankid-se", variants: ["continue-button"]).get().contract?.flag(.providerReturnPage) == true)
        #expect(ProviderPreset.mitID(.signaturgruppen).redirectsWithoutTap == (ProviderContract.mitID.flag(.providerReturnPage) == false))
        #expect(Set(ProviderContract.all.map(\.provider)).isSubset(of: Set(ProviderPreset.all.map(\.name))))
    }

    @Test("Documentation/Providers.md has a row for every term, naming it and citing its source")
    func documented() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("Documentation/Providers.md"), encoding: .utf8)
        for contract in ProviderContract.all {
            for term in contract.terms {
                let marker = "`\(contract.provider).\(term.key.rawValue)`"
                let row = text.split(separator: "\n").first { $0.contains(marker) }
                #expect(row != nil, "Providers.md has no row for \(marker)")
                #expect(row?.contains(term.source) == true, "\(marker)'s row does not cite \(term.source)")
            }
        }
    }
}
