import Foundation

/// What every ``CredentialManager`` of one key in one storage shares in the process: the refresh under
/// way, the write under way, the generation that a new sign-in or a sign-out starts, and a refreshed
/// credential the store could not take. Two managers of one account (a view model's and an API client's)
/// therefore send one refresh between them, and neither undoes the other's sign-out.
actor CredentialSlot {
    /// The registry's name for it: storage and key.
    nonisolated let name: String
    private var inFlight: Task<Credential, any Error>?
    private var writing: Task<Void, any Error>?
    /// Bumped by every write that replaces the credential (a sign-in's save, a removal, a sign-out). A
    /// refresh started under an older generation sends nothing more, and its caller gets what replaced it.
    private(set) var generation = 0
    /// A refreshed credential the provider issued and the store refused to take (a write failing with the
    /// device locked, a full Keychain): kept here, and stored by the next call before anything else.
    private(set) var unsaved: Credential?
    /// The store the unsaved credential belongs to, held with it: while a slot holds a credential, the
    /// store's identity cannot pass to another store.
    private var unsavedStore: (any CredentialStore)?
    /// A credential a refresh could not store after a replacing write moved the generation on: handed to
    /// that write.
    private var superseded: Credential?
    /// A protected refresh token the user authenticated for, and until when it may be used again without
    /// asking (``RefreshTokenProtection/gracePeriod``).
    private var grace: (token: String, until: Date)?

    init(name: String) {
        self.name = name
    }

    /// Runs `work` as the one refresh, or joins the one under way; a write under way finishes first.
    func refresh(_ work: @escaping @Sendable (_ generation: Int) async throws -> Credential) async throws -> Credential {
        await writesSettled()
        if let inFlight { return try await inFlight.value }
        let started = generation
        let task = Task { try await work(started) }
        inFlight = task
        defer { if inFlight == task { inFlight = nil } }
        return try await task.value
    }

    /// Runs `write` after the writes already queued and the refresh under way, so that no two writes of
    /// the credential and no write and a refresh ever interleave. With `replacing`, the generation moves
    /// on first, in the same step that queues the write (nobody sees the new generation without the
    /// write), and the refresh under way sends nothing more or stores its answer before the write.
    ///
    /// A replacing write is given the credential it drops that the store never took: the slot's unsaved
    /// one, or one the refresh under way could not store after the generation moved on (a sign-out revokes
    /// it, so that no live token is left unrevoked at the provider).
    func write<Result: Sendable>(replacing: Bool, _ write: @escaping @Sendable (_ dropped: Credential?) async throws -> Result) async throws
        -> Result
    {
        var dropped: Credential?
        if replacing {
            generation += 1
            dropped = unsaved
            forgetUnsaved()
            grace = nil
        }
        let previous = writing
        let refresh = inFlight
        let task = Task<Result, any Error> { [dropped] in
            _ = try? await previous?.value
            _ = try? await refresh?.value
            guard replacing else { return try await write(nil) }
            let superseded = self.takeSuperseded()
            return try await write(superseded ?? dropped)
        }
        let queued = Task<Void, any Error> { _ = try await task.value }
        writing = queued
        defer { if writing == queued { writing = nil } }
        return try await task.value
    }

    /// Waits until no write is under way (its outcome is the writer's).
    func writesSettled() async {
        while let writing {
            _ = try? await writing.value
            if self.writing == writing { break }
        }
    }

    var refreshing: Bool { inFlight != nil }

    /// Keeps `credential` for the next call to store in `store`; when a write replaced the generation it
    /// came from, that write gets it instead (``write(replacing:_:)``). The slot outlives every manager
    /// until then: an app that drops its manager and makes a new one for the next call still finds it.
    func keepUnsaved(_ credential: Credential, from generation: Int, store: any CredentialStore) {
        guard generation == self.generation else {
            superseded = credential
            return
        }
        unsaved = credential
        unsavedStore = store
        CredentialSlots.pin(self)
    }

    /// Forgets the unsaved credential once it is stored, unless another one took its place meanwhile.
    func stored(_ credential: Credential) {
        if unsaved == credential { forgetUnsaved() }
    }

    /// The protected refresh token, when the user authenticated for it within its grace period.
    func graceToken(at now: Date) -> String? {
        guard let grace, grace.until > now else { return nil }
        return grace.token
    }

    /// Starts a grace period for `token` until `until`; with `rotatedFrom`, moves the one under way to the
    /// token that replaced it, keeping its end.
    func startGrace(_ token: String, until: Date) { grace = (token, until) }

    func moveGrace(from old: String, to new: String) {
        if let grace, grace.token == old { self.grace = (new, grace.until) }
    }

    func endGrace() { grace = nil }

    /// The credential a refresh of an older generation could not store, once.
    private func takeSuperseded() -> Credential? {
        defer { superseded = nil }
        return superseded
    }

    private func forgetUnsaved() {
        guard unsaved != nil else { return }
        unsaved = nil
        unsavedStore = nil
        CredentialSlots.unpin(self)
    }
}

/// The process's slots, one per (storage, key): the one place single flight can hold whoever asks. Held
/// weakly, so a slot lives as long as a manager uses it (and the manager holds its store, so a storage's
/// identity cannot pass to another store while its slot is alive); a slot holding an unsaved credential is
/// pinned until it is stored.
enum CredentialSlots {
    private struct Entry {
        weak var slot: CredentialSlot?
        var pinned: CredentialSlot?
    }

    private static let slots = LockedValue<[String: Entry]>([:])

    static func slot(storage: String, key: String) -> CredentialSlot {
        slots.withLock { slots in
            let name = storage + "\n" + key
            if let slot = slots[name]?.slot { return slot }
            slots = slots.filter { $0.value.slot != nil }
            let slot = CredentialSlot(name: name)
            slots[name] = Entry(slot: slot)
            return slot
        }
    }

    static func pin(_ slot: CredentialSlot) {
        slots.withLock { $0[slot.name]?.pinned = slot }
    }

    static func unpin(_ slot: CredentialSlot) {
        slots.withLock { $0[slot.name]?.pinned = nil }
    }
}
