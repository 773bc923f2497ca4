public import Foundation

/// Where an ``AccountBook`` keeps which account is the current one, so that it survives a relaunch: on
/// Apple platforms a Keychain item (`KeychainAccountSelection` in the adapters), shared with the app's
/// extensions through an access group. The value is an ``Account/id``: a digest of the issuer and subject,
/// not a secret, but derived from a person's identifier, so kept as privately as the credentials.
public protocol AccountSelectionStore: Sendable {
    /// The current account's ID; nil when none is chosen.
    func load() async throws -> String?
    /// Makes `accountID` the current one; nil chooses none.
    func save(_ accountID: String?) async throws
}

/// The choice in memory only: it does not survive a relaunch. For tests and short-lived processes.
public actor InMemoryAccountSelection: AccountSelectionStore {
    private var accountID: String?

    public init() {}

    public func load() -> String? { accountID }
    public func save(_ accountID: String?) { self.accountID = accountID }
}

/// The choice in one owner-only file (``FileCredentialStore``'s neighbour for command-line tools and servers).
public actor FileAccountSelection: AccountSelectionStore {
    private let file: URL

    public init(file: URL) {
        self.file = file
    }

    public func load() throws -> String? {
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        do {
            let text = String(decoding: try Data(contentsOf: file), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            return text.isEmpty ? nil : text
        } catch {
            throw SwitchbackError(.storeFailed, "the current account cannot be read", underlying: error)
        }
    }

    public func save(_ accountID: String?) throws {
        do {
            guard let accountID else {
                if FileManager.default.fileExists(atPath: file.path) { try FileManager.default.removeItem(at: file) }
                return
            }
            try OwnerOnlyFile.makeDirectory(file.deletingLastPathComponent())
            try OwnerOnlyFile.write(Data(accountID.utf8), to: file)
        } catch let error as SwitchbackError {
            throw SwitchbackError(.storeFailed, "the current account cannot be written: \(error.message)")
        } catch {
            throw SwitchbackError(.storeFailed, "the current account cannot be written", underlying: error)
        }
    }
}
