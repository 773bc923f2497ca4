public import Foundation
@_spi(SwitchbackInternals) public import Switchback

/// A user agent that shows nothing: it records what the flow asks of it and hands the test the
/// ``UserAgentEvents`` to report navigations, callbacks and dismissals by hand.
public final class RecordingUserAgentHost: UserAgentHost {
    public enum Call: Sendable, Equatable {
        case present(URL, UserAgentStrategy)
        case load(URL)
        case dismiss
    }

    private let state = LockedValue<(calls: [Call], events: UserAgentEvents?)>(([], nil))

    public init() {}

    /// Everything asked so far, in order.
    public var calls: [Call] { state.withLock { $0.calls } }
    /// The events of the flow last presented.
    public var events: UserAgentEvents? { state.withLock { $0.events } }

    public func present(_ url: URL, strategy: UserAgentStrategy, redirectURI: URL, events: UserAgentEvents) async throws {
        state.withLock {
            $0.calls.append(.present(url, strategy))
            $0.events = events
        }
    }

    public func load(_ url: URL) async {
        state.withLock { $0.calls.append(.load(url)) }
    }

    public func dismiss() async {
        state.withLock { $0.calls.append(.dismiss) }
    }
}

/// An opener that records each URL and answers as configured (false: no app is installed for it).
public final class RecordingURLOpener: URLOpener {
    private let state: LockedValue<(opened: [URL], answer: Bool, universal: Bool)>

    /// `universalLinks`: whether an installed app claims the universal links it is asked to open.
    public init(opens: Bool = true, universalLinks: Bool = false) {
        state = LockedValue(([], opens, universalLinks))
    }

    /// Every URL asked for, universal-link-only attempts included, in order.
    public var opened: [URL] { state.withLock { $0.opened } }

    public func open(_ url: URL) async -> Bool {
        state.withLock {
            $0.opened.append(url)
            return $0.answer
        }
    }

    public func openUniversalLink(_ url: URL) async -> Bool {
        state.withLock {
            $0.opened.append(url)
            return $0.universal
        }
    }
}
