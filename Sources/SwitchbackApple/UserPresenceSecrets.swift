#if canImport(Security) && canImport(LocalAuthentication)
    import Foundation
    import LocalAuthentication
    import Security
    public import Switchback

    /// A refresh token in a Keychain item that only Face ID, Touch ID or the passcode opens
    /// (`SecAccessControl`), for ``RefreshTokenProtection``. It stores and asks; `CredentialManager` decides
    /// when (only when a refresh needs the token), `RotatingSecrets` in which order items are written (a
    /// replacement never leaves neither token), and `KeychainStatus` what a status means (Cancel is
    /// `authenticationDeclined`). The app declares `NSFaceIDUsageDescription`.
    public struct UserPresenceSecrets: UserAuthenticatedSecrets {
        /// Who may open the item.
        public enum Requirement: Sendable {
            /// Face ID or Touch ID, or the passcode when biometry is unavailable (`.userPresence`).
            case biometryOrPasscode
            /// Only the biometry enrolled now (`.biometryCurrentSet`): enrolling another face or finger
            /// invalidates the item, and the user signs in again.
            case currentBiometry

            var flags: SecAccessControlCreateFlags {
                switch self {
                case .biometryOrPasscode: .userPresence
                case .currentBiometry: .biometryCurrentSet
                }
            }
        }

        private let rotating: RotatingSecrets

        public init(service: String = "switchback.refresh-tokens", accessGroup: String? = nil, requirement: Requirement = .biometryOrPasscode) {
            rotating = RotatingSecrets(items: ProtectedKeychainItems(service: service, accessGroup: accessGroup, requirement: requirement))
        }

        /// Adds the new token as a new item before the old one is deleted (the core's `RotatingSecrets`
        /// decides the order); no prompt.
        public func save(_ secret: String, key: String) async throws { try await rotating.save(secret, key: key) }

        public func read(key: String, reason: String) async throws -> String? { try await rotating.read(key: key, reason: reason) }

        public func remove(key: String) async throws { try await rotating.remove(key: key) }
    }

    /// The access-controlled Keychain items behind `UserPresenceSecrets`: each call one Keychain call.
    struct ProtectedKeychainItems: ProtectedItemStore {
        let service: String
        let accessGroup: String?
        let requirement: UserPresenceSecrets.Requirement

        private func query(_ name: String?) -> [String: Any] {
            var query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service]
            if let name { query[kSecAttrAccount as String] = name }
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        func add(_ secret: String, name: String, generation: Int) throws {
            var error: Unmanaged<CFError>?
            guard
                let access = SecAccessControlCreateWithFlags(
                    nil, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly as CFTypeRef, requirement.flags, &error)
            else {
                throw SwitchbackError(.authenticationUnavailable, "the Keychain access control could not be made (is a passcode set?)")
            }
            var item = query(name)
            item[kSecValueData as String] = Data(secret.utf8)
            item[kSecAttrAccessControl as String] = access
            item[kSecAttrGeneric as String] = Data(String(generation).utf8)
            let status = SecItemAdd(item as CFDictionary, nil)
            guard status == errSecSuccess else { throw KeychainStatus.error(status, operation: "protected write", accessGroup: accessGroup) }
        }

        func read(name: String, reason: String) async throws -> String? {
            let query = query(name)
            // The call blocks while the system shows its prompt: never on the caller's (the main) thread.
            let (status, data) = await Task.detached { () -> (OSStatus, Data?) in
                let context = LAContext()
                context.localizedReason = reason
                var item = query
                item[kSecReturnData as String] = true
                item[kSecMatchLimit as String] = kSecMatchLimitOne
                item[kSecUseAuthenticationContext as String] = context
                var result: CFTypeRef?
                let status = SecItemCopyMatching(item as CFDictionary, &result)
                return (status, result as? Data)
            }.value
            if status == errSecItemNotFound { return nil }
            guard status == errSecSuccess, let data else {
                throw KeychainStatus.error(status, operation: "protected read", accessGroup: accessGroup)
            }
            return String(decoding: data, as: UTF8.self)
        }

        func delete(name: String) throws {
            let status = SecItemDelete(query(name) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw KeychainStatus.error(status, operation: "delete", accessGroup: accessGroup)
            }
        }

        func generations(of names: [String]) throws -> [String: Int] {
            // Attributes only, never the data: no prompt. A context that may not interact makes sure.
            let context = LAContext()
            context.interactionNotAllowed = true
            var item = query(nil)
            item[kSecReturnAttributes as String] = true
            item[kSecMatchLimit as String] = kSecMatchLimitAll
            item[kSecUseAuthenticationContext as String] = context
            var result: CFTypeRef?
            let status = SecItemCopyMatching(item as CFDictionary, &result)
            if status == errSecItemNotFound { return [:] }
            guard status == errSecSuccess else { throw KeychainStatus.error(status, operation: "protected list", accessGroup: accessGroup) }
            var found: [String: Int] = [:]
            for attributes in result as? [[String: Any]] ?? [] {
                guard let name = attributes[kSecAttrAccount as String] as? String, names.contains(name) else { continue }
                let generation = (attributes[kSecAttrGeneric as String] as? Data).flatMap { Int(String(decoding: $0, as: UTF8.self)) }
                found[name] = generation ?? 0
            }
            return found
        }
    }
#endif
