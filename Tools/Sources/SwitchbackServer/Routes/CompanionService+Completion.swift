import Crypto
import Foundation
import Hummingbird
import Logging
@_spi(SwitchbackInternals) import Switchback

/// Backend completion (MitID's alternative): the provider answers this server's https redirect URI;
/// the server finishes the sign-in, shows a page whose button opens the app's universal link, and tells
/// the app the result through a status request bound to the app's flow ID.
extension CompanionService {
    static let completionPath = CompanionAPI.Path.completion

    struct CompletionRecord: Codable {
        enum Status: String, Codable {
            case pending, completed, failed
        }

        let status: Status
        let outcome: SignInOutcome?
        let error: String?
        /// The App Attest key (base64url ID) the start was asserted by, whose assertion every status request needs.
        let attestedKey: String?
        /// The digest of the one-time value the final page's app link carries: a completed result is
        /// delivered only to a status request that presents it beside the flow ID.
        let returnDigest: String?

        init(
            status: Status, outcome: SignInOutcome? = nil, error: String? = nil, attestedKey: String?, returnDigest: String? = nil
        ) {
            self.status = status
            self.outcome = outcome
            self.error = error
            self.attestedKey = attestedKey
            self.returnDigest = returnDigest
        }
    }

    /// `POST /completion/start`: registers the app's flow ID (a secret of at least 128 bits that only the
    /// app knows) and starts the authorization. When the provider cannot be reached, the flow ID is released.
    func startCompletion(_ request: Request) async throws -> Response {
        guard let completion = configuration.completion else { throw CompanionError(.notConfigured, "backend completion is off") }
        let body = try await decode(CompanionAPI.CompletionStart.self, from: request)
        guard body.flowID.utf8.count >= 22, Secrets.isPlausible(body.flowID) else {
            throw CompanionError(.invalidRequest, "flow_id must be a random value of at least 128 bits (22+ characters)")
        }
        let digest = Secrets.digest(body.flowID)
        let key = store.sealingKey(for: body.flowID, kind: .completion).encoded
        let expiresAt = clock.now().addingTimeInterval(Self.authorizationLifetime)
        let options = try options(
            responseMode: body.responseMode, acrValues: body.acrValues, loginHint: body.loginHint, uiLocales: body.uiLocales,
            parameters: body.parameters)
        try await insertNew(
            .completion, secret: body.flowID, CompletionRecord(status: .pending, attestedKey: Self.assertingKey), expiresAt: expiresAt,
            taken: CompanionError(.invalidRequest, "this flow_id is already in use"))
        let session: AuthorizationSession
        do {
            session = try await startAuthorization(
                redirectURI: url(Self.completionPath), purpose: .completion(flowDigest: digest, resultKey: key, attestedKey: Self.assertingKey),
                options: options)
        } catch {
            _ = try? await store.take(.completion, digest: digest, now: clock.now())
            throw error
        }
        return Replies.json(
            CompanionAPI.AuthorizationStarted(
                authorizationURL: session.authorizationURL.absoluteString, returnURL: completion.appLink, expiresIn: Int(Self.authorizationLifetime)))
    }

    /// `GET /complete?…` (query answer) and `POST /complete` (form_post answer). The final page's button opens
    /// the app link with a one-time `result` value; whoever started the flow needs it to collect a session,
    /// so a flow started by someone else and completed in this browser yields nothing to its starter.
    func completionCallback(_ request: Request) async throws -> Response {
        guard let completion = configuration.completion else { throw CompanionError(.notConfigured, "backend completion is off") }
        let callback: AuthorizationCallback
        let state: String?
        if request.method == .post {
            let form = try await self.form(from: request)
            callback = .formPost(url(Self.completionPath), body: form.raw)
            state = form.fields["state"]
        } else {
            guard let url = url(Self.completionPath, query: request.uri.query) else {
                throw CompanionError(.invalidRequest, "the answer's query is malformed")
            }
            callback = .redirect(url)
            state = Self.parameters(of: url)["state"]
        }
        let pending = try await takeAuthorization(state: state, for: .completion)
        guard case .completion(let flowDigest, let resultKey, let attestedKey) = pending.purpose, let key = RecordKey(encoded: resultKey) else {
            throw CompanionError(.invalidState, "this state belongs to another route")
        }
        let returnValue = Base64URL.encode(entropy.randomBytes(count: 32))
        let record: CompletionRecord
        do {
            let outcome = try await complete(callback, pending: pending)
            record = CompletionRecord(
                status: .completed, outcome: completion.returns == .tokens ? outcome : outcome.withoutTokens(), attestedKey: attestedKey,
                returnDigest: Secrets.digest(returnValue)
            )
        } catch let error as CompanionError {
            record = CompletionRecord(
                status: .failed, error: error.code == .signInFailed ? "access_denied" : "server_error", attestedKey: attestedKey)
        }
        // Replace the pending marker in one step; if the app already gave up (the marker expired), the result is not kept.
        let now = clock.now()
        if try await store.replace(
            .completion, digest: flowDigest, sealedWith: key, record, expiresAt: now.addingTimeInterval(Self.authorizationLifetime), now: now)
        {
            await waiters.signal(flowDigest)
            do {
                try await store.announce(.completion, digest: flowDigest)
            } catch {
                logger.notice("the completion could not be announced to other instances; their waiters see it at their next read")
            }
        }
        let link = Self.appending(completion.appLink, name: "result", value: record.status == .completed ? returnValue : nil)
        let button = "<p><a id=\"return\" href=\"\(Replies.escape(link))\">Return to the app</a></p>"
        return record.status == .completed
            ? Replies.page(status: .ok, title: "You are signed in", message: "Tap the button to return to the app.", extra: button)
            : Replies.page(status: .ok, title: "Sign-in did not complete", message: "Return to the app to try again.", extra: button)
    }

