import Foundation
import Hummingbird
import Logging
import Switchback

/// Backend completion (MitID's alternative): the provider answers this server's https redirect URI;
/// the server finishes the sign-in, shows a page whose button opens the app's universal link, and tells
/// the app the result through a status request bound to the app's flow ID.
@available(macOS 14, iOS 17, *)
extension CompanionService {
    static let completionPath = "/complete"

    struct CompletionStart: Decodable {
        let flow_id: String
        let response_mode: ResponseMode?
        let acr_values: [String]?
        let login_hint: String?
        let parameters: [String: String]?
    }

    struct CompletionRecord: Codable {
        enum Status: String, Codable {
            case pending, completed, failed
        }

        let status: Status
        let outcome: SignInOutcome?
        let error: String?
    }

    /// `POST /completion/start`: registers the app's flow ID (a secret of at least 128 bits that only the
    /// app knows) and starts the authorization.
    func startCompletion(_ request: Request) async throws -> Response {
        guard let completion = configuration.completion else { throw CompanionError(.notConfigured, "backend completion is off") }
        let body = try await decode(CompletionStart.self, from: request)
        guard body.flow_id.utf8.count >= 22, Secrets.isPlausible(body.flow_id) else {
            throw CompanionError(.invalidRequest, "flow_id must be a random value of at least 128 bits (22+ characters)")
        }
        let digest = Secrets.digest(body.flow_id)
        let expiresAt = clock.now().addingTimeInterval(Self.authorizationLifetime)
        do {
            try await store.insert(.completion, digest: digest, value: try Secrets.encoder.encode(CompletionRecord(status: .pending, outcome: nil, error: nil)), expiresAt: expiresAt)
        } catch {
            throw CompanionError(.invalidRequest, "this flow_id is already in use")
        }
        let session = try await startAuthorization(
            redirectURI: url(Self.completionPath), purpose: .completion(flowDigest: digest),
            options: try options(responseMode: body.response_mode, acrValues: body.acr_values, loginHint: body.login_hint, parameters: body.parameters)
        )
        return Replies.json([
            "authorization_url": session.authorizationURL.absoluteString, "return_url": completion.appLink, "expires_in": Int(Self.authorizationLifetime),
        ])
    }

    /// `GET /complete?…` (query answer) and `POST /complete` (form_post answer).
    func completionCallback(_ request: Request) async throws -> Response {
        guard let completion = configuration.completion else { throw CompanionError(.notConfigured, "backend completion is off") }
        let callback: AuthorizationCallback
        let state: String?
        if request.method == .post {
            let form = try await self.form(from: request)
            callback = .formPost(url(Self.completionPath), body: form.raw)
            state = form.fields["state"]
        } else {
            var components = URLComponents(url: url(Self.completionPath), resolvingAgainstBaseURL: false)!
            components.percentEncodedQuery = request.uri.query
            guard let url = components.url else { throw CompanionError(.invalidRequest, "the answer's query is malformed") }
            callback = .redirect(url)
            state = Self.parameters(of: url)["state"]
        }
        let pending = try await takeAuthorization(state: state)
        guard case .completion(let flowDigest) = pending.purpose else { throw CompanionError(.invalidState, "this state belongs to another route") }
        let record: CompletionRecord
        do {
            let outcome = try await complete(callback, pending: pending)
            record = CompletionRecord(status: .completed, outcome: completion.returns == .tokens ? outcome : outcome.withoutTokens(), error: nil)
        } catch let error as CompanionError {
            record = CompletionRecord(status: .failed, outcome: nil, error: error.code == .signInFailed ? "access_denied" : "server_error")
        }
        // Replace the pending marker; if the app already gave up (the marker expired), the result is not kept.
        let now = clock.now()
        if try await store.take(.completion, digest: flowDigest, now: now) != nil {
            try await store.insert(.completion, digest: flowDigest, value: try Secrets.encoder.encode(record), expiresAt: now.addingTimeInterval(Self.authorizationLifetime))
        }
        let link = "<p><a id=\"return\" href=\"\(Replies.escape(completion.appLink))\">Return to the app</a></p>"
        return record.status == .completed
            ? Replies.page(status: .ok, title: "You are signed in", message: "Tap the button to return to the app.", extra: link)
            : Replies.page(status: .ok, title: "Sign-in did not complete", message: "Return to the app to try again.", extra: link)
    }

    struct CompletionStatus: Decodable {
        let flow_id: String
        let wait: Double?
    }

    /// `POST /completion/status`: waits up to `wait` seconds (capped by configuration) for the flow to
    /// finish. Completed or failed: answered once, then forgotten. Still pending: 202. Unknown: 404.
    func completionStatus(_ request: Request) async throws -> Response {
        guard let completion = configuration.completion else { throw CompanionError(.notConfigured, "backend completion is off") }
        let body = try await decode(CompletionStatus.self, from: request)
        guard Secrets.isPlausible(body.flow_id) else { throw CompanionError(.invalidRequest, "flow_id is malformed") }
        let digest = Secrets.digest(body.flow_id)
        let wait = min(max(body.wait ?? completion.maximumWait, 0), completion.maximumWait)
        let deadline = ContinuousClock.now + .milliseconds(Int(wait * 1000))
        while true {
            guard let data = try await store.read(.completion, digest: digest, now: clock.now()) else {
                return CompanionError(.invalidGrant, "no sign-in is waiting under this flow_id").json.withStatus(404)
            }
            let record = try Secrets.decode(CompletionRecord.self, from: data)
            if record.status != .pending {
                guard try await store.take(.completion, digest: digest, now: clock.now()) != nil else {
                    return CompanionError(.invalidGrant, "this result was already collected").json.withStatus(404)
                }
                if record.status == .failed || record.outcome == nil {
                    return Replies.json(["status": "failed", "error": record.error ?? "server_error"])
                }
                var reply = try await deliver(record.outcome!, as: completion.returns)
                reply["status"] = "completed"
                return Replies.json(reply)
            }
            guard ContinuousClock.now < deadline else { return Replies.json(["status": "pending"], status: .accepted) }
            try await Task.sleep(for: .milliseconds(100))
        }
    }
}

extension Response {
    fileprivate func withStatus(_ code: Int) -> Response {
        var response = self
        response.status = .init(code: code)
        return response
    }
}
