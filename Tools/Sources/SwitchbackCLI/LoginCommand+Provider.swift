import ArgumentParser
import Foundation
@_spi(SwitchbackInternals) import Switchback

extension LoginCommand {
    /// `--provider`: which preset's rules a terminal sign-in follows, one of ``ProviderPreset/all`` by its name.
    struct ProviderChoice: ExpressibleByArgument {
        let preset: ProviderPreset

        static let generic = ProviderChoice(preset: .generic)

        init(preset: ProviderPreset) { self.preset = preset }

        init?(argument: String) {
            guard let preset = ProviderPreset.all.first(where: { $0.name == argument }) else { return nil }
            self.preset = preset
        }

        static var allValueStrings: [String] { ProviderPreset.all.map(\.name) }
        var defaultValueDescription: String { preset.name }

        /// What the preset asks of a client, beyond what its request options carry.
        struct Rules {
            let preset: ProviderPreset
            /// Singpass (FAPI 2.0): pushed requests and a DPoP key per sign-in.
            let requiresPAR: Bool
            let requiresDPoP: Bool
            /// UAE Pass: no discovery document; `--issuer` is the base of its documented endpoints.
            let documentedEndpoints: Bool
            let identitySource: IdentitySource

            /// The preset's request options for a sign-in in the system browser without the authenticator
            /// on this machine, with the user's scopes when given. A terminal has no app return link.
            func options(userScopes: String?) async throws -> AuthorizationOptions {
                // The user's scopes go through the preset, which refuses those the provider's contract does not allow.
                var asked = AuthorizationOptions()
                if let userScopes { asked.scopes = userScopes.split(separator: " ").map(String.init) }
                var options = try await preset.request(strategy: .systemBrowser, authenticatorInstalled: false, options: asked).options
                // The tap page Singpass shows for an app's universal-link redirect serves no purpose in a terminal
                // sign-in: standard_https (Singpass's default) ends on the redirect URI itself.
                options.extraParameters.removeAll { $0.0 == "redirect_uri_https_type" }
                return options
            }
        }

        var rules: Rules {
            switch preset.name {
            case ProviderPreset.singpass.name:
                Rules(preset: preset, requiresPAR: true, requiresDPoP: true, documentedEndpoints: false, identitySource: .idToken)
            case ProviderPreset.uaePass.name:
                Rules(preset: preset, requiresPAR: false, requiresDPoP: false, documentedEndpoints: true, identitySource: .userInfo)
            default:
                Rules(preset: preset, requiresPAR: false, requiresDPoP: false, documentedEndpoints: false, identitySource: .idToken)
            }
        }

        /// The issuer when `--issuer` is not given: Singpass's FAPI server, UAE Pass's documented host.
        func defaultIssuer(_ environment: EnvironmentChoice) -> String? {
            switch preset.name {
            case ProviderPreset.singpass.name: ProviderSource.singpass(environment == .production ? .production : .staging).issuer
            case ProviderPreset.uaePass.name: ProviderMetadata.uaePass(environment == .production ? .production : .staging).issuer
            default: nil
            }
        }
    }

    enum EnvironmentChoice: String, ExpressibleByArgument, CaseIterable {
        case production, staging
    }
}
