import Foundation
@_spi(SwitchbackInternals) @testable import Switchback

/// The world the crash-consistency harness runs an app in: a provider that rotates refresh tokens and
/// revokes the family on reuse (RFC 9700 §4.14.2), storage that outlives the app (the Keychain), and a
/// plan that makes one step of the app fail, or kill it.
enum CrashWorld {
    /// What happens at the planned step.
    enum Fault: String, Sendable, CaseIterable, CustomStringConvertible {
        /// The operation fails and the app goes on: a store write refused, a provider not reached.
        case fail
        /// The app is terminated before the operation: every later step of this launch throws ``Killed``.
        case kill
        /// The provider processed the request, then the app was terminated before it read the answer.
        case killAfterProvider
        /// The provider processed the request; the connection broke before its answer arrived.
        case lostAnswer
        /// The provider processed the request; a gateway answered 502 in its place.
        case gateway502
        /// The provider processed the request, then failed to answer it: 503 with an OAuth error body.
        case unavailableJSON
        /// The provider processed the request and answered 200 with a body that is not JSON.
        case unreadable
        /// The provider processed the request and answered 200 with an ID token the client refuses.
        case refusedIDToken

        var description: String { rawValue }

        /// Faults that only a request can meet.
        static let requestOnly: Set<Fault> = [.killAfterProvider, .lostAnswer, .gateway502, .unavailableJSON, .unreadable, .refusedIDToken]

        /// Whether a refresh token the provider rotated can be lost without the app being at fault: the
        /// app was terminated, or never received a readable answer. Loss is then acceptable only when it
        /// is reported as ``SwitchbackError/Code/rotationLost``.
        var mayLoseAnswer: Bool { [.kill, .killAfterProvider, .lostAnswer, .gateway502, .unavailableJSON, .unreadable].contains(self) }
    }

    /// The app was terminated.
    struct Killed: Error {}

    /// Counts the app's steps (every store, secret and HTTP operation) and applies the fault at one, named by
    /// its label and which occurrence of that label it is, so that two tasks interleaving their steps
    /// differently from run to run still meet the fault at the same operation.
    actor Plan {
        private(set) var steps: [String] = []
        private let target: (step: String, occurrence: Int)?
        private let fault: Fault
        private(set) var dead = false
        private(set) var applied = false

        init(faultAt target: (step: String, occurrence: Int)? = nil, fault: Fault = .fail) {
            self.target = target
            self.fault = fault
        }

        /// The plan for the fault at step `index` of `steps` (a run without faults).
        init(faultAt index: Int, of steps: [String], fault: Fault) {
            self.init(faultAt: (steps[index], steps[..<index].filter { $0 == steps[index] }.count), fault: fault)
        }

        /// The fault to apply to this step, if it is the planned one; throws ``Killed`` once the app is dead.
        func next(_ step: String, request: Bool = false) throws -> Fault? {
            if dead { throw Killed() }
            let occurrence = steps.filter { $0 == step }.count
            steps.append(step)
            guard let target, target.step == step, target.occurrence == occurrence, !applied, request || !Fault.requestOnly.contains(fault)
            else { return nil }
            applied = true
            if fault == .kill {
                dead = true
                throw Killed()
            }
            return fault
        }

        func kill() { dead = true }
    }

    /// What outlives a launch: the Keychain's items.
    actor Disk {
        var credentials: [String: Credential] = [:]
        /// Protected items by name: the secret and its generation.
        var items: [String: (secret: String, generation: Int)] = [:]

        func set(_ credential: Credential?, _ key: String) { credentials[key] = credential }
        func setItem(_ item: (secret: String, generation: Int)?, _ name: String) { items[name] = item }
        func item(_ name: String) -> (secret: String, generation: Int)? { items[name] }

        /// The protected refresh token of `key` a read would open: the newest of its items.
        func secret(_ key: String) -> String? {
            RotatingSecrets.names(key).compactMap { items[$0] }.max { $0.generation < $1.generation }?.secret
        }
    }

    /// One launch's view of the disk: each operation is a step of `plan`.
    final class Store: CredentialCollection {
        let disk: Disk
        let plan: Plan

        init(_ disk: Disk, _ plan: Plan) {
            self.disk = disk
            self.plan = plan
        }

        private func step(_ name: String) async throws {
            if try await plan.next(name) == .fail { throw SwitchbackError(.storeFailed, "the store refused \(name) (injected)") }
        }

        func load(key: String) async throws -> Credential? {
            try await step("load \(key)")
            return await disk.credentials[key]
        }

        func save(_ credential: Credential, key: String) async throws {
            try await step("save \(key)")
            await disk.set(credential, key)
        }

        func remove(key: String) async throws {
            try await step("remove \(key)")
            await disk.set(nil, key)
        }

        func allCredentials() async throws -> [Credential] {
            try await step("list")
            return await disk.credentials.filter { !$0.key.hasSuffix(".refreshing") }.map(\.value)
        }
    }

    /// Protected items on the same disk, as the Keychain keeps them; reading never asks anyone here.
    struct Items: ProtectedItemStore {
        let disk: Disk
        let plan: Plan

        private func step(_ name: String) async throws {
            if try await plan.next(name) == .fail { throw SwitchbackError(.storeFailed, "the Keychain refused \(name) (injected)") }
        }

        func add(_ secret: String, name: String, generation: Int) async throws {
            try await step("item add \(name)")
            guard await disk.item(name) == nil else { throw SwitchbackError(.storeFailed, "duplicate item \(name)") }
            await disk.setItem((secret, generation), name)
        }

        func read(name: String, reason: String) async throws -> String? {
            try await step("item read \(name)")
            return await disk.item(name)?.secret
        }

