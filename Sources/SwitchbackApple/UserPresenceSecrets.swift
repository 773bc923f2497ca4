#if canImport(Security) && canImport(LocalAuthentication)
    import Foundation
    import LocalAuthentication
    import Security
    public import Switchback

    /// A refresh token in a Keychain item that only Face ID, Touch ID or the passcode opens
    /// (`SecAccessControl`), for ``RefreshTokenProtection``. It stores and asks; `CredentialManager` decides
    /// when (only when a refresh needs the token), and `KeychainStatus` what a status means (Cancel is
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

        let service: String
        let accessGroup: String?
        let requirement: Requirement

        public init(service: String = "switchback.refresh-tokens", accessGroup: String? = nil, requirement: Requirement = .biometryOrPasscode) {
            self.service = service
            self.accessGroup = accessGroup
            self.requirement = requirement
        }

        private func query(_ key: String) -> [String: Any] {
            var query: [String: Any] = [
                kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: key,
            ]
            if let accessGroup { query[kSecAttrAccessGroup as String] = accessGroup }
            return query
        }

        public func save(_ secret: String, key: String) throws {
            // Updating an access-controlled item would ask the user; a new item asks nothing.
            try remove(key: key)
            var error: Unmanaged<CFError>?
            guard
                let access = SecAccessControlCreateWithFlags(
                    nil, kSecAttrAccessibleWhenPasscodeSetThisDeviceOnly as CFTypeRef, requirement.flags, &error)
            else {
                throw SwitchbackError(.authenticationUnavailable, "the Keychain access control could not be made (is a passcode set?)")
            }
            var item = query(key)
            item[kSecValueData as String] = Data(secret.utf8)
            item[kSecAttrAccessControl as String] = access
            let status = SecItemAdd(item as CFDictionary, nil)
            guard status == errSecSuccess else { throw KeychainStatus.error(status, operation: "protected write", accessGroup: accessGroup) }
        }

        public func read(key: String, reason: String) async throws -> String? {
            let query = query(key)
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

        public func remove(key: String) throws {
            let status = SecItemDelete(query(key) as CFDictionary)
            guard status == errSecSuccess || status == errSecItemNotFound else {
                throw KeychainStatus.error(status, operation: "delete", accessGroup: accessGroup)
            }
        }
    }
#endif
