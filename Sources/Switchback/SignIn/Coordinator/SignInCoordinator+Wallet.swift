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
        case .verifyWithWallet(let request): return .presentation(try await verifyWithWallet(request))
        }
    }

    /// Verify with Wallet: the companion starts a request (its nonce and merchant), the system's sheet asks
    /// the user, and Wallet's encrypted answer goes to the companion, which decrypts and verifies it. The
    /// sheet is the app's own, so nothing is journaled: a termination meanwhile ends this sign-in.
    private func verifyWithWallet(_ request: IdentityDocumentRequest) async throws -> WalletPresentation {
        try request.validate()
        guard let companion = authorizer.companion else {
            throw SwitchbackError(
                .invalidConfiguration, "Wallet's answer is decrypted and verified by the companion; make the coordinator with one")
        }
        guard let identityDocuments else {
            throw SwitchbackError(.invalidConfiguration, "Verify with Wallet needs an IdentityDocumentProvider (PassKitIdentityDocuments on iOS)")
        }
        let binding = entropy.token(bytes: 32)
        let started = try await companion.startAppleIdentity(binding: binding)
        let encrypted = try await identityDocuments.requestDocument(request, merchantIdentifier: started.merchantIdentifier, nonce: started.nonce)
        try Task.checkCancellation()
        return try await companion.verifyAppleIdentity(requestID: started.requestID, binding: binding, encryptedData: encrypted)
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
