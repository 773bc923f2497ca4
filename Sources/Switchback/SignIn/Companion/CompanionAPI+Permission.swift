// Norwegian BankID's upfront permission.

extension CompanionAPI {
    /// `POST /permission`: an upfront permission to return to one app callback (Norwegian BankID), for the
    /// statement the app's backend registered.
    public struct PermissionRequest: Codable, Sendable, Equatable {
        public var appCallbackURI: String
        /// The one-time ID the companion gave the app's backend for the statement the user is to approve.
        public var statementID: String

        public init(appCallbackURI: String, statementID: String) {
            self.appCallbackURI = appCallbackURI
            self.statementID = statementID
        }

        enum CodingKeys: String, CodingKey {
            case appCallbackURI = "app_callback_uri"
            case statementID = "statement_id"
        }

        /// Only `app_callback_uri` and `statement_id`: the permission's type and statement are the backend's,
        /// and a body that names them is refused rather than half taken.
        public init(from decoder: any Decoder) throws {
            let names = try decoder.container(keyedBy: AnyKey.self).allKeys.map(\.stringValue)
            let known = [CodingKeys.appCallbackURI.rawValue, CodingKeys.statementID.rawValue]
            if let other = names.first(where: { !known.contains($0) }) {
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "\(other.prefix(40)) is not a field of this request"))
            }
            let c = try decoder.container(keyedBy: CodingKeys.self)
            appCallbackURI = try c.decode(String.self, forKey: .appCallbackURI)
            statementID = try c.decode(String.self, forKey: .statementID)
        }

        private struct AnyKey: CodingKey {
            let stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }

    /// The answer to `POST /permission` (201).
    public struct PermissionGranted: Codable, Sendable, Equatable {
        public var permissionToken: String
        /// The message BankID shows the user with the permission, for the app to show beside it.
        public var bindingMessage: String?

        public init(permissionToken: String, bindingMessage: String? = nil) {
            self.permissionToken = permissionToken
            self.bindingMessage = bindingMessage
        }

        enum CodingKeys: String, CodingKey {
            case permissionToken = "permission_token"
            case bindingMessage = "binding_message"
        }
    }
}
