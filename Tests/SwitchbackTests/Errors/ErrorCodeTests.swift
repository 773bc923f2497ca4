import Foundation
import Testing
@_spi(SwitchbackInternals) @testable import Switchback

/// `SwitchbackError.Code` on the wire (journals, logs): known codes round-trip, and a code a newer version
/// wrote reads as `unknown` instead of failing the whole document.
@Suite("SwitchbackError.Code coding")
struct ErrorCodeTests {
    struct Wrapped: Codable, Equatable {
        let code: SwitchbackError.Code
        let note: String
    }

    @Test("known codes round-trip by name; an unknown name decodes to .unknown and the rest of the document survives")
    func unknownCodes() throws {
        for code in [SwitchbackError.Code.stateMismatch, .userCancelled, .timedOut, .unknown] {
            let data = try JSONEncoder().encode(Wrapped(code: code, note: "n"))
            #expect(try JSONDecoder().decode(Wrapped.self, from: data) == Wrapped(code: code, note: "n"))
        }
        let future = Data(#"{"code":"quantumEntanglementFailed","note":"kept"}"#.utf8)
        let decoded = try JSONDecoder().decode(Wrapped.self, from: future)
        #expect(decoded.code == .unknown)
        #expect(decoded.note == "kept")
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Wrapped.self, from: Data(#"{"code":7,"note":"x"}"#.utf8)) }
    }
}
