import Foundation
import Logging

/// Wallet sign-ins (``SignInRoute/wallet(_:)``): the companion starts a presentation request, the app opens
/// the wallet (no user agent), and the wallet's return link brings the one-time `response_code` the
/// companion hands the verified claims over for.
extension SignInCoordinator {
    /// Signs the user in by the route they chose: a provider in a user agent, or a wallet the companion
    /// verifies. Either ends in one ``SignInResult``.
    public func signIn(_ route: SignInRoute) async throws -> SignInResult {
        switch route {
        case .provider(let request): return try await signIn(request)
        case .wallet(let request): return try await result(of: try await startWallet(request))
        }
    }

    private func startWallet(_ wallet: WalletRequest) async throws -> String {
        // The wallet's return link names no state: with two wallet sign-ins waiting, neither could claim it.
        for (flowID, entry) in entries {
            if case .companion(let started) = entry.authorization, started.route == .wallet {
                logger.info("a new wallet sign-in replaces the one waiting", metadata: ["flow": "\(flowID.prefix(6))"])
                await deliver(.cancel, to: flowID)
            }
        }
        guard let companion = authorizer.companion else {
            throw SwitchbackError(
                .invalidConfiguration,
                "a wallet's presentation is verified by the companion; make the coordinator with one (.companion or .app(_:redeemingCodesAt:))")
        }
        let authorization = try await companion.startPresentation(binding: entropy.token(bytes: 32), wallet: wallet.wallet, now: clock.now())
        var request = SignInRequest(
            provider: wallet.wallet.name, strategy: .systemBrowser, withoutReturn: wallet.withoutReturn, gracePeriod: wallet.gracePeriod,
            timeout: wallet.timeout)
        request.startsInApp = true
        if let universalLink = wallet.wallet.universalLink { request.appLinks = [wallet.wallet.scheme: universalLink] }
        return await begin(request, authorization: .companion(authorization), url: authorization.authorizationURL, returnURL: authorization.returnURL)
    }

    /// Redeems the wallet's return link in a task of the flow's. A code the companion does not know (or no
    /// code) is not the wallet's answer: anyone can open the app's link; the flow goes back to waiting for
    /// the genuine one, so a forged link cannot end the sign-in.
    func redeemWallet(_ flowID: String, _ callback: AuthorizationCallback, authorization: CompanionAuthorization) {
        let task = Task {
            do {
                let presentation = try await self.redeemPresentation(callback, authorization: authorization)
                await exchanged(flowID, result: .signedIn(.presentation(presentation)), error: nil)
            } catch let error as SwitchbackError where error.code == .authenticatorDidNotReturn || error.oauthError?.error == "invalid_grant" {
                logger.notice("a wallet return link the companion does not know; still waiting", metadata: ["flow": "\(flowID.prefix(6))"])
                await deliver(.returnUnknown, to: flowID)
            } catch let error as SwitchbackError {
                await exchanged(flowID, result: nil, error: error)
            } catch {
                await exchanged(flowID, result: nil, error: SwitchbackError(.transportFailed, "the redeem was interrupted", underlying: error))
            }
        }
        entries[flowID]?.tasks.append(task)
    }

    /// The wallet's return link: its `response_code`, redeemed with the request's binding.
    func redeemPresentation(_ callback: AuthorizationCallback, authorization: CompanionAuthorization) async throws -> WalletPresentation {
        guard let companion = authorizer.companion else { throw Self.notThisAuthorizers }
        guard case .redirect(let url) = callback, let code = WalletPresentation.responseCode(in: url) else {
            throw SwitchbackError(.authenticatorDidNotReturn, "the wallet's return link carries no response_code; start a new sign-in")
        }
        guard let binding = authorization.flowSecret else {
            throw SwitchbackError(.flowInterrupted, "this presentation was started without a binding and cannot be redeemed; start a new one")
        }
        return try await companion.redeemPresentation(responseCode: code, binding: binding)
    }
}
