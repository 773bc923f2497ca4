import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
@_spi(SwitchbackInternals) import Switchback

// Reading request bodies: bounded, JSON or form, and the binding a start carries.
extension CompanionService {
    /// The request body, refused when larger than `limit`; `request` keeps it for a later reader.
    static func collectBody(of request: inout Request, limit: Int = maximumBody) async throws -> ByteBuffer {
        do {
            return try await request.collectBody(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw CompanionError(.tooLarge, "the body is larger than \(limit) bytes")
        } catch let error as HTTPParserError where error != .invalidEOFState {
            // A body the parser refused (a bad chunk size, say), not one that stopped arriving.
            throw CompanionError(.invalidRequest, "the body is not valid HTTP")
        } catch {
            // The connection closed before the body's end: the client left, or its body outlasted
            // `limits.bodyTimeout` (ConnectionGuard). Nobody reads this answer; the metrics and the log do.
            throw CompanionError(.requestTimeout, "the body did not arrive whole")
        }
    }

    private func boundedBody(of request: Request, limit: Int = maximumBody) async throws -> Data {
        var request = request
        return Data(try await Self.collectBody(of: &request, limit: limit).readableBytesView)
    }

    /// A start's `binding`: the app's random secret, which only its own later request repeats.
    static func requireBinding(_ binding: String) throws {
        guard binding.utf8.count >= 22, Secrets.isPlausible(binding) else {
            throw CompanionError(.invalidRequest, "binding must be a random secret of at least 128 bits (22+ printable characters)")
        }
    }

    /// Reads a JSON body of at most `limit` bytes into `type`.
    func decode<Body: Decodable>(_ type: Body.Type, from request: Request, limit: Int = maximumBody) async throws -> Body {
        let body = try await boundedBody(of: request, limit: limit)
        if let flat = type as? any FlatJSON.Type {
            guard let value = flat.read(body) as? Body else {
                throw CompanionError(.invalidRequest, "the body is not the JSON object this route takes")
            }
            return value
        }
        do {
            return try JSONDecoder().decode(type, from: body)
        } catch DecodingError.keyNotFound(let key, _) {
            throw CompanionError(.invalidRequest, "the JSON body lacks \(key.stringValue)")
        } catch {
            throw CompanionError(.invalidRequest, "the body is not the JSON object this route takes")
        }
    }

    /// Reads a bounded form body.
    func form(from request: Request, limit: Int = maximumBody) async throws -> (raw: Data, fields: [String: String]) {
        let raw = try await boundedBody(of: request, limit: limit)
        guard let pairs = FormEncoding.decode(String(decoding: raw, as: UTF8.self), plusIsSpace: true) else {
            throw CompanionError(.invalidRequest, "the body is not a form")
        }
        var fields: [String: String] = [:]
        for (name, value) in pairs {
            guard fields.updateValue(value, forKey: name) == nil else { throw CompanionError(.invalidRequest, "\(name.prefix(40)) appears twice") }
        }
        return (raw, fields)
    }
}
