import Foundation

/// Sign-ins the backend companion runs (``CompanionRoute``): starting them at the companion, and for
/// backend completion, collecting the companion's answer.
extension SignInCoordinator {
    /// Has the companion prepare an authorization on `route` and starts its flow: the companion prepares it,
    /// the app shows it and relays what comes back, and the companion redeems the code. The request's acr
    /// values, login hint, page languages and extra parameters are forwarded; everything else is the
    /// companion's configuration.
    func startAtCompanion(_ request: SignInRequest, companion: CompanionClient, route: CompanionRoute) async throws -> String {
        if request.options.responseType != .code {
            throw SwitchbackError(.strategyNotSupported, "the companion's exchange and completion redeem authorization codes only")
        }
        let authorization: CompanionAuthorization
        switch route {
        case .exchange(let redirectURI):
            if request.options.responseMode == .formPost || request.options.responseMode == .fragment {
                // The app relays what reaches its redirect URI as a URL: a form post never reaches it.
                throw SwitchbackError(
                    .strategyNotSupported, "the companion's exchange takes query responses; a form_post provider needs the completion route")
            }
            try Self.requireCallback(for: redirectURI, strategy: request.strategy)
            try Self.requireResponsePage(request, redirectURI: redirectURI)
            authorization = try await companion.startExchange(
                redirectURI: redirectURI, binding: entropy.token(bytes: 32), options: request.options, now: clock.now())
        case .completion:
            authorization = try await companion.startCompletion(flowSecret: entropy.token(bytes: 32), options: request.options, now: clock.now())
            try Self.requireCallback(for: authorization.returnURL, strategy: request.strategy)
        // The companion's final page is the page a plain redirect needs; the app's link only wakes it.
        }
        return await begin(
            request, authorization: .companion(authorization), url: authorization.authorizationURL, returnURL: authorization.returnURL)
    }

    /// For a backend completion, asks the companion from the start how the sign-in stands, so that a refusal
    /// at the provider ends it even when the user never comes back. A success is handed over only for the
    /// one-time value the companion's return link carries (the flow ID alone is not enough: someone else's
    /// browser may have finished a flow this app did not start), so the asking stops once the provider answered.
    func startCollecting(_ flowID: String) {
        guard let entry = entries[flowID], case .companion(let authorization) = entry.authorization, authorization.route == .completion,
            let secret = authorization.flowSecret, case .companion(let companion, .completion) = authorizer.kind
        else { return }
        let clock = clock
        let task = Task {
            var failures = 0
            while !Task.isCancelled {
                do {
                    switch try await companion.completionProgress(flowSecret: secret, result: nil, wait: Self.statusWait) {
                    case .running: failures = 0
                    case .awaitingReturn: return
                    case .finished(let signIn):
                        await self.collected(flowID, .success(signIn))
                        return
                    }
                } catch let error as SwitchbackError where error.code == .transportFailed || error.httpStatus == 429 {
                    // The app is in the background or offline, or the companion is busy: ask again, less and less often.
                    failures += 1
                    guard (try? await clock.sleep(for: min(pow(2, Double(failures)), 30))) != nil else { return }
                } catch let error as SwitchbackError {
                    await self.collected(flowID, .failure(error))
                    return
                } catch {
                    return
                }
            }
        }
        entries[flowID]?.tasks.append(task)
    }

    /// How long each status request waits at the companion (which may cap it lower).
    static let statusWait: TimeInterval = 25

    /// The companion's answer for a backend completion: it ends the exchange when the return link already
    /// arrived, or it ends the browser part as the return link would.
    func collected(_ flowID: String, _ completion: Result<CompanionSignIn, SwitchbackError>) async {
        guard let entry = entries[flowID] else { return }
        entries[flowID]?.completion = completion
        if entry.flow.state == .exchanging {
            switch completion {
            case .success(let signIn): await exchanged(flowID, result: .signedIn(.companion(signIn)), error: nil)
            case .failure(let error): await exchanged(flowID, result: nil, error: error)
            }
        } else {
            await deliver(.callback(.redirect(entry.flow.plan.redirectURI)), to: flowID)
        }
    }
}
