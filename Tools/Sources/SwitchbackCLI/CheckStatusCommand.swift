import ArgumentParser
import Foundation
@_spi(SwitchbackInternals) import Switchback
import SwitchbackServer
import SwitchbackVerification

/// `switchback check-status`: reads a credential's entry in a status list or identifier list kept in a file,
/// with exactly the companion's rules (`StatusListChecker`, the companion's trust in certificates), so that
/// lists made by other libraries can be checked without serving them over https.
struct CheckStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-status",
        abstract: "Read a credential's status in a Token Status List or an mdoc identifier list file, with the companion's rules.",
        discussion: """
            The list in --list is read as if fetched from --uri (its sub must be that URI). For an SD-JWT VC \
            (--issuer), the list must be signed by the issuer's certificate (naming its host) or by a Status \
            Issuer whose certificate the credential's CA issued (--credential-chain, the credential's x5c as \
            PEM, leaf first), under --trust-anchors. For an mdoc (--mdoc), it must be signed under one of the \
            IACA roots in --trust-anchors, or under the certificate the MSO's status names (--trust-point). \
            Prints VALID, INVALID, SUSPENDED or the status value: exit 0 when VALID, 1 when not, 2 when the \
            status cannot be confirmed (the reason on standard error).
            """
    )

    @Option(help: "The trust anchors (PEM): the issuers' roots, or with --mdoc the IACA root that issued the mdoc.")
    var trustAnchors: String

    @Option(help: "The list: a Status List Token (JWT or CWT) or an Identifier List Token (CWT).")
    var list: String

    @Option(help: "The URI the credential names for its list.")
    var uri: String

    @Option(help: "The credential's index in a Token Status List.")
    var index: Int?

    @Option(help: "With --mdoc: the credential's identifier in an identifier list, in hexadecimal.")
    var id: String?

    @Option(help: "An SD-JWT VC's issuer (iss).")
    var issuer: String?

    @Option(help: "An SD-JWT VC's own certificate chain (x5c, PEM, leaf first), for a list a Status Issuer signed.")
    var credentialChain: String?

    @Flag(help: "The credential is an mdoc (ISO/IEC 18013-5 second edition).")
    var mdoc = false

    @Option(help: "With --mdoc: the certificate (PEM) the MSO's status names for the list's signer.")
    var trustPoint: String?

    @Option(help: "Check as if the time were this Unix timestamp.")
    var now: Int?

    func validate() throws {
        guard (index == nil) != (id == nil) else { throw ValidationError("pass --index or --id") }
        guard id == nil || mdoc else { throw ValidationError("--id is an mdoc's identifier: it goes with --mdoc") }
        guard mdoc != (issuer != nil) else { throw ValidationError("pass --issuer for an SD-JWT VC, or --mdoc") }
        guard credentialChain == nil || !mdoc else { throw ValidationError("--credential-chain is an SD-JWT VC's") }
        guard trustPoint == nil || mdoc else { throw ValidationError("--trust-point goes with --mdoc") }
        if let id { guard Self.bytes(hex: id) != nil else { throw ValidationError("--id must be hexadecimal") } }
    }

    func run() async throws {
        let clock: any WallClock = now.map { FixedClock(date: Date(timeIntervalSince1970: TimeInterval($0))) } ?? SystemClock()
        let read = { (path: String) throws -> String in try String(contentsOfFile: path, encoding: .utf8) }
        let entry: StatusReference.Entry = if let index { .index(index) } else { .identifier(Self.bytes(hex: id ?? "") ?? Data()) }
        let status: UInt8
        do {
            let body = try Data(contentsOf: URL(fileURLWithPath: list))
            let anchors = try read(trustAnchors)
            let keys = try X509IssuerKeys(anchorsPEM: anchors, clock: clock)
            let checker: StatusListChecker
            var reference: StatusReference
            if mdoc {
                // The companion holds the list to the IACA that issued the mdoc: here, the one root given.
                guard try trustPoint != nil || X509IssuerKeys.certificates(pem: anchors).count == 1 else {
                    throw SwitchbackError(.invalidConfiguration, "with --mdoc, --trust-anchors is the IACA that issued the mdoc: one certificate")
                }
                let signers = try X509DocumentSigners(anchorsPEM: anchors, clock: clock)
                let transport = FileList(uri: uri, body: body, contentType: Self.contentType(of: body, identifiers: id != nil))
                checker = StatusListChecker(transport: transport, issuers: signers, cwtSigners: signers, clock: clock)
                reference = StatusReference(uri: uri, entry: entry, issuer: nil, authorities: keys.anchorAuthorities)
                reference.trustPoint = try trustPoint.map { try X509IssuerKeys.certificates(pem: try read($0)).first ?? Data() }
            } else {
                let transport = FileList(uri: uri, body: body, contentType: "application/statuslist+jwt")
                checker = StatusListChecker(transport: transport, issuers: keys, clock: clock)
                reference = StatusReference(uri: uri, entry: entry, issuer: issuer, authorities: nil)
                reference.issuerChain = try credentialChain.map { try X509IssuerKeys.certificates(pem: try read($0)) } ?? []
                // The companion reaches the list with a credential whose chain names its issuer: so must this.
                if !reference.issuerChain.isEmpty { _ = try await keys.keys(issuer: issuer, certificates: reference.issuerChain, keyID: nil) }
            }
            status = try await checker.status(of: reference)
        } catch {
            FileHandle.standardError.write(Data("unconfirmed: \(error)\n".utf8))
            throw ExitCode(2)
        }
        switch status {
        case StatusList.valid: print("VALID")
        case StatusList.invalid: print("INVALID")
        case StatusList.suspended: print("SUSPENDED")
        default: print("status \(status)")
        }
        if status != StatusList.valid { throw ExitCode.failure }
    }

    /// The media type the list would have been served with: a JWT's text, or a CWT's.
    static func contentType(of body: Data, identifiers: Bool) -> String {
        if body.first == UInt8(ascii: "e") { return "application/statuslist+jwt" }
        return identifiers ? "application/identifierlist+cwt" : "application/statuslist+cwt"
    }

    static func bytes(hex: String) -> Data? {
        let digits = Array(hex.utf8)
        guard !digits.isEmpty, digits.count % 2 == 0, hex.allSatisfy(\.isHexDigit) else { return nil }
        var bytes = Data()
        for position in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[position...position + 1], as: UTF8.self), radix: 16) else { return nil }
            bytes.append(byte)
        }
        return bytes
    }
}

/// Answers the list's URI with the file's bytes, and nothing else.
private struct FileList: HTTPTransport {
    let uri: String
    let body: Data
    let contentType: String

    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard request.method == .get, request.url.absoluteString == uri else { return HTTPResponse(status: 404) }
        return HTTPResponse(status: 200, headers: ["Content-Type": contentType], body: body)
    }
}
