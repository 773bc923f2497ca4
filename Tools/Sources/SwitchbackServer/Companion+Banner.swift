import Foundation
@_spi(SwitchbackInternals) import Switchback

extension Companion {
    /// What a deployment's log shows once the companion listens: its address and store, the provider
    /// and how the client authenticates (never the secret), the limits and the routes; `notes` follow
    /// the first line.
    public func banner(_ configuration: ServerConfiguration, notes: [String] = []) -> String {
        var lines = ["Switchback companion on \(baseURL.absoluteString), store: \(configuration.postgresURL == nil ? "memory" : "PostgreSQL")"]
        lines += notes
        if let provider = configuration.provider {
            lines.append(
                "provider: \(provider.issuer) (client \(provider.clientID), \(provider.clientSecret == nil ? "private_key_jwt" : "client_secret_basic"))"
            )
        }
        lines.append("limits: \(configuration.limits.summary)")
        if let appAttest = configuration.appAttest {
            let root = appAttest.rootCertificateFile.map { "root \($0), NOT Apple's: for tests only" } ?? "Apple's App Attestation Root CA"
            lines.append(
                "App Attest: \(appAttest.appIDs.joined(separator: ", ")), \(appAttest.environment), \(appAttest.required ? "required" : "checked when sent"), \(root)"
            )
        }
        if let play = configuration.playIntegrity {
            lines.append(
                "Play Integrity: \(play.packageNames.joined(separator: ", ")), device \(play.deviceVerdicts.joined(separator: "+"))"
                    + "\(play.requireLicensed ? ", licensed" : ""), \(play.required ? "required" : "checked when sent")")
        }
        if let metrics = configuration.metrics, let metricsPort {
            lines.append("metrics: http://\(URLHost.bracketed(metrics.host)):\(metricsPort)/metrics (Prometheus)")
        }
        lines.append("routes:")
        lines += routes.map { "  \($0)" }
        return lines.joined(separator: "\n") + "\n"
    }
}
