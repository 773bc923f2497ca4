import Foundation
public import Switchback
public import Testing

/// Expects `body` to throw a SwitchbackError with `code`.
public func expectCode<T>(_ code: SwitchbackError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> T) {
    do {
        let value = try body()
        Issue.record("expected \(code), got a result: \(value)", sourceLocation: sourceLocation)
    } catch let error as SwitchbackError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Expects the async `body` to throw a SwitchbackError with `code`.
public func expectCode<T>(_ code: SwitchbackError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T) async {
    do {
        let value = try await body()
        Issue.record("expected \(code), got a result: \(value)", sourceLocation: sourceLocation)
    } catch let error as SwitchbackError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// Expects the async `body` to fail with a SwitchbackError and returns it for closer checks; records
/// `reason` when it succeeds, and the error when it is of another type.
public func expectFailure<T>(_ reason: Comment, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> T) async
    -> SwitchbackError?
{
    do {
        _ = try await body()
        Issue.record(reason, sourceLocation: sourceLocation)
    } catch let error as SwitchbackError {
        return error
    } catch {
        Issue.record("expected a SwitchbackError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
