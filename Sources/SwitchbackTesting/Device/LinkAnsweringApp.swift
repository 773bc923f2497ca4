public import Foundation
@_spi(SwitchbackInternals) public import Switchback

/// An app on the simulated device that answers the links it is opened with by itself, as an identity
/// wallet does: it talks to its verifier over the device's network and then opens a link (the app's return
/// link) or leaves the user to switch back by hand.
public protocol LinkAnsweringApp: Sendable {
    /// Handles `link` over `network` (names resolve as the device resolves them).
    func answer(_ link: URL, network: any HTTPTransport) async -> LinkAnswer
}

/// What a ``LinkAnsweringApp`` did: the steps for the narration, and the link it opens next.
public struct LinkAnswer: Sendable {
    public var steps: [String]
    /// Nil: the user switches back by hand.
    public var next: URL?

    public init(steps: [String], next: URL?) {
        self.steps = steps
        self.next = next
    }
}
