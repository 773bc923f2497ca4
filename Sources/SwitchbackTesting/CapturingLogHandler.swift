public import Logging
@_spi(SwitchbackInternals) import Switchback

/// A swift-log handler that keeps every rendered line, so tests can assert what was (not) logged.
public struct CapturingLogHandler: LogHandler {
    /// The shared sink the handler writes into.
    public final class Sink: Sendable {
        private let lines = LockedValue<[String]>([])

        public init() {}

        public var all: [String] { lines.withLock { $0 } }
        public var text: String { all.joined(separator: "\n") }

        func append(_ line: String) { lines.withLock { $0.append(line) } }
    }

    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace
    private let sink: Sink

    public init(sink: Sink) {
        self.sink = sink
    }

    /// A logger writing every level into `sink`.
    public static func logger(_ sink: Sink, label: String = "test") -> Logger {
        Logger(label: label) { _ in CapturingLogHandler(sink: sink) }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let rendered = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        sink.append("\(event.level) \(event.message) \(rendered)")
    }
}
