public import Foundation

/// What is kept of an unfinished sign-in so that it survives the app being terminated while the user is
/// in the authenticator: the flow's state and plan, the saved resume URLs, and the authorization it was
/// started with (the app's own: state, nonce, PKCE verifier, PAR request URI; or the companion's: its
/// state or the app's flow secret). Never a code or a token.
///
/// The authorization holds secrets: store journals only where the app's other secrets go (the Keychain
/// adapter on Apple platforms; ``FileFlowJournalStore`` writes owner-only files).
public struct FlowJournal: Sendable, Codable, Equatable {
    /// The flow's state machine (internal to the library).
    @_spi(SwitchbackInternals) public var flow: SignInFlow
    @_spi(SwitchbackInternals) public var authorization: StartedAuthorization
    /// The preset or provider name, for the app to show what was interrupted.
    public var provider: String
    /// After this instant the journal is worthless (the provider has forgotten the request) and purged.
    public var expiresAt: Date

    @_spi(SwitchbackInternals) public init(flow: SignInFlow, authorization: StartedAuthorization, provider: String, expiresAt: Date) {
        self.flow = flow
        self.authorization = authorization
        self.provider = provider
        self.expiresAt = expiresAt
    }

    /// The journal of a sign-in the app started itself.
    @_spi(SwitchbackInternals) public init(flow: SignInFlow, session: AuthorizationSession, provider: String, expiresAt: Date) {
        self.init(flow: flow, authorization: .app(session), provider: provider, expiresAt: expiresAt)
    }

    public var flowID: String { flow.plan.flowID }

    // The app's own session is kept under `session`, as in journals written before companion sign-ins.
    private enum CodingKeys: String, CodingKey {
        case flow, session, companion, provider, expiresAt
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        flow = try container.decode(SignInFlow.self, forKey: .flow)
        provider = try container.decode(String.self, forKey: .provider)
        expiresAt = try container.decode(Date.self, forKey: .expiresAt)
        if let companion = try container.decodeIfPresent(CompanionAuthorization.self, forKey: .companion) {
            authorization = .companion(companion)
        } else {
            authorization = .app(try container.decode(AuthorizationSession.self, forKey: .session))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(flow, forKey: .flow)
        try container.encode(provider, forKey: .provider)
        try container.encode(expiresAt, forKey: .expiresAt)
        switch authorization {
        case .app(let session): try container.encode(session, forKey: .session)
        case .companion(let companion): try container.encode(companion, forKey: .companion)
        case .signOut:
            throw EncodingError.invalidValue(
                authorization, .init(codingPath: encoder.codingPath, debugDescription: "a sign-out is never journaled"))
        }
    }
}

/// Where flow journals are kept.
public protocol FlowJournalStore: Sendable {
    /// Saves `journal`, replacing the one with the same flow ID.
    func save(_ journal: FlowJournal) async throws
    /// Every saved journal.
    func journals() async throws -> [FlowJournal]
    /// Removes the journal of `flowID`; removing a missing one is not an error.
    func remove(flowID: String) async throws
}

extension FlowJournalStore {
    /// Removes the journals that expired at `now` and returns those still valid.
    public func purge(now: Date) async throws -> [FlowJournal] {
        var valid: [FlowJournal] = []
        for journal in try await journals() {
            if journal.expiresAt <= now {
                try await remove(flowID: journal.flowID)
            } else {
                valid.append(journal)
            }
        }
        return valid
    }
}

/// Journals in memory: they do not survive the process. For tests and for apps that accept losing a
/// sign-in when terminated.
public actor InMemoryFlowJournalStore: FlowJournalStore {
    private var saved: [String: FlowJournal] = [:]

    public init() {}

    public func save(_ journal: FlowJournal) { saved[journal.flowID] = journal }
    public func journals() -> [FlowJournal] { saved.values.sorted { $0.authorization.createdAt < $1.authorization.createdAt } }
    public func remove(flowID: String) { saved[flowID] = nil }
}

/// Journals as JSON files in a directory, one per flow, readable by the owner only from the first byte and
/// written atomically (`OwnerOnlyFile`: a termination mid-write leaves the previous version). A journal
/// survives the app's termination, which is what it is for, without a flush to disk on every step: a
/// sign-in under way when the device loses power is started again (the flushes were 9% of a hand-off
/// sign-in's client CPU: Documentation/Decisions/0009-flow-journal-without-fsync.md).
public struct FileFlowJournalStore: FlowJournalStore {
    public let directory: URL
    private let dpopKeys: DPoPKeySource

    /// `dpopKeys` reads back the hardware DPoP keys of the sign-ins journaled here.
    public init(directory: URL, dpopKeys: DPoPKeySource = .software) {
        self.directory = directory
        self.dpopKeys = dpopKeys
    }

    public func save(_ journal: FlowJournal) throws {
        do {
            try OwnerOnlyFile.makeDirectory(directory)
            try OwnerOnlyFile.write(try JSONEncoder().encode(journal), to: try fileURL(journal.flowID), surviving: .appTermination)
        } catch let error as SwitchbackError {
            throw error
        } catch {
            throw SwitchbackError(.storeFailed, "could not write the flow journal", underlying: error)
        }
    }

    public func journals() throws -> [FlowJournal] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        var found: [FlowJournal] = []
        for name in names.sorted() where name.hasSuffix(".journal") {
            let file = directory.appendingPathComponent(name)
            // A file that cannot be read back (a different version, damage) is removed rather than
            // failing every later launch.
            guard let data = try? Data(contentsOf: file), let journal = try? dpopKeys.decoder().decode(FlowJournal.self, from: data) else {
                try? FileManager.default.removeItem(at: file)
                continue
            }
            found.append(journal)
        }
        return found.sorted { $0.authorization.createdAt < $1.authorization.createdAt }
    }

    public func remove(flowID: String) throws {
        let file = try fileURL(flowID)
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        do {
            try FileManager.default.removeItem(at: file)
        } catch  where !FileManager.default.fileExists(atPath: file.path) {
            // Removed meanwhile (another coordinator purging the same directory): gone is what was asked.
        } catch {
            throw SwitchbackError(.storeFailed, "could not remove the flow journal", underlying: error)
        }
    }

    private func fileURL(_ flowID: String) throws -> URL {
        // Flow IDs are base64url; anything else could name a path outside the directory.
        guard !flowID.isEmpty, flowID.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else {
            throw SwitchbackError(.storeFailed, "the flow ID is not a base64url string")
        }
        return directory.appendingPathComponent(flowID + ".journal")
    }
}
