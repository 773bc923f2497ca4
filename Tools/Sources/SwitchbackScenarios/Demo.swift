public import ArgumentParser
import Foundation
@_spi(SwitchbackInternals) public import Switchback
import SwitchbackTesting

/// The demo's options, shared by `switchback demo` (the simulated device) and `switchback-webkit demo`
/// (the same scenarios on a real WebKit engine): which preset, user agent, return pattern and environment,
/// and what goes wrong on the way.
public struct DemoOptions: ParsableArguments, Sendable {
    public init() {}

    @Option(help: "The provider preset (\(Scenario.providers.joined(separator: ", "))).")
    public var provider = "uaepass"

    @Option(
        help:
            "The user agent (\(UserAgentStrategy.allCases.map(\.rawValue).joined(separator: ", "))); default: uaepass uses webview, others their preset's first."
    )
    public var strategy: String?

    @Option(
        help:
            "How the authenticator returns (\(ReturnPattern.allCases.map(\.rawValue).joined(separator: ", "))); default: the first the preset can use."
    )
    public var pattern: String?

    @Option(help: "production or staging (uaepass defaults to staging).")
    public var environment: String?

    @Option(name: .customLong("variant"), help: "An emulator profile variant, repeatable (see `switchback emulator --help`).")
    public var variants: [String] = []

    @Flag(help: "The system terminates the app while the user is in the authenticator; the sign-in continues after the relaunch.")
    public var killDuringHandoff = false

    @Flag(help: "The user declines in the authenticator.")
    public var decline = false

    @Flag(help: "The authenticator app is not installed.")
    public var noAuthenticator = false

    @Flag(
        help:
            "The authenticator app is on another phone: the user scans the page's QR code there (bankid-se, singpass, mitid) or picks the page's number in the request sent there (uaepass)."
    )
    public var otherPhone = false

    @Flag(help: "mitid only: the user signs in with a code display (user ID, its six-digit code, password) instead of the app.")
    public var codeDisplay = false

    @Flag(
        help:
            "mitid only: the broker answers the app's companion, which completes the sign-in and links back to the app (MitID's backend completion).")
    public var backendCompletion = false

    @Option(
        help:
            "generic only: after signing in, the app opens its web app signed in through the companion's session hand-off, in the system browser or a WebView of its own (\(HandOffDestination.allCases.map(\.rawValue).joined(separator: ", ")))."
    )
    public var handoff: String?

    @Flag(
        help:
            "After signing in, sign out through the same user agent: tokens revoked, the credential removed, the provider's end-session page shown and its return checked (none after an ephemeral sign-in)."
    )
    public var signOut = false

    @Option(help: "After signing in, this many API calls at once find the access token expired: one refresh, nobody signed out.")
    public var concurrentRefresh: Int?

    @Flag(help: "After signing in, the app is relaunched before the phone's first unlock: the Keychain is locked, which is not a sign-out.")
    public var lockedKeychain = false

    @Option(help: "wallet only: what the wallet does wrong (\(Scenario.walletFaults.joined(separator: ", "))); the companion must refuse it.")
    public var walletFault: String?

    @Option(help: "wallet only: the credential the companion asks for, sd-jwt (an SD-JWT VC PID) or mdoc (an ISO mdoc PID).")
    public var walletFormat: String?

    @Option(help: "wallet only: how the companion names itself to the wallet, x509_hash (the default) or x509_san_dns.")
    public var walletClientId: String?

    @Option(
        help:
            "wallet only: what the wallet holds, pid (a PID) or mdl (a mobile driving licence); the companion then asks for a PID or an mDL (credential_sets) and the wallet picks the one it holds."
    )
    public var walletHolds: String?

    @Flag(help: "Run every provider preset with its default user agent, one after the other.")
    public var all = false

