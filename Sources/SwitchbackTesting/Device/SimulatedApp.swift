public import Foundation
public import Switchback

/// The app under test: its identity on the device and how it builds its coordinator at each launch.
public struct SimulatedApp: Sendable {
    /// `TEAMID.bundle.id`, as association files name it.
    public let appID: String
    /// Custom schemes it registers (lowercase).
    public let schemes: Set<String>
    /// Domains of its associated-domains entitlement (`applinks:`).
    public let associatedDomains: Set<String>
    let makeCoordinator: @Sendable (Context) async -> SignInCoordinator

    /// What the device gives the app at launch.
    public struct Context: Sendable {
        public let host: any UserAgentHost
        public let opener: any URLOpener
        public let clock: ManualClock
        /// The journal store on the device's storage; a terminated launch can no longer write to it.
        public let journal: any FlowJournalStore
    }

    public init(appID: String, schemes: Set<String>, associatedDomains: Set<String> = [], makeCoordinator: @escaping @Sendable (Context) async -> SignInCoordinator) {
        self.appID = appID
        self.schemes = Set(schemes.map { $0.lowercased() })
        self.associatedDomains = Set(associatedDomains.map { $0.lowercased() })
        self.makeCoordinator = makeCoordinator
    }
}

/// One launch of the app under test.
public final class RunningApp: Sendable {
    let id: UUID
    public let coordinator: SignInCoordinator
    let restoredFlows = LockedValue<[String]?>(nil)

    init(id: UUID, coordinator: SignInCoordinator) {
        self.id = id
        self.coordinator = coordinator
    }

    /// The sign-ins this launch read back from the journal; nil until it has looked.
    public var restored: [String]? { restoredFlows.withLock { $0 } }
}
