public import Foundation

/// Where credentials live between launches. Keychain-backed storage comes with the Apple adapters.
public protocol CredentialStore: Sendable {
    func load(key: String) async throws -> Credential?
    func save(_ credential: Credential, key: String) async throws
    func remove(key: String) async throws
    /// Names the storage this store reads and writes, so that two stores over one storage (two Keychain
    /// stores of one service and access group, two file stores of one directory) give one name. Every
    /// ``CredentialManager`` of one key in one storage shares one refresh in the process, whoever made it.
    /// The default names the store itself when it is a class or an actor; a value type that keeps the
    /// default shares with no other store.
    var storageIdentity: String { get }
}

extension CredentialStore {
    public var storageIdentity: String {
        guard type(of: self) is AnyClass else { return "unshared:" + UUID().uuidString }
        return "object:\(ObjectIdentifier(self as AnyObject).hashValue)"
    }
}

/// Credentials kept in memory only, for tests and short-lived processes.
public actor InMemoryCredentialStore: CredentialCollection {
    private var credentials: [String: Credential] = [:]

    public init() {}

    public func load(key: String) -> Credential? { credentials[key] }
    public func save(_ credential: Credential, key: String) { credentials[key] = credential }
    public func remove(key: String) { credentials[key] = nil }
    public func allCredentials() -> [Credential] { Array(credentials.values) }
}

/// Credentials in one JSON file per key inside a directory, written atomically and readable by the owner
/// only from the first byte (`OwnerOnlyFile`).
///
/// Suited to command-line tools and servers; on iOS and macOS prefer the Keychain store.
public actor FileCredentialStore: CredentialCollection {
    private let directory: URL
    private let dpopKeys: DPoPKeySource

    /// `dpopKeys` reads back the hardware DPoP keys of the credentials kept here.
    public init(directory: URL, dpopKeys: DPoPKeySource = .software) {
        self.directory = directory
        self.dpopKeys = dpopKeys
    }

    /// The directory: two stores over one directory share their managers' refreshes.
    public nonisolated var storageIdentity: String { "file:" + directory.standardizedFileURL.path }

    public func load(key: String) throws -> Credential? {
        let url = try fileURL(for: key)
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        do {
            return try dpopKeys.decoder().decode(Credential.self, from: Data(contentsOf: url))
        } catch let error as SwitchbackError where error.code == .dpopKeyUnavailable {
            throw error
        } catch {
            throw SwitchbackError(.storeFailed, "the stored credential for \"\(key)\" cannot be read", underlying: error)
        }
    }

    public func save(_ credential: Credential, key: String) throws {
        let url = try fileURL(for: key)
        do {
            try OwnerOnlyFile.makeDirectory(directory)
            try OwnerOnlyFile.write(try JSONEncoder().encode(credential), to: url)
        } catch let error as SwitchbackError {
            throw SwitchbackError(.storeFailed, "the credential for \"\(key)\" cannot be written: \(error.message)")
        } catch {
            throw SwitchbackError(.storeFailed, "the credential for \"\(key)\" cannot be written", underlying: error)
        }
    }

    public func remove(key: String) throws {
        let url = try fileURL(for: key)
        guard FileManager.default.fileExists(atPath: url.path) else { return }
        do {
            try FileManager.default.removeItem(at: url)
        } catch {
            throw SwitchbackError(.storeFailed, "the credential for \"\(key)\" cannot be removed", underlying: error)
        }
    }

    /// Every credential in the directory (none when it does not exist yet); a file that does not decode is
    /// skipped, not fatal to the others.
    public func allCredentials() throws -> [Credential] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [] }
        return names.sorted().filter { $0.hasSuffix(".json") && !$0.hasPrefix(".") }.compactMap {
            try? dpopKeys.decoder().decode(Credential.self, from: Data(contentsOf: directory.appendingPathComponent($0)))
        }
    }

    /// Keys become file names, so only a safe alphabet is accepted.
    private func fileURL(for key: String) throws -> URL {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
        guard !key.isEmpty, key.count <= 128, key.allSatisfy({ allowed.contains($0) }), !key.hasPrefix(".") else {
            throw SwitchbackError(.storeFailed, "a credential key must be 1 to 128 letters, digits, '-', '_' or '.', not starting with '.'")
        }
        return directory.appendingPathComponent(key + ".json")
    }
}