    public func validate() throws {
        guard Scenario.providers.contains(provider) else {
            throw ValidationError("unknown provider \(provider); known: \(Scenario.providers.joined(separator: ", "))")
        }
        if let strategy, UserAgentStrategy(rawValue: strategy) == nil {
            throw ValidationError("unknown strategy \(strategy); known: \(UserAgentStrategy.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let pattern, ReturnPattern(rawValue: pattern) == nil {
            throw ValidationError("unknown pattern \(pattern); known: \(ReturnPattern.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let environment, !["production", "staging"].contains(environment) { throw ValidationError("--environment is production or staging") }
        if backendCompletion, all || provider != "mitid" { throw ValidationError("--backend-completion goes with --provider mitid") }
        if otherPhone, all || !Self.otherPhoneProviders.contains(provider) {
            throw ValidationError(
                "--other-phone goes with --provider \(Self.otherPhoneProviders.joined(separator: ", ")): their pages offer another phone")
        }
        if codeDisplay, all || provider != "mitid" { throw ValidationError("--code-display goes with --provider mitid") }
        if let walletFault {
            guard Scenario.walletFaults.contains(walletFault) else {
                throw ValidationError("unknown --wallet-fault \(walletFault); known: \(Scenario.walletFaults.joined(separator: ", "))")
            }
            if all || provider != Scenario.wallet { throw ValidationError("--wallet-fault goes with --provider wallet") }
        }
        if let walletFormat {
            guard Scenario.walletFormats.contains(walletFormat) else {
                throw ValidationError("unknown --wallet-format \(walletFormat); known: \(Scenario.walletFormats.joined(separator: ", "))")
            }
            if all || provider != Scenario.wallet { throw ValidationError("--wallet-format goes with --provider wallet") }
        }
        if let walletClientId {
            guard Scenario.walletClientIDs.contains(walletClientId) else {
                throw ValidationError("unknown --wallet-client-id \(walletClientId); known: \(Scenario.walletClientIDs.joined(separator: ", "))")
            }
            if all || provider != Scenario.wallet { throw ValidationError("--wallet-client-id goes with --provider wallet") }
        }
        if let walletHolds {
            guard Scenario.walletHoldings.contains(walletHolds) else {
                throw ValidationError("unknown --wallet-holds \(walletHolds); known: \(Scenario.walletHoldings.joined(separator: ", "))")
            }
            if all || provider != Scenario.wallet { throw ValidationError("--wallet-holds goes with --provider wallet") }
            if walletFormat != nil {
                throw ValidationError("--wallet-holds asks for a PID or an mDL, each in its own format: it does not go with --wallet-format")
            }
        }
        if provider == Scenario.wallet, !all, strategy != nil || pattern != nil || environment != nil || !variants.isEmpty {
            throw ValidationError(
                "--provider wallet has no user agent, return pattern, environment or emulator variant: the wallet app is opened directly")
        }
        if otherPhone, noAuthenticator { throw ValidationError("--other-phone already means the authenticator is not on this phone") }
        if let concurrentRefresh, !(1...1000).contains(concurrentRefresh) { throw ValidationError("--concurrent-refresh is 1 to 1000 callers") }
        if concurrentRefresh != nil, !all, let reason = Self.appCannotRefresh(provider) {
            throw ValidationError("--concurrent-refresh needs an app that refreshes its own tokens; \(reason)")
        }
        if signOut || concurrentRefresh != nil || lockedKeychain, !all, Self.companionHeld(provider, backendCompletion: backendCompletion) {
            throw ValidationError(
                "--sign-out, --concurrent-refresh and --locked-keychain need the app's own credential; \(provider)\(backendCompletion ? " with --backend-completion" : "") signs in through the companion"
            )
        }
        if let handoff {
            guard HandOffDestination(rawValue: handoff) != nil else {
                throw ValidationError("unknown --handoff \(handoff); known: \(HandOffDestination.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            if all || provider != "generic" { throw ValidationError("--handoff goes with --provider generic") }
        }
    }

    /// Whether the companion, not the app, holds the provider's tokens after this preset's sign-in.
    public static func companionHeld(_ provider: String, backendCompletion: Bool) -> Bool {
        provider == "singpass" || provider == Scenario.wallet || backendCompletion
    }

    /// A refusal in one line: its code, and the description the server gave, if one.
    static func reason(_ error: SwitchbackError) -> String {
        error.oauthError?.errorDescription.map { "\(error.code): \(Redaction.printable(String($0.prefix(120))))" } ?? "\(error.code)"
    }

    /// Why the app of `provider`'s scenario cannot refresh its own tokens, if it cannot: the provider issues
    /// no refresh tokens (its contract), or the token endpoint authenticates a confidential client whose
    /// secret only the companion holds.
    public static func appCannotRefresh(_ provider: String) -> String? {
        if let term = ProviderContract.of(provider)?.term(.refreshTokens), term.value == .flag(false) {
            return "the provider issues no refresh tokens (\(term.source))"
        }
        return switch provider {
        case "uaepass":
            "UAE Pass's token endpoint takes the client secret (HTTP Basic; docs.uaepass.ae, \"2. Obtaining the access token\"), which only the companion holds"
        case "bankid-no":
            "Norwegian BankID's client here is confidential (its secret is the companion's, which redeems the code and registers permissions)"
        default: nil
        }
    }

    /// The presets whose pages offer a phone other than the one signing in.
    public static let otherPhoneProviders = ["uaepass", "mitid", "bankid-se", "singpass"]

    /// The scenarios these options ask for: one, or with `--all` every preset with its default user agent.
    public func scenarios() -> [Scenario] {
        all ? Scenario.providers.map { scenario(provider: $0) } : [scenario(provider: provider)]
    }

    /// The scenario for `provider` with these options.
    public func scenario(provider: String, strategy chosen: UserAgentStrategy? = nil) -> Scenario {
        var strategy = chosen ?? self.strategy.flatMap(UserAgentStrategy.init(rawValue:))
        if strategy == nil, provider == "uaepass" { strategy = .webView }
        return Scenario(
            provider: provider, strategy: all && chosen == nil ? (provider == "uaepass" ? .webView : nil) : strategy,
            pattern: pattern.flatMap(ReturnPattern.init(rawValue:)),
            environment: environment.map(AuthenticatorRule.Environment.init), variants: variants, decision: decline ? .decline : .approve(),
            authenticatorInstalled: !noAuthenticator, killDuringHandOff: killDuringHandoff, backendCompletion: backendCompletion,
            otherPhone: otherPhone, codeDisplay: codeDisplay, handOff: handoff.flatMap(HandOffDestination.init(rawValue:)),
            signOut: signOut, concurrentRefresh: concurrentRefresh, lockedKeychain: lockedKeychain,
            walletFault: provider == Scenario.wallet ? walletFault : nil, walletFormat: provider == Scenario.wallet ? walletFormat : nil,
            walletClientID: provider == Scenario.wallet ? walletClientId : nil, walletHolds: provider == Scenario.wallet ? walletHolds : nil
        )
    }
}

/// Turns a scenario's transcript into the narration and the sequence diagram.
public enum Narration {
    public static func text(_ result: ScenarioResult) -> String {
        let scenario = result.scenario
        var lines = [
            scenario.provider == Scenario.wallet
                ? "== wallet (OpenID4VP, same device, \(scenario.walletHolds.map { "a PID or an mDL; the wallet holds \($0 == "mdl" ? "an mDL" : "a PID")" } ?? (scenario.walletFormat == "mdoc" ? "an ISO mdoc" : "an SD-JWT VC"))), the companion as verifier\(scenario.walletFault.map { ", fault: \($0)" } ?? "")\(scenario.killDuringHandOff ? ", app killed during the hand-off" : "") =="
                : "== \(scenario.provider) (\(scenario.environment)), \(result.strategy)\(scenario.killDuringHandOff ? ", app killed during the hand-off" : "")\(scenario.otherPhone ? ", authenticator on another phone" : "")\(scenario.codeDisplay ? ", code display" : "")\(scenario.handOff.map { ", then a session hand-off to the \($0 == .systemBrowser ? "system browser" : "app's WebView")" } ?? "") =="
        ]
        for (number, step) in result.transcript.enumerated() {
            lines.append(String(format: "%3d. ", number + 1) + "\(step.from.rawValue) → \(step.to.rawValue): \(step.text)")
        }
        switch result.outcome {
        case .success(.credential(let credential)):
            let identity = credential.identitySource == .userInfo ? " (identity from userinfo: the provider issues no ID token)" : ""
            lines.append(
                "Signed in: sub \(credential.subject ?? "?"), assurance \(credential.acr ?? "none reported")\(identity); token type \(credential.tokenType), access token \(Redaction.secret(credential.accessToken))."
            )
        case .success(.companion(let signIn)):
            let grant =
                signIn.session.map { "companion session \(Redaction.secret($0))" } ?? signIn.tokens.map {
                    "tokens from the companion, access token \(Redaction.secret($0.accessToken))"
                } ?? "nothing"
            lines.append("Signed in through the companion: sub \(signIn.subject), assurance \(signIn.acr ?? "none reported"); \(grant).")
        case .success(.presentation(let presentation)):
            // The claims the user disclosed; the credential's own (issuer, type, validity, holder key) are named once.
            let own: Set<String> = ["iss", "vct", "iat", "exp", "nbf", "cnf", "status", "vct#integrity"]
            let credentials = presentation.credentials.keys.sorted().map { id in
                let claims = presentation.claims(id) ?? [:]
                let disclosed = claims.keys.filter { !own.contains($0) }.sorted().map { "\($0) \(claims[$0].map { "\($0)" } ?? "")" }
                // An mdoc names no issuer URL: its document signer's chain to the IACA root is what was verified.
                return "\(id) \(claims["iss"].map { "from \($0)" } ?? "as an mdoc"): \(disclosed.joined(separator: ", "))"
            }
            lines.append("Signed in with the wallet: the companion verified \(credentials.joined(separator: "; ")); nothing else was disclosed.")
        case .failure(let error):
            lines.append("Sign-in failed: \(error)")
        }
        switch (result.handOff, scenario.handOff) {
        case (.success(let landing)?, let destination?):
            lines.append(
                "Handed off: the \(destination == .systemBrowser ? "system browser" : "app's WebView") shows \(Redaction.describe(landing.url)) signed in (\"\(landing.text.prefix(80))\")."
            )
        case (.failure(let error)?, _): lines.append("Hand-off failed: \(error)")
        default: break
        }
        for step in result.afterSignIn {
            switch step {
            case .success(let line): lines.append(line)
            case .failure(let error): lines.append("After sign-in, failed: \(error)")
            }
        }
        switch result.signOut {
        case .success(let signOut)?:
            var revoked =
                signOut.revoked.isEmpty
                ? "nothing revoked \(signOut.revokedThrough) (\(signOut.revocationError.map(DemoOptions.reason) ?? "?"))"
                : "revoked \(signOut.revoked.joined(separator: " and ")) \(signOut.revokedThrough)"
            if !signOut.revoked.isEmpty, let error = signOut.revocationError { revoked += ", then stopped (\(DemoOptions.reason(error)))" }
            let page: String
            switch signOut.userAgent {
            case .returned?: page = "the provider's end-session page came back with its state"
            case .returnedWithoutState?: page = "the provider's end-session page came back (without state: the provider takes none)"
            case .closed?: page = "the user closed the provider's end-session page"
            case nil: page = "no browser shown (the sign-in was ephemeral, or the provider has no end_session_endpoint)"
            }
            lines.append("Signed out: \(revoked); credential removed; \(page).")
        case .failure(let error)?: lines.append("Sign-out failed: \(error)")
        case nil: break
        }
        return lines.joined(separator: "\n")
    }

    public static func mermaid(_ result: ScenarioResult) -> String {
        var lines = ["sequenceDiagram"]
        let used = SimulatedDevice.Participant.allCases.filter { participant in
            result.transcript.contains { $0.from == participant || $0.to == participant }
        }
        for actor in used { lines.append("    participant \(actor.rawValue)") }
        for step in result.transcript {
            let text = step.text.replacingOccurrences(of: ";", with: ",").replacingOccurrences(of: "#", with: "").replacingOccurrences(
                of: "\"", with: "'")
            lines.append("    \(step.from.rawValue)->>\(step.to.rawValue): \(text)")
        }
        switch result.outcome {
        case .success: lines.append("    Note over App: signed in")
        case .failure(let error): lines.append("    Note over App: failed, \(error.code)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
