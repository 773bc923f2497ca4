import Foundation
@_spi(SwitchbackInternals) import Switchback
import SwitchbackEmulator
import SwitchbackTesting

/// What a signed-in app meets next, shown after a scenario's sign-in: many API calls finding the access
/// token expired at once, and a launch before the device's first unlock. Each narrates on the device and
/// returns one line for the demo, or why it did not go as it must.
enum SessionDemos {
    /// `callers` API calls at once, each asking ``CredentialManager/validCredential(minimumValidity:)`` of
    /// an expired credential, against strict rotation: exactly one refresh request, one new access token,
    /// and the family intact (the stored token refreshes again).
    static func concurrentRefresh(
        _ callers: Int, _ credential: Credential, client: OIDCClient, emulator: Emulator, device: SimulatedDevice
    ) async -> Result<String, SwitchbackError> {
        do {
            let store = InMemoryCredentialStore()
            let manager = CredentialManager(client: client, store: store, key: "main")
            var expired = credential
            expired.expiresAt = Date().addingTimeInterval(-1)
            try await manager.save(expired)
            let before = await emulator.refreshRequestCount()
            await device.narrate(.app, .app, "\(callers) API calls at once find the access token expired")
            let tokens = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<callers { group.addTask { try await manager.validCredential().accessToken } }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            let requests = await emulator.refreshRequestCount() - before
            await device.narrate(.app, .provider, "one refresh for all of them: \(requests) refresh request, \(tokens.count) new access token")
            // The rotated token was stored before anyone used the new access token, and still works.
            _ = try await manager.refresh()
            await device.narrate(.app, .provider, "the stored (rotated) refresh token refreshes again: the family was not revoked")
            guard requests == 1, tokens.count == 1, tokens.first != credential.accessToken else {
                throw SwitchbackError(.invalidConfiguration, "\(requests) refresh requests and \(tokens.count) tokens, where one of each was due")
            }
            return .success("\(callers) concurrent callers: 1 refresh request, 1 new access token, nobody signed out.")
        } catch let error as SwitchbackError {
            return .failure(error)
        } catch {
            return .failure(SwitchbackError(.transportFailed, "the concurrent refresh was interrupted (\(type(of: error)))"))
        }
    }

    /// The app relaunched before the first unlock (prewarming): the Keychain answers errSecInteractionNotAllowed,
    /// which is credentialUnavailable and not "signed out"; the manager waits for the unlock and then reads it.
    static func lockedKeychain(_ credential: Credential, client: OIDCClient, device: SimulatedDevice) async -> Result<String, SwitchbackError> {
        do {
            let store = LockableCredentialStore()
            await store.preload(credential, key: "main")
            let unlock = DeviceUnlock([store])
            let manager = CredentialManager(client: client, store: store, key: "main", protectedData: unlock)
            await device.narrate(.device, .app, "prewarms the app after a restart, before the user has unlocked the phone")
            do {
                _ = try await manager.credential()
                throw SwitchbackError(.invalidConfiguration, "the locked Keychain was read")
            } catch let error as SwitchbackError where error.code == .credentialUnavailable {
                await device.narrate(.app, .app, "the Keychain answers errSecInteractionNotAllowed: credentialUnavailable, not signed out")
            }
            let waiting = Task { try await manager.validCredential(minimumValidity: 0) }
            for _ in 0..<500 where unlock.waiting == 0 { try await Task.sleep(nanoseconds: 2_000_000) }
            await device.narrate(.app, .app, "waits for protected data (\(unlock.waiting) caller waiting)")
            await device.narrate(.user, .device, "unlocks the phone")
            await unlock.unlock()
            let read = try await waiting.value
            await device.narrate(.app, .app, "reads the credential after the unlock: still signed in as \(read.subject ?? "?")")
            guard read.accessToken == credential.accessToken else {
                throw SwitchbackError(.invalidConfiguration, "the credential read after the unlock is not the one stored")
            }
            return .success("Locked Keychain: credentialUnavailable until the first unlock, then the same credential; never signed out.")
        } catch let error as SwitchbackError {
            return .failure(error)
        } catch {
            return .failure(SwitchbackError(.transportFailed, "the locked-Keychain launch was interrupted (\(type(of: error)))"))
        }
    }
}