        func delete(name: String) async throws {
            try await step("item delete \(name)")
            await disk.setItem(nil, name)
        }

        func generations(of names: [String]) async throws -> [String: Int] {
            try await step("item generations")
            var found: [String: Int] = [:]
            for name in names { if let item = await disk.item(name) { found[name] = item.generation } }
            return found
        }
    }

    /// A provider with rotating refresh tokens, one family per account, revoked on reuse.
    actor Provider {
        struct Family {
            var current: String
            var retired: Set<String> = []
            var revoked = false
            var reuses = 0
        }

        static let issuer = "https://id.example.test"
        private(set) var families: [String: Family] = [:]
        private(set) var refreshes = 0
        private var issued = 0

        /// Starts `subject`'s family; returns its first refresh token.
        func signIn(_ subject: String) -> String {
            issued += 1
            let token = "rt-\(subject)-\(issued)"
            families[subject] = Family(current: token)
            return token
        }

        func family(_ subject: String) -> Family? { families[subject] }

        /// Serves the token and revocation endpoints.
        func handle(_ request: HTTPRequest) -> HTTPResponse {
            let form = Dictionary(
                FormEncoding.decode(String(decoding: request.body ?? Data(), as: UTF8.self), plusIsSpace: true) ?? [], uniquingKeysWith: { a, _ in a }
            )
            let token = form["token"] ?? form["refresh_token"] ?? ""
            guard let (subject, family) = families.first(where: { $0.value.current == token || $0.value.retired.contains(token) }) else {
                return request.url.path == "/revoke" ? HTTPResponse(status: 200) : Self.error("invalid_grant")
            }
            if request.url.path == "/revoke" {
                families[subject]?.revoked = true
                return HTTPResponse(status: 200)
            }
            refreshes += 1
            guard !family.revoked, family.current == token else {
                // A retired token used again: the family is revoked (RFC 9700 §4.14.2).
                families[subject]?.revoked = true
                if family.current != token { families[subject]?.reuses += 1 }
                return Self.error("invalid_grant")
            }
            issued += 1
            let next = "rt-\(subject)-\(issued)"
            families[subject]?.retired.insert(token)
            families[subject]?.current = next
            let body = #"{"access_token":"at-\#(issued)","token_type":"Bearer","expires_in":3600,"refresh_token":"\#(next)"}"#
            return HTTPResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
        }

        static func error(_ code: String) -> HTTPResponse {
            HTTPResponse(status: 400, headers: ["Content-Type": "application/json"], body: Data(#"{"error":"\#(code)"}"#.utf8))
        }
    }

    /// The network between one launch and the provider, with the plan's faults.
    struct Network: HTTPTransport {
        let provider: Provider
        let plan: Plan

        func send(_ request: HTTPRequest) async throws -> HTTPResponse {
            switch try await plan.next("POST \(request.url.path)", request: true) {
            case nil: return await provider.handle(request)
            // (.kill never arrives here: the plan throws Killed for it.)
            case .fail?, .kill?: throw URLError(.notConnectedToInternet)
            case .killAfterProvider?:
                _ = await provider.handle(request)
                await plan.kill()
                throw Killed()
            case .lostAnswer?:
                _ = await provider.handle(request)
                throw URLError(.networkConnectionLost)
            case .gateway502?:
                _ = await provider.handle(request)
                return HTTPResponse(status: 502, headers: ["Content-Type": "text/html"], body: Data("<html>Bad Gateway</html>".utf8))
            case .unavailableJSON?:
                _ = await provider.handle(request)
                return HTTPResponse(
                    status: 503, headers: ["Content-Type": "application/json"], body: Data(#"{"error":"temporarily_unavailable"}"#.utf8))
            case .unreadable?:
                _ = await provider.handle(request)
                return HTTPResponse(status: 200, headers: ["Content-Type": "text/html"], body: Data("<html>maintenance</html>".utf8))
            case .refusedIDToken?:
                var answer = await provider.handle(request)
                guard answer.status == 200, var text = String(data: answer.body, encoding: .utf8) else { return answer }
                // An ID token the client must refuse: here one that is not a JWT at all.
                text = text.replacingOccurrences(of: #""token_type""#, with: #""id_token":"not.a-jwt","token_type""#)
                answer.body = Data(text.utf8)
                return answer
            }
        }
    }

    static var metadata: ProviderMetadata {
        ProviderMetadata(
            issuer: Provider.issuer, authorizationEndpoint: URL(string: "\(Provider.issuer)/authorize")!,
            tokenEndpoint: URL(string: "\(Provider.issuer)/token")!, jwksURI: URL(string: "\(Provider.issuer)/jwks")!,
            revocationEndpoint: URL(string: "\(Provider.issuer)/revoke")!)
    }

    /// An OIDC client of one launch.
    static func client(_ network: Network) -> OIDCClient {
        OIDCClient(
            configuration: ClientConfiguration(clientID: "app", redirectURI: URL(string: "com.example.app:/cb")!, scopes: ["openid"]),
            provider: .static(metadata), transport: network)
    }

    /// `subject`'s credential holding `refreshToken`, its access token expired.
    static func credential(_ subject: String, refreshToken: String) -> Credential {
        Credential(
            issuer: Provider.issuer, clientID: "app", accessToken: "at-0-\(subject)", tokenType: "Bearer", refreshToken: refreshToken,
            idToken: nil, idTokenClaims: IDTokenClaims(iss: Provider.issuer, sub: subject, aud: ["app"]), expiresAt: Date(timeIntervalSince1970: 0),
            scopes: ["openid"])
    }
}
