import Foundation

// Identity wallets: OpenID4VP and Apple's Verify with Wallet.
extension CompanionAPI {
    /// `POST /wallet/start`: a presentation request bound to the app's secret.
    public struct WalletStart: Codable, Sendable, Equatable {
        public var binding: String

        public init(binding: String) { self.binding = binding }
    }

    /// `POST /wallet/start`'s answer: the link that opens the wallet.
    public struct WalletStarted: Codable, Sendable, Equatable {
        public var walletURL: String
        /// The app link the wallet opens with the `response_code` (the companion's `wallet.appLink`).
        public var returnURL: String?
        public var expiresIn: Int

        public init(walletURL: String, returnURL: String?, expiresIn: Int) {
            self.walletURL = walletURL
            self.returnURL = returnURL
            self.expiresIn = expiresIn
        }

        enum CodingKeys: String, CodingKey {
            case walletURL = "wallet_url"
            case returnURL = "return_url"
            case expiresIn = "expires_in"
        }
    }

    /// `POST /wallet/redeem`: the `response_code` the wallet returned with, and the secret the request started with.
    public struct WalletRedeem: Codable, Sendable, Equatable {
        public var responseCode: String
        public var binding: String

        public init(responseCode: String, binding: String) {
            self.responseCode = responseCode
            self.binding = binding
        }

        enum CodingKeys: String, CodingKey {
            case responseCode = "response_code"
            case binding
        }
    }

    /// `POST /wallet/redeem`'s answer: each credential's verified, disclosed claims by DCQL query `id`.
    public struct WalletPresented: Codable, Sendable, Equatable {
        public var credentials: [String: [[String: JSONValue]]]

        public init(credentials: [String: [[String: JSONValue]]]) { self.credentials = credentials }
    }

    /// `POST /wallet/apple/start`'s answer: what the app puts in its `PKIdentityRequest`, and the
    /// request's ID for the verify.
    public struct AppleIdentityStarted: Codable, Sendable, Equatable {
        public var requestID: String
        /// The request's nonce, base64url: 32 random bytes for `PKIdentityRequest.nonce`.
        public var nonce: String
        public var merchantIdentifier: String
        public var expiresIn: Int

        public init(requestID: String, nonce: String, merchantIdentifier: String, expiresIn: Int) {
            self.requestID = requestID
            self.nonce = nonce
            self.merchantIdentifier = merchantIdentifier
            self.expiresIn = expiresIn
        }

        enum CodingKeys: String, CodingKey {
            case requestID = "request_id"
            case nonce
            case merchantIdentifier = "merchant_identifier"
            case expiresIn = "expires_in"
        }
    }

    /// `POST /wallet/apple/verify`: Wallet's `encryptedData` (base64url) for a started request, with the
    /// secret it was started with.
    public struct AppleIdentityVerify: Codable, Sendable, Equatable {
        public var requestID: String
        public var binding: String
        public var encryptedData: String

        public init(requestID: String, binding: String, encryptedData: String) {
            self.requestID = requestID
            self.binding = binding
            self.encryptedData = encryptedData
        }

        enum CodingKeys: String, CodingKey {
            case requestID = "request_id"
            case binding
            case encryptedData = "encrypted_data"
        }
    }
}
