import Foundation

/// The current account and the book's change notifications.
extension AccountBook {
    /// The current account: the one chosen last (``select(_:)``), or the first one kept, and still kept;
    /// nil when none is. It survives a relaunch when the book's selection store does.
    public func currentAccount() async throws -> Account? {
        guard let id = try await selection.load() else { return nil }
        return try await accounts().first { $0.id == id }
    }

    /// Makes `account` the current one (nil: none). Throws ``SwitchbackError/Code/notSignedIn`` for an
    /// account this book does not keep.
    public func select(_ account: Account?) async throws {
        if let account, try await !accounts().contains(where: { $0.id == account.id }) {
            throw SwitchbackError(.notSignedIn, "this account is not kept here; sign in to it first")
        }
        try await selection.save(account?.id)
        emit(.selected(account))
    }

    /// Every change from now on (accounts saved, removed, selected), for as long as the stream is iterated:
    /// an account picker or a view model updates itself from it.
    ///
    /// ```swift
    /// for await change in await book.changes() {
    ///     if case .selected(let account) = change { show(account) }
    /// }
    /// ```
    public func changes() -> AsyncStream<AccountChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: AccountChange.self, bufferingPolicy: .bufferingNewest(64))
        let id = UUID()
        listeners[id] = continuation
        continuation.onTermination = { _ in Task { await self.stopListening(id) } }
        return stream
    }

    func emit(_ change: AccountChange) {
        for listener in listeners.values { listener.yield(change) }
    }

    private func stopListening(_ id: UUID) {
        listeners[id] = nil
    }
}
