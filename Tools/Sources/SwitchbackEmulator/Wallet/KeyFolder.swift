public import Foundation

/// A private temporary folder (mode 700) for the key and certificate files a companion's configuration
/// names, as the emulated wallet ecosystem makes them; ``remove()`` deletes it.
public struct KeyFolder: Sendable {
    public let url: URL

    public init(prefix: String) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }

    /// Writes `text` to the file `name` in the folder; returns its path.
    public func write(_ name: String, _ text: String) throws -> String {
        let file = url.appendingPathComponent(name)
        try text.write(to: file, atomically: true, encoding: .utf8)
        return file.path
    }

    public func remove() { try? FileManager.default.removeItem(at: url) }
}
