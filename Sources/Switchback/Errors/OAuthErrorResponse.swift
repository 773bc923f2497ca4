import Foundation

/// An OAuth 2.0 error response (RFC 6749 §4.1.2.1 and §5.2), as sent by the provider.
public struct OAuthErrorResponse: Sendable, Equatable, Codable, CustomStringConvertible {
    /// The `error` code, for example `access_denied` or `invalid_grant`.
    public let error: String
    /// The optional human-readable `error_description`.
    public let errorDescription: String?
    /// The optional `error_uri`.
    public let errorURI: String?

    /// Creates an error response.
    public init(error: String, errorDescription: String? = nil, errorURI: String? = nil) {
        self.error = error
        self.errorDescription = errorDescription
        self.errorURI = errorURI
    }

    enum CodingKeys: String, CodingKey {
        case error
        case errorDescription = "error_description"
        case errorURI = "error_uri"
    }

    /// The error with its description cut to a safe length and stripped of control characters.
    public var description: String {
        guard let errorDescription else { return Self.sanitised(error) }
        return "\(Self.sanitised(error)): \(Self.sanitised(errorDescription))"
    }

    private static func sanitised(_ text: String) -> String {
        String(Redaction.printable(text).unicodeScalars.prefix(200))
    }
}

extension OAuthErrorResponse {
    /// `raw` when it reads as an error code (`a`–`z` and `_`, 1 to 40 characters, as every registered OAuth
    /// code does), else nil: what a log line or another party's page may show of an error another server
    /// chose, so that it cannot carry text of its choosing there.
    static func plainCode(_ raw: String) -> String? {
        (1...40).contains(raw.utf8.count) && raw.utf8.allSatisfy { (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || $0 == UInt8(ascii: "_") }
            ? raw : nil
    }
}
