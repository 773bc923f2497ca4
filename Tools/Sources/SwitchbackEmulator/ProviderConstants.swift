/// Recognises embedded WebViews by their User-Agent, as providers that refuse them do.
enum UserAgent {
    /// Android WebViews add `; wv)`; iOS `WKWebView`s name `AppleWebKit` and a `Mobile/` build but no
    /// `Safari/` token, which Safari, `SFSafariViewController` and `ASWebAuthenticationSession` all send.
    static func isEmbeddedWebView(_ userAgent: String?) -> Bool {
        guard let userAgent else { return false }
        if userAgent.contains("; wv)") { return true }
        return isIOS(userAgent) && userAgent.contains("AppleWebKit") && !userAgent.contains("Safari/")
    }

    /// A browser on an iPhone or iPad, by its User-Agent.
    static func isIOS(_ userAgent: String?) -> Bool {
        guard let userAgent else { return false }
        return userAgent.contains("iPhone") || userAgent.contains("iPad")
    }
}

extension MitID {
    /// The MitID app's universal-link host (Idura's app detection names it).
    public static let appSwitchHost = "appswitch.mitid.nets.eu"
}

/// The acr the Singpass profile reports.
public enum Singpass {
    public static let acr = "urn:singpass:authentication:loa:2"
}

/// The level of assurance Swedish BankID brokers report.
public enum BankIDSweden {
    public static let loa3ACR = "http://id.elegnamnden.se/loa/1.0/loa3"
}

/// The level of assurance MitID brokers report.
public enum MitID {
    public static let substantialACR = "https://data.gov.dk/concept/core/nsis/loa/Substantial"
}

/// Norwegian BankID's acr values.
public enum BankIDNorway {
    /// BankID (`acr_values=urn:bankid:bid`, the default): the ID token's acr.
    public static let bidACR = "urn:bankid:bid;LOA=4"
    /// BankID with biometrics (`acr_values=urn:bankid:bis`): the ID token's acr.
    public static let bisACR = "urn:bankid:bis;LOA=3"
    /// The `acr_values` that select each method (without the LOA suffix the ID token carries).
    public static let bidRequest = "urn:bankid:bid"
    public static let bisRequest = "urn:bankid:bis"
}

extension UAEPassOptions {
    /// The acr UAE Pass reports when the user approved in the app on the same device.
    public static let onDeviceACR = "urn:digitalid:authentication:flow:mobileondevice"
    /// The acr of the web sign-in.
    public static let webACR = "urn:safelayer:tws:policies:authentication:level:low"
    /// The scope every documented request asks for, which the profile claims (`userType`, names, …) come
    /// with (UAE Pass, "Obtaining the OAuth2 access code"); visitor flows add the other two.
    public static let profileScope = "urn:uae:digitalid:profile:general"
}
