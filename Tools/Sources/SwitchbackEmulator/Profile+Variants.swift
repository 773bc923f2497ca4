import Foundation
import Crypto
@_spi(SwitchbackInternals) import Switchback

extension Profile {
    /// The profile called `name`, with `variants` applied; fails naming what is unknown.
    public static func named(_ name: String, variants: [String] = []) -> Result<Profile, UnknownProfile> {
        guard var profile = all.first(where: { $0.name == name }) else {
            return .failure(UnknownProfile(description: "unknown profile \"\(name)\"; available: \(all.map(\.name).joined(separator: ", "))"))
        }
        for variant in variants {
            // Any profile can refuse embedded WebViews, as MitID and Singpass do.
            if variant == "no-webview" {
                profile.refusesEmbeddedWebViews = true
                continue
            }
            if let delivery = HandOffDelivery(rawValue: variant), profile.handOff != nil {
                profile.handOffDelivery = delivery
                continue
            }
            switch profile.handOff {
            case .uaePass(var options):
                guard let known = UAEPassOptions.Variant(rawValue: variant) else {
                    let names = UAEPassOptions.Variant.allCases.map(\.rawValue) + HandOffDelivery.allCases.map(\.rawValue)
                    return .failure(
                        UnknownProfile(description: "unknown uaepass variant \"\(variant)\"; available: \(names.joined(separator: ", "))"))
                }
                options.apply(known)
                profile.handOff = .uaePass(options)
            case .bankIDSweden(var options):
                switch variant {
                case "app-link": options.appLinkForm = true
                case "short-order": (options.orderLifetime, options.startLifetime) = (2, 2)
                case "continue-button":
                    // The broker's continue page (assumed): the variant overrides the contract's plain redirect.
                    profile.returnPage = .tapPage
                    profile.contract = profile.contract?.replacing(.providerReturnPage, with: .flag(true))
                default:
                    return .failure(
                        UnknownProfile(
                            description:
                                "unknown bankid-se variant \"\(variant)\"; available: app-link, short-order, continue-button, \(HandOffDelivery.allCases.map(\.rawValue).joined(separator: ", "))"
                        ))
                }
                profile.handOff = .bankIDSweden(options)
            case .mitID where variant == MitIDBroker.idura.rawValue:
                profile.handOff = .mitID(.idura)
                profile.returnPage = .redirect
                profile.contract = .mitIDIdura
            case .mitID:
                return .failure(
                    UnknownProfile(
                        description:
                            "unknown mitid variant \"\(variant)\"; available: idura, no-webview, \(HandOffDelivery.allCases.map(\.rawValue).joined(separator: ", "))"
                    ))
            case nil, .bankIDNorway, .singpass:
                return .failure(
                    UnknownProfile(
                        description:
                            "the \(name) profile has no variants but no-webview\(profile.handOff == nil ? "" : ", \(HandOffDelivery.allCases.map(\.rawValue).joined(separator: ", "))")"
                    ))
            }
        }
        return .success(profile)
    }

    /// A profile or variant name the emulator does not know.
    public struct UnknownProfile: Error, CustomStringConvertible {
        public let description: String
    }
}
