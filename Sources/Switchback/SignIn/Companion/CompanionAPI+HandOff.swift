// Session hand-off to a web app.

extension CompanionAPI {
    /// `POST /handoff`, sent with the app's access token in `Authorization`.
    public struct HandOffRequest: Codable, Sendable, Equatable {
        /// The web app to open, on the companion's allow-list.
        public var goto: String?

        public init(goto: String?) { self.goto = goto }
    }

    /// The answer to `POST /handoff` (201).
    public struct HandOffIssued: Codable, Sendable, Equatable {
        public var handoffotp: String
        public var expiresIn: Int
        /// The companion's own redeem URL for `goto`, when the request named one.
        public var redeemURL: String?

        public init(handoffotp: String, expiresIn: Int, redeemURL: String?) {
            self.handoffotp = handoffotp
            self.expiresIn = expiresIn
            self.redeemURL = redeemURL
        }

        enum CodingKeys: String, CodingKey {
            case handoffotp
            case expiresIn = "expires_in"
            case redeemURL = "redeem_url"
        }
    }
}
