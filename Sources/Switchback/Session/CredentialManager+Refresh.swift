import Crypto
import Foundation
import Logging

extension CredentialManager {
    /// One refresh, started under `generation`: the one place a refresh token is sent and its answer kept.
    func performRefresh(from generation: Int, unlessValidFor minimumValidity: TimeInterval?, refused: String?) async throws -> Credential {
        try await storeUnsavedNow()
        guard let stored = try await loadStored() else {
            throw SwitchbackError(.notSignedIn, "no credential is stored under \"\(key)\"")
        }
        let interrupted = try await store.load(key: refreshMarkKey) != nil
        if let minimumValidity, !interrupted, let expiresAt = stored.expiresAt, expiresAt.timeIntervalSince(clock.now()) >= minimumValidity {
            return withoutProtectedToken(stored)
        }
        if let refused, !interrupted, stored.accessToken != refused {
            // Another caller's refresh already replaced the token the API refused.
            return withoutProtectedToken(stored)
        }
        if interrupted { logger.notice("a refresh was cut off before its result was stored; trying again", metadata: ["key": "\(key)"]) }
        try await ensureCurrent(generation)
        var presented = stored
        if let protection, stored.refreshToken == nil {
            if let token = await slot.graceToken(at: clock.now()) {
                // The user authenticated for it within the grace period: not asked again.
                presented.refreshToken = token
            } else {
                // The one place the user is asked: the access token is about to expire. A decline changes nothing.
                guard let refreshToken = try await protection.secrets.read(key: key, reason: protection.reason) else {
                    throw SwitchbackError(
                        .reauthenticationRequired, "the protected refresh token is gone (removed, or invalidated by a biometry change); sign in again"
                    )
                }
                presented.refreshToken = refreshToken
                try await ensureCurrent(generation)
                if protection.gracePeriod > 0 { await slot.startGrace(refreshToken, until: clock.now().addingTimeInterval(protection.gracePeriod)) }
            }
        }
        // Discovery first: a provider that cannot be found was never sent the token, so it leaves no mark.
        _ = try await client.metadata()
        try await store.save(Self.mark(of: presented), key: refreshMarkKey)
        do {
            return try await send(presented, stored: stored, interrupted: interrupted, from: generation)
        } catch {
            // Whatever the provider said of a credential that a sign-in or a sign-out replaced meanwhile
            // is not the caller's answer: what replaced it is.
            if await slot.generation != generation { throw Superseded() }
            throw error
        }
    }

    /// Sends the refresh of `presented` (the stored credential with its refresh token) and keeps what the
    /// provider answered.
    private func send(_ presented: Credential, stored: Credential, interrupted: Bool, from generation: Int) async throws -> Credential {
        let answer: RefreshAnswer
        do {
            answer = try await client.refreshAnswer(presented)
        } catch let error as SwitchbackError where error.code == .tokenEndpointError && error.oauthError?.error == "invalid_grant" {
            return try await refused(error, stored: stored, interrupted: interrupted)
        } catch let error as SwitchbackError where error.code == .tokenEndpointError && (400..<500).contains(error.httpStatus ?? 0) {
            // The provider read the request and refused it (a 4xx with an OAuth error): nothing was rotated.
            // A mark an earlier refresh left stays: that one may still have rotated the token.
            if !interrupted { try? await store.remove(key: refreshMarkKey) }
            throw error
        }
        // Anything else thrown above (a broken connection, a timeout, a gateway's 502 or 504, a cancellation)
        // may have reached the provider and rotated the token: the mark stays, so that a refusal of the
        // token held is reported as the lost rotation it would be.
        switch answer {
        case .accepted(let refreshed):
            // Stored even when a sign-in or a sign-out replaced it meanwhile: their write comes after this one
            // and replaces it, and a sign-out then revokes the token the provider holds as current.
            await moveGrace(from: presented, to: refreshed.refreshToken)
            try await keepRefreshed(refreshed, from: generation)
            try await ensureCurrent(generation)
            return withoutProtectedToken(refreshed)
        case .refused(let error, .rotated(let rotated)):
            var kept = presented
            kept.refreshToken = rotated
            await moveGrace(from: presented, to: rotated)
            try await keepRefreshed(kept, from: generation)
            logger.notice("the provider's answer was refused; the rotated refresh token it carried is stored", metadata: ["key": "\(key)"])
            guard let error = error as? SwitchbackError else { throw error }
            throw SwitchbackError(
                error.code, error.message + " (the provider's answer was refused; the rotated refresh token it carried is stored)",
                oauthError: error.oauthError, httpStatus: error.httpStatus, underlying: error)
        case .refused(let error, .unchanged):
            try await store.remove(key: refreshMarkKey)
            throw error
        case .refused(let error, .unreadable):
            logger.warning("the provider's answer to a refresh cannot be read; it may have rotated the refresh token", metadata: ["key": "\(key)"])
            throw error
        }
    }

