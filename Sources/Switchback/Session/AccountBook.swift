import Foundation
import Crypto

/// A credential store that can list what it holds, for keeping several accounts.
public protocol CredentialCollection: CredentialStore {
    /// Every credential stored, in no particular order.
    func allCredentials() async throws -> [Credential]
}

/// One signed-in account: a subject at an issuer (a person as themselves at Singpass and as a company's
/// representative at Corppass; BankID personal and business).
public struct Account: Sendable, Hashable, Identifiable, Codable {
    /// The store key its credential lives under, derived from issuer and subject.
    public let id: String
    public let issuer: String
    public let subject: String
    /// The client the account signed in with at its issuer: with ``issuer``, which ``OIDCClient`` keeps it.
    public let clientID: String
    /// A name to show in an account picker: the `name`, else the `email`, else nil.
    public let displayName: String?
}

/// What changed in an ``AccountBook``, as ``AccountBook/changes()`` reports it.
public enum AccountChange: Sendable, Equatable {
    /// A sign-in's credential was kept for this account (a new account, or the same one signing in again).
    case saved(Account)
    /// The account was forgotten here.
    case removed(Account)
    /// The current account is now this one, or none.
    case selected(Account?)
}

/// Several signed-in accounts in one store: each sign-in's credential is kept under a key derived from its
/// issuer and subject (a second sign-in of the same account replaces the first, another account is added
/// beside it), listed for a picker, and kept fresh by a ``CredentialManager`` per account.
///
/// ```swift
/// let book = AccountBook(store: KeychainCredentialStore(accessGroup: group))
/// let account = try await book.add(result.credential)            // after each sign-in
/// let manager = await book.manager(for: account, client: singpassClient) // the account the user picked
/// ```
public actor AccountBook {
    private let store: any CredentialCollection
    /// The store's identity, read once: every write here and every manager made here share its slots.
    private let storage: String
    private let protection: RefreshTokenProtection?
    let selection: any AccountSelectionStore
    /// Who listens to ``changes()``.
    var listeners: [UUID: AsyncStream<AccountChange>.Continuation] = [:]
    /// One manager per account, so that every call for an account gets the same one (one refresh at a time
    /// holds per account in any case: managers of one key in one store share it).
    private var managers: [String: CredentialManager] = [:]

    /// With `protection`, every account's refresh token is kept behind the user's authentication
    /// (``RefreshTokenProtection``), from the sign-in on. `selection` keeps the current account across
    /// launches (in memory only by default).
    public init(
        store: any CredentialCollection, protection: RefreshTokenProtection? = nil, selection: any AccountSelectionStore = InMemoryAccountSelection()
    ) {
        self.store = store
        self.storage = store.storageIdentity
        self.protection = protection
        self.selection = selection
    }

    /// The account a credential belongs to; throws `identityRequirementNotMet` when it names no subject.
    public static func account(of credential: Credential) throws -> Account {
        guard let subject = credential.subject, !subject.isEmpty else {
            throw SwitchbackError(.identityRequirementNotMet, "the credential names no subject, so it cannot be kept as an account")
        }
        let digest = SHA256.hash(data: Data((credential.issuer + "\n" + subject).utf8))
        // The ID token was validated at sign-in; its payload is read again here only for a name to show.
        var claims = credential.userInfoClaims ?? [:]
        if let payload = credential.idToken?.split(separator: ".").dropFirst().first, let data = Base64URL.decode(payload),
            case .object(let idClaims)? = try? JSONDecoder().decode(JSONValue.self, from: data)
        {
            claims.merge(idClaims) { userInfo, _ in userInfo }
        }
        let name: String? =
            if case .string(let name)? = claims["name"] { Redaction.printable(name) } else if case .string(let email)? = claims["email"] {
                Redaction.printable(email)
            } else { nil }
        return Account(
            id: "account-" + Base64URL.encode(Data(digest).prefix(18)), issuer: credential.issuer, subject: subject, clientID: credential.clientID,
            displayName: name)
    }

    /// Keeps `credential` as its account's, replacing that account's previous one; returns the account,
    /// which becomes the current one when none is. A refresh of that account under way (through any
    /// manager) stores nothing over it.
    @discardableResult
    public func add(_ credential: Credential) async throws -> Account {
        let account = try Self.account(of: credential)
        if let manager = managers[account.id] {
            // Through the account's manager, so that a protected refresh token goes where it belongs.
            try await manager.save(credential)
        } else {
            let (store, protection) = (store, protection)
            try await CredentialSlots.slot(storage: storage, key: account.id).write(replacing: true) { _ in
                try await CredentialManager.keep(credential, key: account.id, store: store, protection: protection)
                try await store.remove(key: CredentialManager.refreshMarkKey(for: account.id))
            }
        }
        emit(.saved(account))
        if try await selection.load() == nil { try await select(account) }
        return account
    }

    /// Every account kept, sorted by issuer then name.
    public func accounts() async throws -> [Account] {
        var seen: [String: Account] = [:]
        for credential in try await store.allCredentials() {
            guard let account = try? Self.account(of: credential) else { continue }
            seen[account.id] = seen[account.id] ?? account
        }
        return seen.values.sorted { ($0.issuer, $0.displayName ?? $0.subject) < ($1.issuer, $1.displayName ?? $1.subject) }
    }

    /// Forgets an account here (sign out of it first with its manager to end it at the provider); when it
    /// was the current one, none is current after.
    public func remove(_ account: Account) async throws {
        if let manager = managers.removeValue(forKey: account.id) {
            try await manager.remove()
        } else {
            let (store, protection) = (store, protection)
            try await CredentialSlots.slot(storage: storage, key: account.id).write(replacing: true) { _ in
                try await CredentialManager.removeStored(key: account.id, store: store, protection: protection)
            }
        }
        emit(.removed(account))
        if try await selection.load() == account.id { try await select(nil) }
    }

    /// The manager that keeps `account`'s credential fresh, with `client` configured for its issuer: the
    /// same manager for every call with the same account, with the book's protection. The other options are
    /// ``CredentialManager``'s, and the first call's are kept.
    public func manager(
        for account: Account, client: OIDCClient, protectedData: (any ProtectedDataGate)? = nil, backgroundWork: (any BackgroundWork)? = nil,
        interProcessLock: (any InterProcessLock)? = nil
    ) -> CredentialManager {
        if let manager = managers[account.id] { return manager }
        let manager = CredentialManager(
            client: client, store: store, storage: storage, key: account.id, protectedData: protectedData, backgroundWork: backgroundWork,
            protection: protection, interProcessLock: interProcessLock)
        managers[account.id] = manager
        return manager
    }
}
