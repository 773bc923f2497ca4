import Foundation
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackServer
import SwitchbackTesting
import Logging
import Crypto
import SwitchbackVerification

/// The wallet scenario (`switchback demo --provider wallet`): an emulated PID issuer, a wallet app holding
/// its credential on the simulated device, and the companion as the OpenID4VP verifier. The app starts a
/// presentation at the companion, opens the wallet, and redeems the `response_code` the wallet's return link
/// brings; the companion verifies everything before that (issuer chain, disclosures, key binding to the
/// request, the query).
enum WalletScenario {
    /// What the companion asks for, and where the wallet sends the user back.
    static let query = DCQLQuery(credentials: [
        .init(id: "pid", vctValues: [EmulatedWallet.pidType], claims: [[.string("given_name")], [.string("family_name")], [.string("birthdate")]])
    ])
    /// The same ask of the PID as an ISO mdoc (OpenID4VP 1.0 §B.2), for `--wallet-format mdoc`.
    static let mdocQuery = DCQLQuery(credentials: [
        .init(
            id: "pid", doctype: EmulatedWallet.pidDocType,
            claims: ["given_name", "family_name", "birth_date"].map { (namespace: EmulatedWallet.pidDocType, element: $0) })
    ])
    /// A PID (SD-JWT VC) or a mobile driving licence (mdoc), whichever the wallet holds (OpenID4VP 1.0 §6.2),
    /// for `--wallet-holds`.
    static let setsQuery = DCQLQuery(
        credentials: [
            query.credentials[0],
            .init(
                id: "mdl", doctype: EmulatedWallet.mdlDocType,
                claims: ["given_name", "family_name", "birth_date"].map { (namespace: EmulatedWallet.mdlNameSpace, element: $0) }),
        ],
        credentialSets: [.init(options: [["pid"], ["mdl"]])])
    static let appLink = "https://\(ScenarioRunner.appDomain)/wallet-return"
    static let walletScheme = "openid4vp"

    static func run(_ scenario: Scenario, logger: Logger, during: (@Sendable (ScenarioRunner.Rig) async throws -> Void)?) async throws
        -> ScenarioResult
    {
        let issuer = try EmulatedIssuer()
        let verifier = try EmulatedAuthority(name: "Example Verifier", dnsName: "api.example.com")
        let wallet = try EmulatedWallet(issuer: issuer, holds: [scenario.walletHolds.flatMap(EmulatedWallet.Holding.init(rawValue:)) ?? .pid])
        let folder = try KeyFolder(prefix: "switchback-wallet")
        defer { folder.remove() }
        let write = folder.write
        var configuration = ServerConfiguration(
            port: 0, associations: [AppAssociation(appIDs: [ScenarioRunner.appID], paths: ["/wallet-return*"])])
        configuration.publicURL = Setup.companionURL
        configuration.wallet = .init(
            signingKeyFile: try write("verifier-key.pem", verifier.key.pemRepresentation),
            certificateChainFile: try write("verifier-chain.pem", try verifier.leafPEM),
            issuerTrustAnchorsFile: try write("issuer-roots.pem", issuer.authority.rootPEM),
            mdocTrustAnchorsFile: try write("iaca-roots.pem", issuer.authority.rootPEM),
            query: scenario.walletHolds != nil ? setsQuery : scenario.walletFormat == "mdoc" ? mdocQuery : query,
            appLink: appLink, scheme: walletScheme, clientIdentifierPrefix: scenario.walletClientID ?? "x509_hash")
        // The issuer's status list lives on its https host, which exists only in the emulated ecosystem.
        let companion = try await Companion.start(
            configuration, transport: StatusListHosting(issuer, revoked: [EmulatedWallet.revokedIndex], next: URLSessionTransport()),
            logger: ScenarioRunner.quiet)
        do {
            let result = try await run(scenario, wallet: wallet, companion: companion, logger: logger, during: during)
            await companion.stop()
            return result
        } catch {
            await companion.stop()
            throw error
        }
    }

    private static func run(
        _ scenario: Scenario, wallet: EmulatedWallet, companion: Companion, logger: Logger,
        during: (@Sendable (ScenarioRunner.Rig) async throws -> Void)?
    ) async throws -> ScenarioResult {
        let loopback = URL(string: "http://127.0.0.1:\(companion.port)")!
        let device = SimulatedDevice(hosts: [ScenarioRunner.appDomain: loopback, "api.example.com": loopback])
        if scenario.authenticatorInstalled {
            let decision: EmulatedWallet.Decision
            switch scenario.decision {
            case .approve: decision = .share
            case .decline, .fail: decision = .decline
            case .ignore: decision = .ignore
            }
            let forged = URL(string: appLink + "#response_code=forged-by-another-app")!
            var before: (@Sendable () async -> Bool)?
            if scenario.forgedReturn { before = { await device.openFromAnotherApp(forged) } }
            await device.installApp(
                scheme: walletScheme, name: "the wallet app",
                app: WalletApp(
                    wallet: wallet, decision: decision, fault: scenario.walletFault.flatMap(EmulatedWallet.Fault.init(rawValue:)),
                    before: before))
        }
        await device.setKillAppOnHandOff(scenario.killDuringHandOff)
        let app = await device.install(
            SimulatedApp(appID: ScenarioRunner.appID, schemes: ["com.example.app"], associatedDomains: [ScenarioRunner.appDomain]) { context in
                SignInCoordinator(
                    .wallets(verifiedBy: CompanionClient(companion.baseURL, transport: device.network, logger: logger)), host: context.host,
                    opener: context.opener, journal: context.journal, clock: context.clock, logger: logger)
            })
        let coordinator = app.coordinator
        let first = FirstLaunch()
        let request = WalletPreset.openID4VP.request()
        await device.narrate(.user, .app, "chooses \"\(SignInRoute.wallet(request).name)\" to sign in")
        Task {
            do {
                await first.finish(.success(try await coordinator.signIn(.wallet(request))))
            } catch {
                await first.finish(.failure(error))
            }
        }
        let hook = Task { try await during?(ScenarioRunner.Rig(device: device, app: app)) }
        let outcome: Result<SignInResult, SwitchbackError>
        do {
            outcome = .success(try await ScenarioRunner.finish(first, device: device, firstApp: app))
        } catch let error as SwitchbackError {
            outcome = .failure(error)
        }
        try await hook.value
        let transcript = await device.transcript
        await device.shutDown()
        return ScenarioResult(scenario: scenario, strategy: .systemBrowser, outcome: outcome, transcript: transcript)
    }
}

/// The emulated wallet as an app on the device.
private struct WalletApp: LinkAnsweringApp {
    let wallet: EmulatedWallet
    let decision: EmulatedWallet.Decision
    let fault: EmulatedWallet.Fault?
    /// Runs before the wallet answers (while it is in front).
    let before: (@Sendable () async -> Bool)?

    func answer(_ link: URL, network: any HTTPTransport) async -> LinkAnswer {
        _ = await before?()
        let answer = await wallet.answer(link, decision: decision, fault: fault, transport: network)
        return LinkAnswer(steps: answer.steps, next: answer.next)
    }
}