    /// What the refresh mark holds: the credential's identity and a digest of the refresh token sent, and
    /// no token (the mark is a second copy in the store, and only says a refresh was under way).
    static func mark(of presented: Credential) -> Credential {
        var mark = presented
        mark.accessToken = ""
        mark.refreshToken = presented.refreshToken.map { Base64URL.encode(SHA256.hash(data: Data($0.utf8))) }
        mark.idToken = nil
        mark.dpopKey = nil
        return mark
    }

    /// A grace period under way follows the token to the one that rotated it.
    private func moveGrace(from presented: Credential, to rotated: String?) async {
        guard let old = presented.refreshToken, let rotated else { return }
        await slot.moveGrace(from: old, to: rotated)
    }

    /// Throws ``Superseded`` when a sign-in or a sign-out replaced the credential since `generation`.
    private func ensureCurrent(_ generation: Int) async throws {
        guard await slot.generation == generation else { throw Superseded() }
    }

    /// Stores a credential the provider issued and clears the mark; when the store refuses it, the slot
    /// keeps it for the next call, and the error says so.
    private func keepRefreshed(_ credential: Credential, from generation: Int) async throws {
        do {
            try await keep(credential)
        } catch {
            await slot.keepUnsaved(credential, from: generation, store: store)
            let underlying = error as? SwitchbackError
            throw SwitchbackError(
                underlying?.code ?? .storeFailed,
                "the refreshed credential could not be stored (\(underlying?.message ?? "\(type(of: error))")); it is kept in memory and stored by the next call",
                underlying: underlying)
        }
        await clearMark()
    }

    /// Removes the refresh mark once the result is stored. A mark that stays is only a hint (a later
    /// refusal of the stored token would be reported as a lost rotation), so failing to remove it fails
    /// nothing; the next successful refresh or write removes it.
    private func clearMark() async {
        do {
            try await store.remove(key: refreshMarkKey)
        } catch {
            logger.warning("the refresh mark could not be removed", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }

    /// The provider refused the token held: someone else's rotation, a lost one, or a revocation.
    private func refused(_ error: SwitchbackError, stored: Credential, interrupted: Bool) async throws -> Credential {
        // Someone else (another process sharing the store) may have rotated it meanwhile.
        // (A protected credential is stored without its refresh token: its access token tells instead.)
        if let current = try await store.load(key: key),
            current.refreshToken != stored.refreshToken || (protection != nil && current.accessToken != stored.accessToken)
        {
            try await store.remove(key: refreshMarkKey)
            logger.info("the refresh token was rotated elsewhere; using the stored credential", metadata: ["key": "\(key)"])
            return withoutProtectedToken(current)
        }
        guard interrupted else {
            try await store.remove(key: refreshMarkKey)
            throw SwitchbackError(
                .reauthenticationRequired, "the provider refused the refresh token (revoked or expired); sign in again",
                oauthError: error.oauthError, underlying: error)
        }
        // The mark stays: every later refusal of this token is the same lost rotation.
        throw SwitchbackError(
            .rotationLost,
            "the provider refused the refresh token after a refresh whose answer was lost (cut off, or never read): its rotation was lost; sign in again",
            oauthError: error.oauthError, underlying: error)
    }
}
