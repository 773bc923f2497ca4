import Foundation

/// The last DPoP nonce each server gave this client (RFC 9449 §8.2 and §9: a server may send a fresh
/// `DPoP-Nonce` with any answer, and the client uses it in its next proof to that server). One per
/// origin: the authorization server and each resource server keep their own. Without it, a server that
/// requires nonces costs two round trips on every call.
final class DPoPNonces: Sendable {
    private let nonces = LockedValue<[String: String]>([:])
    /// Origins remembered at most; all are forgotten past it (a client talks to a few servers, and a
    /// forgotten nonce costs one round trip).
    private static let limit = 64

    /// The nonce to put in the first proof of a request to `url`, when its server gave one.
    func nonce(for url: URL) -> String? {
        guard let origin = Self.origin(of: url) else { return nil }
        return nonces.withLock { $0[origin] }
    }

    /// Remembers the nonce in `response` to a request to `url` that carried a proof, when it holds one.
    func remember(_ response: HTTPResponse, from url: URL) {
        guard let nonce = response.headers["dpop-nonce"], DPoPKey.isHeaderSafe(nonce), let origin = Self.origin(of: url) else { return }
        nonces.withLock { nonces in
            if nonces[origin] == nil, nonces.count >= Self.limit { nonces = [:] }
            nonces[origin] = nonce
        }
    }

    private static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        return "\(scheme)://\(host):\(url.port ?? (scheme == "https" ? 443 : 80))"
    }
}