    /// `link` with `name=value` added to its query (unchanged when `value` is nil).
    static func appending(_ link: String, name: String, value: String?) -> String {
        guard let value else { return link }
        return link + (link.contains("?") ? "&" : "?") + name + "=" + FormEncoding.escape(value)
    }

    /// `POST /completion/status`: waits up to `wait` seconds (capped by configuration) for the flow to
    /// finish; one waiter per flow. Failed: answered once, then forgotten. Completed: answered once to a
    /// request that presents the app link's `result` value (else `awaiting_return`, 202). Still pending:
    /// 202. Unknown: 404. A waiter wakes on the store's notification, not by polling.
    func completionStatus(_ request: Request) async throws -> Response {
        guard let completion = configuration.completion else { throw CompanionError(.notConfigured, "backend completion is off") }
        let body = try await decode(CompanionAPI.CompletionStatus.self, from: request)
        guard Secrets.isPlausible(body.flowID) else { throw CompanionError(.invalidRequest, "flow_id is malformed") }
        if let result = body.result, !Secrets.isIssued(result) { throw CompanionError(.invalidRequest, "result is malformed") }
        let digest = Secrets.digest(body.flowID)
        let wait = min(max(body.wait ?? completion.maximumWait, 0), completion.maximumWait)
        guard let record = try await currentCompletion(body.flowID) else {
            return CompanionError(.invalidGrant, "no sign-in is waiting under this flow_id").json.withStatus(404)
        }
        try requireAssertion(by: record.attestedKey)
        var current = record
        if current.status == .pending, wait > 0 {
            guard let ticket = await waiters.enter(digest) else {
                throw CompanionError(.rateLimited, "the server is waiting for too many sign-ins; ask again shortly").retry(after: 2)
            }
            let deadline = ContinuousClock.now + .milliseconds(Int(wait * 1000))
            do {
                while current.status == .pending, ContinuousClock.now < deadline, await waiters.isCurrent(digest, ticket) {
                    await waiters.wait(digest, ticket, until: deadline, recheck: completion.storeRecheck.map { .milliseconds(Int($0 * 1000)) })
                    guard let fresh = try await currentCompletion(body.flowID) else {
                        await waiters.leave(digest, ticket)
                        return CompanionError(.invalidGrant, "no sign-in is waiting under this flow_id").json.withStatus(404)
                    }
                    current = fresh
                }
            } catch {
                await waiters.leave(digest, ticket)
                throw error
            }
            await waiters.leave(digest, ticket)
        }
        switch current.status {
        case .pending:
            return Replies.json(CompanionAPI.SignInAnswer(status: .pending), status: .accepted)
        case .failed:
            guard try await store.take(.completion, digest: digest, now: clock.now()) != nil else {
                return CompanionError(.invalidGrant, "this result was already collected").json.withStatus(404)
            }
            var failed = CompanionAPI.SignInAnswer(status: .failed)
            failed.error = current.error ?? "server_error"
            return Replies.json(failed)
        case .completed:
            guard let result = body.result else { return Replies.json(CompanionAPI.SignInAnswer(status: .awaitingReturn), status: .accepted) }
            guard let expected = current.returnDigest, ConstantTime.equals(Secrets.digest(result), expected) else {
                logger.warning("completion status presented with a result value of another flow")
                throw CompanionError(.invalidGrant, "this result value belongs to another sign-in")
            }
            guard try await store.take(.completion, digest: digest, now: clock.now()) != nil, let outcome = current.outcome else {
                return CompanionError(.invalidGrant, "this result was already collected").json.withStatus(404)
            }
            var reply = try await deliver(outcome, as: completion.returns)
            reply.status = .completed
            return Replies.json(reply)
        }
    }

    /// The completion record of `flowID`, opened with the record key it names (one rotated in since the
    /// start still opens it).
    private func currentCompletion(_ flowID: String) async throws -> CompletionRecord? {
        try await store.lookUp(.completion, secret: flowID, as: CompletionRecord.self, now: clock.now())
    }
}

extension Response {
    fileprivate func withStatus(_ code: Int) -> Response {
        var response = self
        response.status = .init(code: code)
        return response
    }
}
